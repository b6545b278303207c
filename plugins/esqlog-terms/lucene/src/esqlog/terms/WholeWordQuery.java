package esqlog.terms;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

import org.apache.lucene.index.FilterLeafReader;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.Term;
import org.apache.lucene.index.TermStates;
import org.apache.lucene.index.Terms;
import org.apache.lucene.search.Explanation;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Matches;
import org.apache.lucene.search.MatchesUtils;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.QueryVisitor;
import org.apache.lucene.search.ScoreMode;
import org.apache.lucene.search.Scorer;
import org.apache.lucene.search.ScorerSupplier;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.Weight;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.search.similarities.PerFieldSimilarityWrapper;
import org.apache.lucene.search.similarities.Similarity;
import org.apache.lucene.util.BytesRef;

/**
 * One word's whole group ({@link WordPlan.Whole}: its own term and every compound of its
 * list) scored as Lucene's SynonymQuery over those terms would score it without idf ({@link
 * SaturationQuery}): {@code boost * saturation(summed tf)}, but from one list per segment, read
 * once and kept ({@link WordTerms}, {@link WordPostings}), so that a word named again costs a
 * map lookup instead of a seek and a postings read per compound (thousands for a common word).
 *
 * <p>How: the group is a TermQuery of one made-up term (0xFE, no UTF-8 term's first byte)
 * whose per-segment states are the merged lists, registered beforehand, scored on the rare view
 * of the segments ({@link CachedTermsView}), which serves such a state's postings and impacts.
 * So Lucene's own TermWeight scores it, with block-max skipping from the list's exact impacts.
 *
 * <p>Bounded: a group the cache does not keep serves this query only, and the groups one query
 * reads outside the cache may take at most {@link #UNCACHED_BYTES}; a word whose group would
 * pass that is scored from its terms' own postings instead ({@link SaturationQuery}, the same
 * scores, nothing held past the query), so the node's heap never pays for a query's groups
 * and the query still answers.
 */
public final class WholeWordQuery extends Query {
    /** Bytes of groups read outside the cache one query may hold. */
    static final long UNCACHED_BYTES = 64L << 20;
    private static final byte MARK = (byte) 0xFE;

    private final String field;
    private final String lists;
    private final WordPlan.Whole whole;
    private final Function<Similarity, float[]> bm25;
    /** The bytes of groups this query read and the cache did not keep (shared by its words). */
    private final AtomicLong uncached;
    private final long uncachedLimit;
    private final String key;
    private volatile List<BytesRef> sortedTerms;

    WholeWordQuery(String field, String lists, WordPlan.Whole whole,
                   Function<Similarity, float[]> bm25, AtomicLong uncached) {
        this(field, lists, whole, bm25, uncached, UNCACHED_BYTES);
    }

    /** {@code uncachedLimit}: the bytes its query's groups may take outside the cache. */
    WholeWordQuery(String field, String lists, WordPlan.Whole whole,
                   Function<Similarity, float[]> bm25, AtomicLong uncached,
                   long uncachedLimit) {
        this.uncachedLimit = uncachedLimit;
        this.field = Objects.requireNonNull(field);
        this.lists = Objects.requireNonNull(lists);
        this.whole = Objects.requireNonNull(whole);
        this.bm25 = Objects.requireNonNull(bm25);
        this.uncached = Objects.requireNonNull(uncached);
        this.key = field + '\u0000' + lists + '\u0000' + whole.word() + '\u0000'
            + (whole.own() ? 1 : 0) + '\u0000' + whole.head();
    }

    /** The made-up term the group scores as: never a real term of a UTF-8 field. */
    private BytesRef term() {
        byte[] text = key.getBytes(StandardCharsets.UTF_8);
        byte[] out = new byte[text.length + 1];
        out[0] = MARK;
        System.arraycopy(text, 0, out, 1, text.length);
        return new BytesRef(out);
    }

    /**
     * The group's terms as the dictionary orders them, made at the first segment that reads
     * the group (a kept group needs none: most words of most queries). Computed again by a
     * thread that races another here, to the same value.
     */
    private List<BytesRef> terms() {
        List<BytesRef> out = sortedTerms;
        if (out == null) {
            out = WordTerms.inIndexOrder(SaturationQuery.encoded(whole.terms()));
            sortedTerms = out;
        }
        return out;
    }

    /** A group the cache did not keep took this query past its bound outside the cache. */
    private static final class OverBound extends Exception {
        OverBound() {
            super(null, null, false, false);
        }
    }

