package esqlog.terms;

import java.io.IOException;
import java.util.Arrays;

import org.apache.lucene.index.ImpactsEnum;
import org.apache.lucene.index.NumericDocValues;
import org.apache.lucene.util.BytesRef;

/**
 * A group's rare terms in one segment as one sorted list of (doc, summed tf) ({@link
 * RareTerms#postings}), iterated as postings with frequencies only and, when the engine
 * collects the top hits, with the list's exact impacts ({@link RareImpacts}), so that the
 * group's merged impacts let the engine skip the blocks where the list holds nothing
 * competitive.
 */
final class RareList extends ImpactsEnum {
    private final int[] docs;
    private final int[] freqs;
    private final int size;
    /** The segment's norms of the field, read when impacts are first asked; null: no impacts. */
    private final NumericDocValues norms;
    private final boolean withImpacts;
    private int at = -1;
    private int doc = -1;
    /** The largest target of advanceShallow: the impacts are of the list from there on. */
    private int shallow = -1;
    private PositionedImpacts impacts;

    private final int maxDoc;
    /** The norms of {@code docs}, when known beforehand (a cached word key's list). */
    private final long[] knownNorms;

    RareList(int[] docs, int[] freqs, int size, NumericDocValues norms, boolean withImpacts,
             int maxDoc) {
        this(docs, freqs, size, norms, null, null, withImpacts, maxDoc);
    }

    /** {@code known}: the list's impacts, computed beforehand (a kept group's), or null. */
    RareList(int[] docs, int[] freqs, int size, long[] knownNorms, RareImpacts known,
             boolean withImpacts, int maxDoc) {
        this(docs, freqs, size, null, knownNorms, known, withImpacts, maxDoc);
    }

    private RareList(int[] docs, int[] freqs, int size, NumericDocValues norms,
                     long[] knownNorms, RareImpacts known, boolean withImpacts, int maxDoc) {
        this.knownNorms = knownNorms;
        this.impacts = known == null ? null : new LevelImpacts(known);
        this.maxDoc = maxDoc;
        this.docs = docs;
        this.freqs = freqs;
        this.size = size;
        this.norms = norms;
        this.withImpacts = withImpacts;
    }

    @Override
    public int docID() {
        return doc;
    }

    @Override
    public int nextDoc() {
        at++;
        doc = at < size ? docs[at] : NO_MORE_DOCS;
        return doc;
    }

    /**
     * Galloping from the current entry, then a binary search within the last step: the
     * engine advances a list to documents just ahead (a clause that is not essential to the
     * top hits is asked for each candidate), where a binary search over the whole rest of
     * the list took 5% of the search threads' samples (Go 153K, select all).
     */
    @Override
    public int advance(int target) {
        if (at >= size) {
            return doc;
        }
        int low = at + 1;
        int step = 1;
        while (low + step < size && docs[low + step] < target) {
            low += step;
            step <<= 1;
        }
        int found = Arrays.binarySearch(docs, low, Math.min(low + step, size), target);
        at = found >= 0 ? found : -found - 1;
        doc = at < size ? docs[at] : NO_MORE_DOCS;
        return doc;
    }

    @Override
    public long cost() {
        return size;
    }

    @Override
    public int freq() {
        return freqs[at];
    }

    @Override
    public int nextPosition() {
        return -1;
    }

    @Override
    public int startOffset() {
        return -1;
    }

    @Override
    public int endOffset() {
        return -1;
    }

    @Override
    public BytesRef getPayload() {
        return null;
    }

    @Override
    public void advanceShallow(int target) {
        shallow = Math.max(shallow, target);
    }

    /**
     * The impacts of the windows that hold the current doc or the last shallow target,
     * whichever is later (the segment's last window once past them all).
     */
    @Override
    public PositionedImpacts getImpacts() throws IOException {
        if (!withImpacts) {
            throw new UnsupportedOperationException("postings read without impacts");
        }
        if (impacts == null) {
            impacts = new LevelImpacts(new RareImpacts(docs, freqs, knownNorms != null
                ? knownNorms : RareImpacts.norms(norms, docs, size), size, maxDoc));
        }
        return impacts.at(Math.max(shallow, doc));
    }
}
