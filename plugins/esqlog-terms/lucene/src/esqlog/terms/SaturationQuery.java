package esqlog.terms;

import java.io.IOException;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.CollectionStatistics;
import org.apache.lucene.search.Explanation;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.QueryVisitor;
import org.apache.lucene.search.ScoreMode;
import org.apache.lucene.search.TermStatistics;
import org.apache.lucene.search.Weight;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.search.similarities.PerFieldSimilarityWrapper;
import org.apache.lucene.search.similarities.Similarity;
import org.apache.lucene.search.similarities.Similarity.SimScorer;
import org.apache.lucene.util.BytesRef;

/**
 * Scores its inner term or synonym query with the field's own BM25 saturation and length norm,
 * but with the idf left out: {@code boost * saturation(summed tf)}.
 *
 * <p>Why: the caller already knows each group's weight from statistics of its own (the split
 * stream's df), so any idf the engine adds has to be divided out again with a boost computed from
 * the scoring shard's statistics; that made one request per shard (or a dfs phase) necessary.
 * Without the idf, one plain query scores every shard exactly, with no statistics at all.
 *
 * <p>Engine-neutral Lucene code, compiled into both engines' plugins: each engine passes the
 * function that reads (k1, b, the factor its BM25 multiplies the weight by) from the field's
 * similarity, or null for a similarity that is no BM25, and its own {@link Weights} (the two
 * engines' Lucene versions differ in the Weight and Scorer API): a group of several terms is
 * scored from their postings read once into doc order (SaturationLeaf), one term by its own
 * TermQuery (impacts, so the top-level query can skip).
 */
public final class SaturationQuery extends Query {
    /** The engine's Weight over SaturationLeaf for one group of several terms. */
    @FunctionalInterface
    public interface Weights {
        Weight create(Query query, String field, List<BytesRef> terms, SimScorer sim);
    }

    private final Query inner;
    private final String field;
    private final List<BytesRef> terms;
    private final Function<Similarity, float[]> bm25;
    private final Weights weights;

    public SaturationQuery(Query inner, String field, List<BytesRef> terms,
                           Function<Similarity, float[]> bm25, Weights weights) {
        this.inner = Objects.requireNonNull(inner);
        this.field = Objects.requireNonNull(field);
        this.terms = List.copyOf(terms);
        this.bm25 = Objects.requireNonNull(bm25);
        this.weights = Objects.requireNonNull(weights);
    }

    /** (k1, b, 1) of Lucene's BM25Similarity, else null. */
    public static float[] luceneBm25(Similarity similarity) {
        if (similarity instanceof BM25Similarity sim) {
            return new float[] {sim.getK1(), sim.getB(), 1f};
        }
        return null;
    }

    @Override
    public Query rewrite(IndexSearcher searcher) throws IOException {
        Query rewritten = inner.rewrite(searcher);
        return rewritten == inner ? this
            : new SaturationQuery(rewritten, field, terms, bm25, weights);
    }

    @Override
    public Weight createWeight(IndexSearcher searcher, ScoreMode scoreMode, float boost)
            throws IOException {
        if (!scoreMode.needsScores()) {
            return inner.createWeight(searcher, scoreMode, boost);
        }
        Similarity similarity = searcher.getSimilarity();
        if (similarity instanceof PerFieldSimilarityWrapper perField) {
            similarity = perField.get(field);
        }
        float[] params = bm25.apply(similarity);
        if (params == null) {
            throw new IllegalArgumentException("[esqlog_terms] with idf false needs a BM25 "
                + "similarity on [" + field + "], which has " + similarity);
        }
        // the same reader (so the same leaves), scored by the same BM25 without its idf
        IndexSearcher view = new IndexSearcher(searcher.getIndexReader());
        view.setQueryCache(null);
        UnitIdfBM25 unit = new UnitIdfBM25(params[0], params[1], params[2]);
        view.setSimilarity(unit);
        CollectionStatistics collection = view.collectionStatistics(field);
        if (terms.size() < 2 || collection == null) {  // one term, or no document has the field
            return inner.createWeight(view, scoreMode, boost);
        }
        // the idf is a constant, so any term statistics give the same scorer
        SimScorer sim = unit.scorer(boost, collection, new TermStatistics(terms.get(0), 1, 1));
        return weights.create(this, field, terms, sim);
    }

    @Override
    public void visit(QueryVisitor visitor) {
        inner.visit(visitor.getSubVisitor(BooleanClause.Occur.MUST, this));
    }

    @Override
    public String toString(String defaultField) {
        return "saturation(" + inner.toString(defaultField) + ")";
    }

    @Override
    public boolean equals(Object other) {
        return sameClassAs(other) && inner.equals(((SaturationQuery) other).inner)
            && field.equals(((SaturationQuery) other).field)
            && terms.equals(((SaturationQuery) other).terms)
            && bm25.equals(((SaturationQuery) other).bm25);
    }

    @Override
    public int hashCode() {
        return Objects.hash(classHash(), inner, field, terms);
    }

    /** BM25 whose idf is a constant: 1, or the factor the engine's BM25 multiplies by. */
    static final class UnitIdfBM25 extends BM25Similarity {
        private final float factor;

        UnitIdfBM25(float k1, float b, float factor) {
            super(k1, b);
            this.factor = factor;
        }

        @Override
        public Explanation idfExplain(CollectionStatistics collection, TermStatistics term) {
            return Explanation.match(factor, "idf left out by esqlog_terms (idf: false)");
        }

        @Override
        public Explanation idfExplain(CollectionStatistics collection, TermStatistics[] terms) {
            return Explanation.match(factor, "idf left out by esqlog_terms (idf: false)");
        }
    }
}
