package esqlog.terms;

import org.apache.lucene.index.Impacts;

/**
 * A rare-terms list's exact impacts ({@link RareImpacts}) for one entry of the list, in what
 * every Lucene impacts API shares: the levels and each level's last doc id.
 *
 * <p>Why a base class: between Lucene releases only {@code getImpacts(level)} changed its
 * type (a {@code List<Impact>} up to 10.3, a {@code FreqAndNormBuffer} from 10.4), so each
 * release range's {@code LevelImpacts} (lucene-9.0-10.3/, lucene-10.4/) adds that method
 * and nothing else.
 */
abstract class PositionedImpacts extends Impacts {
    /** The list's windows and their competitive (freq, norm) pairs. */
    private final RareImpacts impacts;
    /** The list entry these impacts are of ({@link #at}). */
    private int index;

    PositionedImpacts(RareImpacts impacts) {
        this.impacts = impacts;
    }

    /** These impacts positioned on list entry {@code entry}. */
    final PositionedImpacts at(int entry) {
        index = entry;
        return this;
    }

    @Override
    public final int numLevels() {
        return impacts.numLevels();
    }

    @Override
    public final int getDocIdUpTo(int level) {
        return impacts.docIdUpTo(level, index);
    }

    /** The competitive freqs of {@code level}'s window holding the positioned entry. */
    final int[] freqs(int level) {
        return impacts.freqs(level, index);
    }

    /** Their norms, in the same order. */
    final long[] norms(int level) {
        return impacts.norms(level, index);
    }
}
