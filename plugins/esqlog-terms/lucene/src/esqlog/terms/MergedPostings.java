package esqlog.terms;

import java.io.IOException;
import java.util.Arrays;

import org.apache.lucene.index.PostingsEnum;
import org.apache.lucene.search.DocIdSetIterator;

/**
 * Several terms' postings in one segment merged into one doc-ordered list with each
 * document's summed tf: what a group's rare terms ({@link RareTerms}) and a word's whole group
 * ({@link WordTerms}) are read into, the sum Lucene's SynonymQuery makes over the same terms.
 * Each (doc, tf) is packed into one long (doc in the high half), so one sort of the longs
 * orders them by document.
 */
final class MergedPostings {
    private long[] packed;
    private int n;
    private long totalTermFreq;
    /** After {@link #merge}: the documents, ascending, and their summed tf; {@code size} used. */
    int[] docs;
    int[] freqs;
    int size;

    MergedPostings(int expected) {
        packed = new long[Math.max(8, expected)];
    }

    /** Every (doc, tf) of {@code postings} (read with freqs). */
    void add(PostingsEnum postings) throws IOException {
        for (int doc = postings.nextDoc(); doc != DocIdSetIterator.NO_MORE_DOCS;
             doc = postings.nextDoc()) {
            if (n == packed.length) {
                packed = Arrays.copyOf(packed, n + (n >> 1));
            }
            packed[n++] = ((long) doc << 32) | postings.freq();
            totalTermFreq += postings.freq();
        }
    }

    /** The sum of every tf added. */
    long totalTermFreq() {
        return totalTermFreq;
    }

    /** Sorts the pairs by document and sums the tf of each document into docs and freqs. */
    MergedPostings merge() {
        Arrays.sort(packed, 0, n);  // by doc (the high half), then tf
        docs = new int[n];
        freqs = new int[n];
        size = 0;
        for (int i = 0; i < n; i++) {
            int doc = (int) (packed[i] >>> 32);
            int freq = (int) packed[i];
            if (size > 0 && docs[size - 1] == doc) {
                freqs[size - 1] += freq;
            } else {
                docs[size] = doc;
                freqs[size++] = freq;
            }
        }
        return this;
    }
}
