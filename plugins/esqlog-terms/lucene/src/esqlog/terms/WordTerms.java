package esqlog.terms;

import java.io.IOException;
import java.util.Arrays;
import java.util.List;

import org.apache.lucene.index.NumericDocValues;
import org.apache.lucene.index.PostingsEnum;
import org.apache.lucene.index.TermState;
import org.apache.lucene.index.Terms;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.util.BytesRef;

/**
 * One word's whole group in one segment: the word's own term and every compound of its list,
 * merged into one sorted list of (doc, summed tf) with each document's norm, read once and
 * then served as the postings (with exact impacts) of a single term, the group's
 * {@link WholeWordQuery}.
 *
 * <p>Why: with the clause budget each query chooses a different few of a word's compounds, so
 * its groups seldom recur and each costs a seek and a read per compound; a word's whole group
 * is the same in every query that names the word, so a segment's list of it can be kept
 * ({@link WordPostings}) and a word named again costs one map lookup. The summed tf per
 * document is the sum Lucene's SynonymQuery makes over the same terms, so the scores are the
 * same as that query's.
 */
final class WordTerms extends TermState {
    /** Estimated bytes of an entry beyond its arrays: the object, its arrays' headers. */
    static final long OVERHEAD = 96;
    private final int[] docs;
    private final int[] freqs;
    /**
     * Each document's norm, for a group that keeps no impacts (whose queries compute them);
     * null where the impacts are kept: nothing else reads a group's norms (the scorer reads
     * the segment's own).
     */
    private final long[] norms;
    private final long totalTermFreq;
    private final int maxDoc;
    /** The list's impacts where they take fewer bytes than its norms; else null. */
    private final RareImpacts impacts;

    /**
     * A group keeps its exact impacts, computed once here, and lets its norms go, wherever
     * they take fewer bytes than the norms (8 a document): all but groups of a few dozen
     * documents. A query scoring a group without them computes them again, each time, a pass
     * over the list and 4 KB of scratch arrays a window (3.4% of the search threads' samples
     * on Go 153K, 3 shards, warmed, when only groups of 1,024 documents or more kept them);
     * kept, they are read only, shared by every query and thread.
     */
    private WordTerms(int[] docs, int[] freqs, long[] norms, long totalTermFreq, int maxDoc) {
        this.docs = docs;
        this.freqs = freqs;
        this.totalTermFreq = totalTermFreq;
        this.maxDoc = maxDoc;
        RareImpacts computed = new RareImpacts(docs, freqs, norms, docs.length, maxDoc);
        this.impacts = computed.bytes() < 8L * docs.length ? computed : null;
        this.norms = impacts == null ? norms : null;
    }

    /**
     * The merged postings of {@code terms} (each at most once) in a segment whose {@code field}
     * has {@code segmentTerms} and {@code norms}: the documents holding any of them, each with
     * their summed frequency. The terms are sought in the dictionary's order ({@link
     * #inIndexOrder}): a seek then starts from the blocks the previous one left, which the
     * list's order (most frequent first) scatters.
     */
    static WordTerms read(List<BytesRef> terms, Terms segmentTerms, NumericDocValues norms,
                          int maxDoc) throws IOException {
        TermsEnum segment = segmentTerms.iterator();
        MergedPostings merged = new MergedPostings(16);
        PostingsEnum reuse = null;
        for (BytesRef term : terms) {
            if (segment.seekExact(term)) {
                reuse = segment.postings(reuse, PostingsEnum.FREQS);
                merged.add(reuse);
            }
        }
        merged.merge();
        int size = merged.size;
        int[] docs = Arrays.copyOf(merged.docs, size);
        int[] freqs = Arrays.copyOf(merged.freqs, size);
        return new WordTerms(docs, freqs, RareImpacts.norms(norms, docs, size),
            merged.totalTermFreq(), maxDoc);
    }

    /** {@code terms} sorted as a terms dictionary holds them (unsigned bytes). */
    static List<BytesRef> inIndexOrder(List<BytesRef> terms) {
        BytesRef[] sorted = terms.toArray(new BytesRef[0]);
        Arrays.sort(sorted);
        return Arrays.asList(sorted);
    }

    /** The documents of the group in this segment. */
    int docFreq() {
        return docs.length;
    }

    long totalTermFreq() {
        return totalTermFreq;
    }

    /**
     * Estimated heap bytes: a doc and a tf per document, and the kept impacts or (a group of
     * a few documents) its norms.
     */
    long bytes() {
        return OVERHEAD + 8L * docs.length + (impacts == null ? 8L * docs.length
            : impacts.bytes());
    }

    /** The list as postings, with its exact impacts when {@code withImpacts}. */
    RareList postings(int flags, boolean withImpacts) {
        if (PostingsEnum.featureRequested(flags, PostingsEnum.POSITIONS)) {
            throw new UnsupportedOperationException("a whole word's group holds no positions");
        }
        return new RareList(docs, freqs, docs.length, norms, impacts, withImpacts, maxDoc);
    }

    @Override
    public void copyFrom(TermState other) {
        throw new UnsupportedOperationException("a whole word's state is shared, never copied");
    }

    @Override
    public TermState clone() {
        return this;  // immutable
    }

    @Override
    public String toString() {
        return "WordTerms(docFreq=" + docs.length + ")";
    }
}
