package esqlog.terms;

import java.util.AbstractList;
import java.util.List;

import org.apache.lucene.index.Impact;

/**
 * A rare-terms list's exact impacts ({@link RareImpacts}) in the impacts API of Lucene 9.0
 * to 10.3, where {@code Impacts.getImpacts(level)} is a {@code List<Impact>} (10.4 replaced
 * the list by a FreqAndNormBuffer: lucene-10.4/). Positioned on one entry of the list by
 * {@link #at}.
 */
final class LevelImpacts extends PositionedImpacts {
    LevelImpacts(RareImpacts impacts) {
        super(impacts);
    }

    @Override
    public List<Impact> getImpacts(int level) {
        int[] freqs = freqs(level);
        long[] norms = norms(level);
        return new AbstractList<>() {
            @Override
            public Impact get(int i) {
                return new Impact(freqs[i], norms[i]);
            }

            @Override
            public int size() {
                return freqs.length;
            }
        };
    }
}
