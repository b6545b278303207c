package esqlog.terms;

import java.io.IOException;
import java.util.Arrays;

import org.apache.lucene.index.NumericDocValues;
import org.apache.lucene.search.DocIdSetIterator;

/**
 * The exact impacts of a group's rare-terms list ({@link RareList}): for each window of doc
 * ids, the (summed tf, norm) pairs of the list's documents in it that no other of them beats
 * on both.
 *
 * <p>Why: Lucene gives a postings list of one block the largest possible impact (it has no
 * skip data to read them from), so a group whose rare terms are one list never let top-k
 * collection (MaxScore, block-max WAND) skip any of the group's blocks. The list is small and
 * in memory with its documents' summed tf, so its impacts are computed exactly, as Lucene's
 * postings writer does per block ({@code CompetitiveImpactAccumulator}), over aligned windows
 * of doc ids a quarter of the segment wide (at least 2^{@link #SHIFT}), then windows eight
 * times wider, up to the whole segment. Windows of doc ids rather than of entries: a synonym
 * query's merged impacts take the block ends of its term with the nearest one (its lead) and
 * ask each other term for the narrowest level that covers them. Narrower windows made the
 * list lead with them, and the engine slower (8,192 ids on a 153K-document segment: p50
 * 1.45x the match against 1.34x with the largest impact; a quarter of it: the same as that,
 * docs/benchmarks/identifiers.md). A window without a document of the list answers one
 * impact that no document beats (tf 1 at the largest norm).
 *
 * <p>Computed whole when made (each level one pass over the list, 2n for a 153K-document
 * segment's two levels), then read only: immutable, so a whole word's group kept by the node
 * ({@link WordTerms}) holds its impacts and shares them among the queries and threads that
 * score it, instead of each query computing them again (a tenth of the engine's time on
 * Go 153K before).
 *
 * <p>The version-specific {@code LevelImpacts} hands them to Lucene in its impacts API (a
 * list of Impact up to Lucene 10.3, a FreqAndNormBuffer from 10.4).
 */
final class RareImpacts {
    /** The narrowest windows, as a power of two of doc ids; each coarser level 8x wider. */
    static final int SHIFT = 13;

    private final int maxDoc;
    /** log2 of each level's window; the last level's one window is the whole segment. */
    private final int[] shifts;
    private final int[][][] windowFreqs;
    private final long[][][] windowNorms;

    /**
     * The impacts of the first {@code size} entries of a list of (doc, freq) with their
     * norms; the arrays are read here only, not kept (a kept group needs its norms for
     * nothing else: {@link WordTerms} lets them go).
     */
    RareImpacts(int[] docs, int[] freqs, long[] norms, int size, int maxDoc) {
        this.maxDoc = Math.max(maxDoc, 1);
        // a quarter of the segment: the bits of its largest doc id, less two
        int first = Math.max(SHIFT, 32 - Integer.numberOfLeadingZeros(this.maxDoc - 1) - 2);
        int levels = 1;
        for (int shift = first; shift < 31 && (1 << shift) < this.maxDoc; shift += 3) {
            levels++;
        }
        shifts = new int[levels];
        windowFreqs = new int[levels][][];
        windowNorms = new long[levels][][];
        for (int level = 0; level < levels; level++) {
            shifts[level] = level == levels - 1 ? 31 : first + 3 * level;
            int windows = level == levels - 1 ? 1 : ((this.maxDoc - 1) >> shifts[level]) + 1;
            windowFreqs[level] = new int[windows][];
            windowNorms[level] = new long[windows][];
            for (int window = 0; window < windows; window++) {
                compute(docs, freqs, norms, size, level, window);
            }
        }
    }

    /** Estimated heap bytes of the windows' pairs (a freq and a norm each) and arrays. */
    long bytes() {
        long bytes = 64L;
        for (int[][] level : windowFreqs) {
            for (int[] window : level) {
                bytes += 12L * window.length + 40L;
            }
        }
        return bytes;
    }

    /**
     * The norms of {@code docs} (ascending) as the scorer reads them: the field's norm, 1 where
     * the field keeps none (as Lucene's scorers take it), and 0 (the most competitive) for a
     * document without one.
     */
    static long[] norms(NumericDocValues values, int[] docs, int size) throws IOException {
        long[] out = new long[size];
        if (values == null) {
            Arrays.fill(out, 1L);
            return out;
        }
        for (int i = 0; i < size; i++) {
            out[i] = values.advanceExact(docs[i]) ? values.longValue() : 0L;
        }
        return out;
    }

    int numLevels() {
        return shifts.length;
    }

