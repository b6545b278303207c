package esqlog.terms;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.CollectionStatistics;
import org.apache.lucene.search.Explanation;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.QueryVisitor;
import org.apache.lucene.search.ScoreMode;
import org.apache.lucene.search.SynonymQuery;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TermStatistics;
import org.apache.lucene.search.Weight;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.search.similarities.PerFieldSimilarityWrapper;
import org.apache.lucene.search.similarities.Similarity;
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
 * <p>Why Lucene's own TermQuery and SynonymQuery do the scoring (through a searcher whose BM25
 * has a constant idf): they read postings lazily, a disjunction over the group's postings that
 * sums the tf per document, so a request holds a few postings buffers per term and nothing
 * proportional to the segment's documents (reading each group into doc-ordered arrays once
 * took 8 bytes per document per group and one request of many groups ended the node with an
 * OutOfMemoryError); and they expose impacts (a synonym query merges its terms'), so top-k
 * collection skips blocks that cannot compete (block-max WAND, MaxScore). The field
 * statistics (avgdl) come from the engine's searcher, so under dfs_query_then_fetch they are
 * the dfs phase's, as for the engine's own queries.
 *
 * <p>Engine-neutral Lucene code, compiled into both engines' plugins against Lucene 9.12 and
 * 10.x alike: each engine passes the function that reads (k1, b, the factor its BM25 multiplies
 * the weight by) from the field's similarity, or null for a similarity that is no BM25.
 */
public final class SaturationQuery extends Query {
    /** A TermQuery for one term, else a SynonymQuery (its terms sorted: order-free equals). */
    private final Query inner;
    /** The group's terms, for the cached path (which always scores them as a SynonymQuery). */
    private final List<BytesRef> terms;
    private final String field;
    private final Function<Similarity, float[]> bm25;
    private final int hash;

    private SaturationQuery(Query inner, List<BytesRef> terms, String field,
                            Function<Similarity, float[]> bm25) {
        this.inner = Objects.requireNonNull(inner);
        this.terms = List.copyOf(terms);
        this.field = Objects.requireNonNull(field);
        this.bm25 = Objects.requireNonNull(bm25);
        this.hash = 31 * classHash() + inner.hashCode();
    }

    /**
     * The Lucene query of one {@code esqlog_terms} group on the engine's field: with its idf,
     * a TermQuery or a SynonymQuery; without, this query over them (both engines' builders
     * call it with their BM25 reader).
     */
    public static Query of(String field, List<BytesRef> terms, boolean idf,
                           Function<Similarity, float[]> bm25) {
        Query inner = terms.size() == 1 ? new TermQuery(new Term(field, terms.get(0)))
            : synonym(field, terms);
        return idf ? inner : new SaturationQuery(inner, terms, field, bm25);
    }

    /** The terms as the index holds them (UTF-8): what {@link #of} takes, encoded once per
     * request by each engine's query builder rather than on every shard. */
    static List<BytesRef> encoded(List<String> terms) {
        List<BytesRef> out = new ArrayList<>(terms.size());
        for (String term : terms) {
            out.add(new BytesRef(term));
        }
        return List.copyOf(out);
    }

    static Query synonym(String field, List<BytesRef> terms) {
        SynonymQuery.Builder builder = new SynonymQuery.Builder(field);
        for (BytesRef term : terms) {
            builder.addTerm(new Term(field, term));
        }
        return builder.build();
    }

    /** (k1, b, 1) of Lucene's BM25Similarity, else null. */
    public static float[] luceneBm25(Similarity similarity) {
        if (similarity instanceof BM25Similarity sim) {
            return new float[] {sim.getK1(), sim.getB(), 1f};
        }
        return null;
    }

    @Override
    public Weight createWeight(IndexSearcher searcher, ScoreMode scoreMode, float boost)
            throws IOException {
        if (!scoreMode.needsScores()) {  // a filter: the same match set, no score
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
        TermStateCache cache = TermStateCache.shared();
        if (!cache.enabled()) {
            IndexSearcher view = new UnitIdfSearcher(searcher.getIndexReader(), searcher);
            view.setSimilarity(new UnitIdfBM25(params[0], params[1], params[2]));
            return inner.createWeight(view, scoreMode, boost);
        }
        if (terms.size() > 1) {  // rare terms read at once (RareGroupWeight)
            return RareGroupWeight.create(this, searcher, field, terms, cache, scoreMode, boost,
                new UnitIdfBM25(params[0], params[1], params[2]));
        }
        // The synonym weight takes its terms' states by leaf ord and applies them to the leaf it
        // scores, so states found through the cached view score the engine's own leaves. (A
        // TermWeight would assert it scores the reader it was built on: one term goes as a
        // synonym query of one term, whose score is the same.)
        IndexSearcher view = new UnitIdfSearcher(
            CachedTermsView.of(searcher, field, cache), searcher);
        view.setSimilarity(new UnitIdfBM25(params[0], params[1], params[2]));
        return synonym(field, terms).createWeight(view, scoreMode, boost);
    }

    /**
     * The engine searcher's reader (so the same leaves) and its field statistics (the dfs
     * phase's under dfs_query_then_fetch: avgdl as the engine's own queries see it), with its
     * own similarity and no query cache.
     */
    static final class UnitIdfSearcher extends IndexSearcher {
        private final IndexSearcher engine;

        UnitIdfSearcher(IndexReader reader, IndexSearcher engine) {
            super(reader);
            this.engine = engine;
            setQueryCache(null);
        }

        @Override
        public CollectionStatistics collectionStatistics(String field) throws IOException {
            return engine.collectionStatistics(field);
        }
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
            && bm25.equals(((SaturationQuery) other).bm25);
    }

    @Override
    public int hashCode() {
        return hash;
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
