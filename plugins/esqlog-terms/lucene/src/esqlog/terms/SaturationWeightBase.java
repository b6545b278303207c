package esqlog.terms;

import java.io.IOException;
import java.util.List;

import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.search.Explanation;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.Weight;
import org.apache.lucene.search.similarities.Similarity.SimScorer;
import org.apache.lucene.util.BytesRef;

/**
 * What both engines' SaturationWeight share: the group, its scorer, the segment's
 * SaturationLeaf and the explanation. Each engine's subclass only hands the leaf to a Scorer
 * (Lucene 9.12's {@code scorer} and {@code Scorer(Weight)}, Lucene 10.4's
 * {@code scorerSupplier} and {@code Scorer()}: the one API the two differ in here).
 */
abstract class SaturationWeightBase extends Weight {
    private final String field;
    private final List<BytesRef> terms;
    private final int[] hashes;
    private final SimScorer sim;

    SaturationWeightBase(Query query, String field, List<BytesRef> terms, SimScorer sim) {
        super(query);
        this.field = field;
        this.terms = terms;
        this.hashes = ((SaturationQuery) query).termHashes();  // its only creator
        this.sim = sim;
    }

    /** The group's matches in this segment with their summed tf, or null when none. */
    final SaturationLeaf leaf(LeafReaderContext context) throws IOException {
        return SaturationLeaf.read(context.reader(), field, terms, hashes, sim);
    }

    @Override
    public final Explanation explain(LeafReaderContext context, int doc) throws IOException {
        SaturationLeaf leaf = leaf(context);
        Explanation found = leaf == null ? null : leaf.explain(doc);
        return found != null ? found : Explanation.noMatch("no term of the group in the document");
    }

    @Override
    public final boolean isCacheable(LeafReaderContext context) {
        return true;
    }
}
