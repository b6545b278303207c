package esqlog.terms;

import org.apache.lucene.index.FreqAndNormBuffer;

/**
 * A rare-terms list's exact impacts ({@link RareImpacts}) in the impacts API of Lucene 10.4
 * and later, where {@code Impacts.getImpacts(level)} fills a {@code FreqAndNormBuffer} (up to
 * 10.3 it was a {@code List<Impact>}: lucene-9.0-10.3/). Positioned on one entry of the list by
 * {@link #at}; one buffer reused, as Lucene's own postings do.
 */
final class LevelImpacts extends PositionedImpacts {
    private final FreqAndNormBuffer buffer = new FreqAndNormBuffer();

    LevelImpacts(RareImpacts impacts) {
        super(impacts);
    }

    @Override
    public FreqAndNormBuffer getImpacts(int level) {
        int[] freqs = freqs(level);
        long[] norms = norms(level);
        buffer.growNoCopy(freqs.length);
        System.arraycopy(freqs, 0, buffer.freqs, 0, freqs.length);
        System.arraycopy(norms, 0, buffer.norms, 0, freqs.length);
        buffer.size = freqs.length;
        return buffer;
    }
}