    /**
     * The group in one segment: kept, else read (and offered to the cache); OverBound when
     * the query's groups read outside the cache would pass its bound.
     */
    private WordTerms group(LeafReader leaf) throws IOException, OverBound {
        WordPostings cache = WordPostings.shared();
        IndexReader.CacheHelper core = leaf.getCoreCacheHelper();
        WordTerms found = cache.get(core, key);
        if (found != null) {
            return found;
        }
        Terms segment = leaf.terms(field);
        if (segment == null) {
            return null;
        }
        long started = System.nanoTime();
        WordTerms read = WordTerms.read(terms(), segment, leaf.getNormValues(field),
            leaf.maxDoc());
        cache.read(System.nanoTime() - started);
        if (!cache.put(core, key, read) && uncached.addAndGet(read.bytes()) > uncachedLimit) {
            uncached.addAndGet(-read.bytes());  // garbage now: the word falls back
            throw new OverBound();
        }
        return read;
    }

    @Override
    public Weight createWeight(IndexSearcher searcher, ScoreMode scoreMode, float boost)
            throws IOException {
        Similarity similarity = searcher.getSimilarity();
        if (similarity instanceof PerFieldSimilarityWrapper perField) {
            similarity = perField.get(field);
        }
        float[] params = bm25.apply(similarity);
        if (params == null && scoreMode.needsScores()) {
            throw new IllegalArgumentException("[esqlog_identifiers] needs a BM25 similarity on ["
                + field + "], which has " + similarity);
        }
        IndexReader view = CachedTermsView.of(searcher, field, TermStateCache.shared(), true);
        IndexSearcher viewSearcher = new SaturationQuery.UnitIdfSearcher(view, searcher);
        viewSearcher.setSimilarity(params == null ? new BM25Similarity()
            : new SaturationQuery.UnitIdfBM25(params[0], params[1], params[2]));
        TermStates states = new TermStates(viewSearcher.getTopReaderContext());
        try {
            for (LeafReaderContext leaf : viewSearcher.getTopReaderContext().leaves()) {
                WordTerms group = group(FilterLeafReader.unwrap(leaf.reader()));
                if (group != null && group.docFreq() > 0) {
                    states.register(group, leaf.ord, group.docFreq(), group.totalTermFreq());
                }
            }
        } catch (OverBound over) {  // the same scores from the terms' own postings, unkept
            return SaturationQuery.of(field, SaturationQuery.encoded(whole.terms()), false, bm25)
                .createWeight(searcher, scoreMode, boost);
        }
        Weight inner = new TermQuery(new Term(field, term()), states)
            .createWeight(viewSearcher, scoreMode, boost);
        return new WholeWeight(this, inner, viewSearcher.getTopReaderContext().leaves());
    }

    /** The term weight over the view's leaves, handed the view's leaf of each engine leaf. */
    private final class WholeWeight extends SupplierWeight {
        private final List<LeafReaderContext> leaves;

        WholeWeight(Query query, Weight inner, List<LeafReaderContext> leaves) {
            super(query, inner);
            this.leaves = leaves;
        }

        private LeafReaderContext view(LeafReaderContext context) {
            LeafReaderContext view = RareGroupWeight.viewOf(leaves, context);
            if (view == null) {
                throw new IllegalStateException("[esqlog_identifiers] select all scores the "
                    + "segments of the searcher it was made for only");
            }
            return view;
        }

        @Override
        public ScorerSupplier scorerSupplier(LeafReaderContext context) throws IOException {
            return in.scorerSupplier(view(context));
        }

        @Override
        public Explanation explain(LeafReaderContext context, int doc) throws IOException {
            Explanation inner = in.explain(view(context), doc);
            String what = "[" + whole.word() + "]" + (whole.own() ? " and" : "")
                + " its compounds (" + whole.head() + " listed) as one group, no idf";
            return inner.isMatch() ? Explanation.match(inner.getValue(), what, inner)
                : Explanation.noMatch("no " + what);
        }

        @Override
        public Matches matches(LeafReaderContext context, int doc) throws IOException {
            ScorerSupplier supplier = scorerSupplier(context);  // no positions: the hit alone
            if (supplier == null) {
                return null;
            }
            Scorer scorer = supplier.get(1);
            return scorer.iterator().advance(doc) == doc ? MatchesUtils.MATCH_WITH_NO_TERMS
                : null;
        }

        @Override
        public int count(LeafReaderContext context) {
            return -1;
        }

        @Override
        public boolean isCacheable(LeafReaderContext context) {
            return false;
        }
    }

    @Override
    public void visit(QueryVisitor visitor) {
        if (!visitor.acceptField(field)) {
            return;
        }
        if (whole.own()) {  // highlighters see the word itself (its compounds: one clause)
            visitor.consumeTerms(this, new Term(field, whole.word()));
        } else {
            visitor.visitLeaf(this);
        }
    }

    @Override
    public String toString(String defaultField) {
        return "whole(" + (field.equals(defaultField) ? "" : field + ":") + whole.word()
            + (whole.own() ? "" : " (compounds only)") + ", " + whole.head() + " listed)";
    }

    @Override
    public boolean equals(Object other) {
        return sameClassAs(other) && key.equals(((WholeWordQuery) other).key)
            && bm25.equals(((WholeWordQuery) other).bm25);
    }

    @Override
    public int hashCode() {
        return 31 * classHash() + key.hashCode();
    }
}
