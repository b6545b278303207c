package esqlog.terms;

import java.io.IOException;
import java.util.Arrays;

import org.apache.lucene.index.NumericDocValues;
import org.apache.lucene.search.DocIdSetIterator;

/**
 * The exact impacts of a group's rare-terms list ({@link RareList}): for each block of the
 * list, the (summed tf, norm) pairs of its documents that no other of them beats on both.
 *
 * <p>Why: Lucene gives a postings list of one block the largest possible impact (it has no
 * skip data to read them from), so a group whose rare terms are one list never let top-k
 * collection (MaxScore, block-max WAND) skip any of the group's blocks. The list is small and
 * in memory with its documents' summed tf, so its impacts are computed exactly, as Lucene's
 * postings writer does per block ({@code CompetitiveImpactAccumulator}), over blocks of
 * {@link #BLOCK} entries, then blocks eight times larger, up to one block of the whole list:
 * the levels a synonym query's merged impacts pick from for the span of its lead term's block.
 *
 * <p>The version-specific {@code LevelImpacts} hands them to Lucene in its impacts API (a
 * list of Impact up to Lucene 10.3, a FreqAndNormBuffer from 10.4).
 */
final class RareImpacts {
    /** Entries per block on the finest level; each coarser level's blocks hold 8 times more. */
    static final int BLOCK = 16;

    private final int[] docs;
    private final int[] freqs;
    private final long[] norms;
    private final int size;
    /** Entries per block of each level: the last level's one block holds the whole list. */
    private final int[] blockSizes;
    private final int[][][] blockFreqs;
    private final long[][][] blockNorms;

    RareImpacts(int[] docs, int[] freqs, long[] norms, int size) {
        this.docs = docs;
        this.freqs = freqs;
        this.norms = norms;
        this.size = size;
        int levels = 1;
        for (long entries = BLOCK; entries < size; entries *= 8) {
            levels++;
        }
        blockSizes = new int[levels];
        blockFreqs = new int[levels][][];
        blockNorms = new long[levels][][];
        long entries = BLOCK;
        for (int level = 0; level < levels; level++) {
            blockSizes[level] = level == levels - 1 ? Math.max(size, 1)
                : (int) Math.min(entries, Integer.MAX_VALUE);
            int blocks = (size + blockSizes[level] - 1) / blockSizes[level];
            blockFreqs[level] = new int[Math.max(blocks, 1)][];
            blockNorms[level] = new long[Math.max(blocks, 1)][];
            entries *= 8;
        }
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
        return blockSizes.length;
    }

    /**
     * The last document of the block of {@code level} that holds entry {@code index}, or
     * NO_MORE_DOCS for the list's last block (nothing follows it).
     */
    int docIdUpTo(int level, int index) {
        long end = ((long) index / blockSizes[level] + 1) * blockSizes[level];
        return end >= size ? DocIdSetIterator.NO_MORE_DOCS : docs[(int) end - 1];
    }

    /** The competitive freqs of the block of {@code level} that holds entry {@code index}. */
    int[] freqs(int level, int index) {
        int block = index / blockSizes[level];
        if (blockFreqs[level][block] == null) {
            compute(level, block);
        }
        return blockFreqs[level][block];
    }

    /** Their norms, in the same order (increasing freq, increasing unsigned norm). */
    long[] norms(int level, int index) {
        int block = index / blockSizes[level];
        if (blockNorms[level][block] == null) {
            compute(level, block);
        }
        return blockNorms[level][block];
    }

    /**
     * The Pareto set of (freq, norm) over one block: by increasing unsigned norm (a shorter
     * document scores higher), each pair whose freq is above every freq of a smaller or equal
     * norm; so freqs and norms both increase, the order Lucene's impacts have.
     */
    private void compute(int level, int block) {
        int from = block * blockSizes[level];
        int to = (int) Math.min((long) from + blockSizes[level], size);
        Integer[] order = new Integer[Math.max(to - from, 0)];
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
        if (n == 0) {  // an empty list: no document to score, and Lucene wants one impact
            outFreqs = new int[] {1};
            outNorms = new long[] {1L};
            n = 1;
        }
        blockFreqs[level][block] = Arrays.copyOf(outFreqs, n);
        blockNorms[level][block] = Arrays.copyOf(outNorms, n);
    }
}
