package esqlog.terms;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

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
 * TermQuery (impacts, so the top-level query can skip). {@link #of} builds every group.
 */
public final class SaturationQuery extends Query {
    /** The engine's Weight over SaturationLeaf for one group of several terms. */
    @FunctionalInterface
    public interface Weights {
        Weight create(Query query, String field, List<BytesRef> terms, SimScorer sim);
    }

    /** One term's TermQuery (scored with impacts); null for several terms (SaturationLeaf). */
    private final Query single;
    private final String field;
    private final List<BytesRef> terms;
    private final Function<Similarity, float[]> bm25;
    private final Weights weights;
    private int hash;  // 0: not computed yet (racy but idempotent, as String's)
    private int[] termHashes;
    private Term[] visited;  // the terms as a visitor takes them, built once

    private SaturationQuery(Query single, String field, List<BytesRef> terms,
                            Function<Similarity, float[]> bm25, Weights weights) {
        this.single = single;
        this.field = Objects.requireNonNull(field);
        this.terms = List.copyOf(terms);
        this.bm25 = Objects.requireNonNull(bm25);
        this.weights = Objects.requireNonNull(weights);
    }

    /**
     * The Lucene query of one {@code esqlog_terms} group on the engine's field: with its idf,
     * a TermQuery or a SynonymQuery; without, this query over them (both engines' builders
     * call it, with their BM25 reader and their Weights).
     *
     * <p>Why the terms come as bytes and no SynonymQuery is built for a group scored without
     * its idf: the query is built anew on every shard of every search, and for ~300 terms
     * the string-to-bytes encoding, the synonym query's sorting and its hashing were a fifth
     * of the engine's time (a profile of the identifiers query on 3 shards); the synonym
     * query is now built only where a filter needs one (a non-scoring use).
     */
    public static Query of(String field, List<BytesRef> terms, boolean idf,
                           Function<Similarity, float[]> bm25, Weights weights) {
        if (terms.size() == 1) {
            Query term = new TermQuery(new Term(field, terms.get(0)));
            return idf ? term : new SaturationQuery(term, field, terms, bm25, weights);
        }
        return idf ? synonym(field, terms) : new SaturationQuery(null, field, terms, bm25, weights);
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

    private static Query synonym(String field, List<BytesRef> terms) {
        SynonymQuery.Builder builder = new SynonymQuery.Builder(field);
        for (BytesRef term : terms) {
            builder.addTerm(new Term(field, term));
        }
        return builder.build();
    }

    /** Each term's hash, computed once per query: the postings cache's lookups use them. */
    int[] termHashes() {
        int[] hashes = termHashes;
        if (hashes == null) {
            hashes = new int[terms.size()];
            for (int i = 0; i < hashes.length; i++) {
                hashes[i] = terms.get(i).hashCode();
            }
            termHashes = hashes;
        }
        return hashes;
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
        Query rewritten = single == null ? null : single.rewrite(searcher);
        return rewritten == single ? this
            : new SaturationQuery(rewritten, field, terms, bm25, weights);
    }

    @Override
    public Weight createWeight(IndexSearcher searcher, ScoreMode scoreMode, float boost)
            throws IOException {
        if (!scoreMode.needsScores()) {  // a filter: the same match set, no score
            Query match = single != null ? single : synonym(field, terms);
            return match.createWeight(searcher, scoreMode, boost);
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
        if (single != null || collection == null) {  // one term, or no document has the field
            Query match = single != null ? single : synonym(field, terms);
            return match.createWeight(view, scoreMode, boost);
        }
        // the idf is a constant, so any term statistics give the same scorer
        SimScorer sim = unit.scorer(boost, collection, new TermStatistics(terms.get(0), 1, 1));
        return weights.create(this, field, terms, sim);
    }

    @Override
    public void visit(QueryVisitor visitor) {
        QueryVisitor inner = visitor.getSubVisitor(BooleanClause.Occur.MUST, this);
        if (single != null) {
            single.visit(inner);
        } else if (inner.acceptField(field)) {  // as the synonym query visits its terms
            Term[] each = visited;
            if (each == null) {
                each = new Term[terms.size()];
                for (int i = 0; i < each.length; i++) {
                    each[i] = new Term(field, terms.get(i));
                }
                visited = each;
            }
            inner.getSubVisitor(BooleanClause.Occur.SHOULD, this).consumeTerms(this, each.clone());
        }
    }

    @Override
    public String toString(String defaultField) {
        Query shown = single != null ? single : synonym(field, terms);
        return "saturation(" + shown.toString(defaultField) + ")";
    }

    @Override
    public boolean equals(Object other) {
        return sameClassAs(other) && field.equals(((SaturationQuery) other).field)
            && terms.equals(((SaturationQuery) other).terms)
            && bm25.equals(((SaturationQuery) other).bm25)
            && (single == null) == (((SaturationQuery) other).single == null);
    }

    @Override
    public int hashCode() {
        int h = hash;
        if (h == 0) {  // the query is hashed by every BooleanQuery that holds it
            h = Objects.hash(classHash(), field, terms, single == null);
            hash = h;
        }
        return h;
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