    /** log2 of the windows of {@code level} below the last (the whole segment). */
    int shift(int level) {
        return shifts[level];
    }

    /** The window of {@code level} that holds {@code doc} (clamped into the segment). */
    private int window(int level, int doc) {
        return level == shifts.length - 1 ? 0 : Math.min(Math.max(doc, 0), maxDoc - 1)
            >> shifts[level];
    }

    /**
     * The last doc id of the window of {@code level} that holds {@code doc}, or NO_MORE_DOCS
     * for the segment's last window (nothing follows it).
     */
    int docIdUpTo(int level, int doc) {
        if (level == shifts.length - 1) {
            return DocIdSetIterator.NO_MORE_DOCS;
        }
        long end = ((long) window(level, doc) + 1 << shifts[level]) - 1;
        return end >= maxDoc - 1 ? DocIdSetIterator.NO_MORE_DOCS : (int) end;
    }

    /** The competitive freqs of the window of {@code level} that holds {@code doc}. */
    int[] freqs(int level, int doc) {
        return windowFreqs[level][window(level, doc)];
    }

    /** Their norms, in the same order (increasing freq, increasing unsigned norm). */
    long[] norms(int level, int doc) {
        return windowNorms[level][window(level, doc)];
    }

    /** The first entry of {@code docs} (its first {@code size}) at or after {@code doc}. */
    private static int entry(int[] docs, int size, long doc) {
        int found = Arrays.binarySearch(docs, 0, size, (int) Math.min(doc, Integer.MAX_VALUE));
        return found >= 0 ? found : -found - 1;
    }

    /**
     * The Pareto set of (freq, norm) over one window: by increasing unsigned norm (a shorter
     * document scores higher), each pair whose freq is above every freq of a smaller or equal
     * norm; so freqs and norms both increase, the order Lucene's impacts have.
     *
     * <p>Every norm Lucene writes is one signed byte (and the 1 or 0 {@link #norms} stands in
     * with), so the best freq per norm is one pass into 256 slots, read in the unsigned order
     * (as Lucene's CompetitiveImpactAccumulator does): no sort of the window's entries, which
     * the whole segment's level made the plugin's largest cost after scoring itself. A norm
     * outside a byte (a similarity of one's own) takes the general path.
     */
    private void compute(int[] docs, int[] freqs, long[] norms, int size, int level,
                         int window) {
        boolean whole = level == shifts.length - 1;
        int from = whole ? 0 : entry(docs, size, (long) window << shifts[level]);
        int to = whole ? size : entry(docs, size, (long) (window + 1) << shifts[level]);
        int[] best = new int[256];
        for (int i = from; i < to; i++) {
            long norm = norms[i];
            if (norm != (byte) norm) {
                computeSorted(freqs, norms, level, window, from, to);
                return;
            }
            int slot = Byte.toUnsignedInt((byte) norm);
            best[slot] = Math.max(best[slot], freqs[i]);
        }
        int[] outFreqs = new int[256];
        long[] outNorms = new long[256];
        int n = 0;
        int above = 0;
        for (int slot = 0; slot < 256; slot++) {
            if (best[slot] > above) {
                above = best[slot];
                outFreqs[n] = above;
                outNorms[n++] = (byte) slot;
            }
        }
        keep(level, window, outFreqs, outNorms, n);
    }

    /** {@link #compute} for norms of any long: the window's entries sorted by norm. */
    private void computeSorted(int[] freqs, long[] norms, int level, int window, int from,
                               int to) {
        Integer[] order = new Integer[to - from];
        for (int i = 0; i < order.length; i++) {
            order[i] = from + i;
        }
        Arrays.sort(order, (a, b) -> {
            int byNorm = Long.compareUnsigned(norms[a], norms[b]);
            return byNorm != 0 ? byNorm : Integer.compare(freqs[b], freqs[a]);
        });
        int[] outFreqs = new int[order.length];
        long[] outNorms = new long[order.length];
        int n = 0;
        int best = 0;
        for (Integer entry : order) {
            if (freqs[entry] > best) {
                best = freqs[entry];
                outFreqs[n] = best;
                outNorms[n++] = norms[entry];
            }
        }
        keep(level, window, outFreqs, outNorms, n);
    }

    private void keep(int level, int window, int[] outFreqs, long[] outNorms, int n) {
        if (n == 0) {  // no document here: Lucene wants an impact, none can beat this one
            outFreqs = new int[] {1};
            outNorms = new long[] {-1L};
            n = 1;
        }
        windowFreqs[level][window] = Arrays.copyOf(outFreqs, n);
        windowNorms[level][window] = Arrays.copyOf(outNorms, n);
    }
}
