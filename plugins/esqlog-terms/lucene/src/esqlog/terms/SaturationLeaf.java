package esqlog.terms;

import java.io.IOException;
import java.util.Arrays;
import java.util.List;

import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.NumericDocValues;
import org.apache.lucene.index.PostingsEnum;
import org.apache.lucene.index.Terms;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.Explanation;
import org.apache.lucene.search.similarities.Similarity.SimScorer;
import org.apache.lucene.util.BytesRef;
import org.apache.lucene.util.FixedBitSet;

/**
 * One segment's matches of an {@code esqlog_terms} group with their summed tf, scored by the
 * field's BM25 without idf: what both engines' scorers delegate to.
 *
 * <p>Why: a SynonymQuery over hundreds of rare compounds keeps every term's postings in a heap
 * and sums the tf of the lists on each document as it goes, which is most of the identifiers
 * query's time on the engine. Here each term's postings are read once, start to end, and their
 * tf added into doc order (a sorted buffer while the group is rare, one int per document once
 * its postings pass an eighth of the segment), as TermInSetQuery does for a filter; the
 * scorer then walks two arrays. The score is the same BM25 of the same summed tf. A rare
 * term's postings, and a term's absence, come from the node's PostingsCache when an earlier
 * query read them in the same segment.
 */
final class SaturationLeaf {
    /** Dense (one int per document) once the postings exceed maxDoc / DENSE. */
    private static final int DENSE = 8;

    private final int[] docs;
    private final int[] freqs;
    private final int size;
    private final SimScorer sim;
    private final NumericDocValues norms;
    private final float maxScore;
    private int index = -1;
    private int doc = -1;

    private SaturationLeaf(int[] docs, int[] freqs, int size, SimScorer sim,
                           NumericDocValues norms) {
        this.docs = docs;
        this.freqs = freqs;
        this.size = size;
        this.sim = sim;
        this.norms = norms;
        this.maxScore = sim.score(Float.MAX_VALUE, 1L);
    }

    /** The group's matches in this segment, or null when it has none. */
    static SaturationLeaf read(LeafReader reader, String field, List<BytesRef> terms,
                               int[] hashes, SimScorer sim) throws IOException {
        Terms indexed = reader.terms(field);
        if (indexed == null) {
            return null;
        }
        PostingsCache cache = PostingsCache.shared();
        PostingsCache.Segment cached = cache == null ? null
            : cache.segment(reader.getCoreCacheHelper());
        Summed summed = new Summed(reader.maxDoc());
        TermsEnum termsEnum = indexed.iterator();
        PostingsEnum postings = null;
        for (int t = 0; t < terms.size(); t++) {
            BytesRef term = terms.get(t);
            int[][] known = cached == null ? null : cached.get(field, term, hashes[t]);
            if (known != null) {
                summed.add(known[0], known[1]);
                continue;
            }
            if (!termsEnum.seekExact(term)) {
                if (cached != null) {
                    cached.put(field, term, hashes[t], PostingsCache.ABSENT);
                }
                continue;
            }
            postings = termsEnum.postings(postings, PostingsEnum.FREQS);
            int count = termsEnum.docFreq();
            if (cached != null && count <= PostingsCache.MAX_DOCS) {
                int[][] read = new int[][] {new int[count], new int[count]};
                int k = 0;
                for (int d = postings.nextDoc(); d != DocIdSetIterator.NO_MORE_DOCS;
                        d = postings.nextDoc()) {
                    read[0][k] = d;
                    read[1][k++] = postings.freq();
                }
                if (k < count) {  // docFreq counts every posting; defensive all the same
                    read = new int[][] {Arrays.copyOf(read[0], k), Arrays.copyOf(read[1], k)};
                }
                cached.put(field, term, hashes[t], read);
                summed.add(read[0], read[1]);
                continue;
            }
            summed.reserve(count);
            for (int d = postings.nextDoc(); d != DocIdSetIterator.NO_MORE_DOCS;
                    d = postings.nextDoc()) {
                summed.add(d, postings.freq());
            }
        }
        return summed.leaf(sim, reader.getNormValues(field));
    }

    /**
     * The summed tf per document as the terms' postings come in: a sorted buffer while rare,
     * one int per document once they pass an eighth of the segment.
     */
    private static final class Summed {
        private final int maxDoc;
        private long[] buffer = new long[16];  // (doc << 32 | freq) while sparse
        private int buffered;
        private int[] dense;
        private FixedBitSet seen;

