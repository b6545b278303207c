package esqlog.terms;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import org.apache.lucene.index.FilterLeafReader;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.search.Explanation;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Matches;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreMode;
import org.apache.lucene.search.ScorerSupplier;
import org.apache.lucene.search.Weight;
import org.apache.lucene.search.similarities.Similarity;
import org.apache.lucene.util.BytesRef;

/**
 * A group of several terms scored as Lucene's SynonymQuery over its terms plus its rare-terms
 * key ({@link RareTerms}), through the rare view of the engine's segments, in which the rare
 * terms answer as absent and the key as all of them read at once: the same summed tf, so the
 * same scores, for far fewer postings enums and sub-iterators.
 *
 * <p>The synonym weight reads its postings from the leaf it is handed, so each of the engine's
 * leaves is swapped for the view's leaf of the same ord (in scorerSupplier, which every
 * scorer comes from: SupplierWeight, one class per Lucene range) (the same segment, so the same doc ids
 * and norms). A leaf of another reader (none in the engines' search paths) is scored by the
 * plain synonym weight, as are explanations (term by term, the same score) and matches
 * (highlighting reads positions, which the key lacks).
 */
final class RareGroupWeight extends SupplierWeight {
    private final List<LeafReaderContext> leaves;
    private final IndexSearcher plainView;
    private final Query plain;
    private final ScoreMode scoreMode;
    private final float boost;
    private Weight plainWeight;

    private RareGroupWeight(Query query, Weight grouped, List<LeafReaderContext> leaves,
                            IndexSearcher plainView, Query plain, ScoreMode scoreMode,
                            float boost) {
        super(query, grouped);
        this.leaves = leaves;
        this.plainView = plainView;
        this.plain = plain;
        this.scoreMode = scoreMode;
        this.boost = boost;
    }

    static Weight create(Query query, IndexSearcher searcher, String field, List<BytesRef> terms,
                         TermStateCache cache, ScoreMode scoreMode, float boost,
                         Similarity similarity) throws IOException {
        IndexReader rare = CachedTermsView.of(searcher, field, cache, true);
        IndexSearcher view = new SaturationQuery.UnitIdfSearcher(rare, searcher);
        view.setSimilarity(similarity);
        List<BytesRef> withKey = new ArrayList<>(terms);
        withKey.add(RareTerms.key(terms));
        Weight grouped = SaturationQuery.synonym(field, withKey).createWeight(view, scoreMode,
            boost);
        IndexSearcher plainView = new SaturationQuery.UnitIdfSearcher(
            CachedTermsView.of(searcher, field, cache), searcher);
        plainView.setSimilarity(similarity);
        return new RareGroupWeight(query, grouped, rare.leaves(), plainView,
            SaturationQuery.synonym(field, terms), scoreMode, boost);
    }

    /** The view's leaf for the engine's {@code context}, or null if it is of another reader. */
    private LeafReaderContext viewOf(LeafReaderContext context) {
        return viewOf(leaves, context);
    }

    /** The leaf of {@code leaves} (a view's) for the engine's {@code context}, or null. */
    static LeafReaderContext viewOf(List<LeafReaderContext> leaves, LeafReaderContext context) {
        if (context.ord >= leaves.size()) {
            return null;
        }
        LeafReaderContext view = leaves.get(context.ord);
        if (view.reader() instanceof FilterLeafReader leaf && leaf.getDelegate() == context.reader()) {
            return view;
        }
        // the engine may hand a leaf wrapped anew (cancellation, profiling): the same segment
        // core has the same postings and norms, and live docs are the engine leaf's business
        IndexReader.CacheHelper core = context.reader().getCoreCacheHelper();
        IndexReader.CacheHelper ours = view.reader().getCoreCacheHelper();
        return core != null && ours != null && core.getKey() == ours.getKey() ? view : null;
    }

    private synchronized Weight plainWeight() throws IOException {
        if (plainWeight == null) {
            plainWeight = plain.createWeight(plainView, scoreMode, boost);
        }
        return plainWeight;
    }

    @Override
    public ScorerSupplier scorerSupplier(LeafReaderContext context) throws IOException {
        LeafReaderContext view = viewOf(context);
        return view != null ? in.scorerSupplier(view) : plainWeight().scorerSupplier(context);
    }

    @Override
    public Explanation explain(LeafReaderContext context, int doc) throws IOException {
        return plainWeight().explain(context, doc);  // the same score, told term by term
    }

    @Override
    public int count(LeafReaderContext context) throws IOException {
        return -1;
    }

    @Override
    public Matches matches(LeafReaderContext context, int doc) throws IOException {
        return plainWeight().matches(context, doc);
    }

    @Override
    public boolean isCacheable(LeafReaderContext context) {
        return false;
    }
}