        Summed(int maxDoc) {
            this.maxDoc = maxDoc;
        }

        /** Goes dense before ``more`` postings would pass an eighth of the segment. */
        void reserve(long more) {
            if (dense == null && buffered + more > maxDoc / DENSE) {
                dense = new int[maxDoc];
                seen = new FixedBitSet(maxDoc);
                for (int i = 0; i < buffered; i++) {
                    int d = (int) (buffer[i] >>> 32);
                    dense[d] += (int) buffer[i];
                    seen.set(d);
                }
                buffer = null;
            }
        }

        void add(int[] docs, int[] freqs) {
            reserve(docs.length);
            for (int i = 0; i < docs.length; i++) {
                add(docs[i], freqs[i]);
            }
        }

        void add(int d, int freq) {
            if (dense != null) {
                dense[d] += freq;
                seen.set(d);
            } else {
                if (buffered == buffer.length) {
                    buffer = Arrays.copyOf(buffer, buffered * 2);
                }
                buffer[buffered++] = ((long) d << 32) | freq;
            }
        }

        SaturationLeaf leaf(SimScorer sim, NumericDocValues norms) {
            if (dense != null) {
                int count = seen.cardinality();
                int[] docs = new int[count];
                int[] freqs = new int[count];
                int k = 0;
                for (int d = seen.nextSetBit(0); d != DocIdSetIterator.NO_MORE_DOCS;
                        d = d + 1 < maxDoc ? seen.nextSetBit(d + 1)
                            : DocIdSetIterator.NO_MORE_DOCS) {
                    docs[k] = d;
                    freqs[k++] = dense[d];
                }
                return new SaturationLeaf(docs, freqs, count, sim, norms);
            }
            if (buffered == 0) {
                return null;
            }
            Arrays.sort(buffer, 0, buffered);
            int[] docs = new int[buffered];
            int[] freqs = new int[buffered];
            int k = -1;
            for (int i = 0; i < buffered; i++) {
                int d = (int) (buffer[i] >>> 32);
                if (k < 0 || docs[k] != d) {
                    docs[++k] = d;
                }
                freqs[k] += (int) buffer[i];
            }
            return new SaturationLeaf(docs, freqs, k + 1, sim, norms);
        }
    }

    int docID() {
        return doc;
    }

    /** The current document's score: the BM25 saturation of its summed tf, no idf. */
    float score() throws IOException {
        return sim.score(freqs[index], norm(doc));
    }

    /** The saturation's bound: an infinite tf on the shortest document. */
    float maxScore() {
        return maxScore;
    }

    /** The summed tf on {@code target}, and its score's explanation, or null if no match. */
    Explanation explain(int target) throws IOException {
        if (iterator().advance(target) != target) {
            return null;
        }
        Explanation freq = Explanation.match(freqs[index], "summed tf of the group's terms");
        Explanation bm25 = sim.explain(freq, norm(target));
        return Explanation.match(bm25.getValue(), "esqlog_terms, idf false: the field's BM25 "
            + "saturation of the summed tf", bm25);
    }

    private long norm(int target) throws IOException {
        return norms != null && norms.advanceExact(target) ? norms.longValue() : 1L;
    }

    /** The documents in order; the leaf's own cursor, so one iterator per leaf. */
    DocIdSetIterator iterator() {
        return cursor;
    }

    private final DocIdSetIterator cursor = new DocIdSetIterator() {
        @Override
        public int docID() {
            return doc;
        }

        @Override
        public int nextDoc() {
            return doc = ++index < size ? docs[index] : NO_MORE_DOCS;
        }

        @Override
        public int advance(int target) {
            int lo = index + 1;
            if (lo < size && docs[lo] < target) {  // gallop, then binary search
                int step = 1;
                int hi = lo + step;
                while (hi < size && docs[hi] < target) {
                    lo = hi + 1;
                    step <<= 1;
                    hi = lo + step;
                }
                int found = Arrays.binarySearch(docs, lo, Math.min(hi + 1, size), target);
                lo = found >= 0 ? found : -found - 1;
            }
            index = lo;
            return doc = index < size ? docs[index] : NO_MORE_DOCS;
        }

        @Override
        public long cost() {
            return size;
        }
    };
}
