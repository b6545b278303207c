package esqlog.terms;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.IntBuffer;
import java.util.Base64;

/**
 * One query word's compounds, as calibrate wrote them into its word-lists index: the terms of
 * the index whose split holds the word, most frequent first (at most {@link WordPlan#MULTI_SCAN}),
 * each with its id in the calibration's statistics (the same compound has the same id in every
 * word's list: how the plan finds the compounds that hold several query words) and its
 * document frequency in the index.
 *
 * <p>Why a document per word: the plan needs only the dozen lists its query names, so the
 * coordinating node fetches those (one multi-get, then kept in {@link WordLists}) rather than
 * the calibration's whole statistics.
 */
public final class WordList {
    /** The list of a word the index holds no document for: it is inside no compound. */
    public static final WordList EMPTY = new WordList(new int[0], new int[0], "", new int[] {0});

    final int[] ids;
    final int[] df;
    /** The largest id (0 for none): what the plan's bitsets must hold. */
    final int maxId;
    /** The terms as written, joined by newlines, and where each starts (and one past the end):
     * one String (a byte a character for ASCII terms) instead of one per term. */
    private final String joined;
    private final int[] starts;

    WordList(int[] ids, int[] df, String joined, int[] starts) {
        this.ids = ids;
        this.df = df;
        this.joined = joined;
        this.starts = starts;
        int most = 0;
        for (int id : ids) {
            most = Math.max(most, id);
        }
        this.maxId = most;
    }

    /** The term at {@code position}. */
    String term(int position) {
        return joined.substring(starts[position], starts[position + 1] - 1);
    }

    /**
     * The list from its document's fields: {@code ids} and {@code df} base64 of little-endian
     * 32-bit integers, {@code terms} the compounds joined by newlines (no term of a standard
     * field holds one). Untrusted input: an IllegalArgumentException names what is wrong.
     */
    public static WordList parse(Object ids, Object df, Object terms) {
        if (!(ids instanceof String idText) || !(df instanceof String dfText)
                || !(terms instanceof String termText)) {
            throw new IllegalArgumentException("a word list needs the strings ids, df and terms");
        }
        int[] idValues = ints(idText, "ids");
        int[] dfValues = ints(dfText, "df");
        int[] starts = new int[idValues.length + 1];
        int count = 0;
        if (!termText.isEmpty()) {
            for (int at = termText.indexOf('\n'); count < idValues.length; at = termText.indexOf('\n', at + 1)) {
                int end = at < 0 ? termText.length() : at;
                if (end == starts[count]) {
                    throw new IllegalArgumentException("a word list holds an empty term at "
                        + "position " + count);
                }
                starts[++count] = end + 1;
                if (at < 0) {
                    break;
                }
            }
        }
        if (idValues.length != dfValues.length || count != idValues.length
                || starts[count] != termText.length() + (count == 0 ? 0 : 1)) {
            throw new IllegalArgumentException("a word list holds " + idValues.length + " ids, "
                + dfValues.length + " df and not as many terms; they must be as many");
        }
        if (idValues.length > WordPlan.MULTI_SCAN) {
            throw new IllegalArgumentException("a word list holds " + idValues.length
                + " compounds, more than the " + WordPlan.MULTI_SCAN + " a plan reads");
        }
        for (int i = 0; i < idValues.length; i++) {
            if (idValues[i] < 0 || idValues[i] >= Candidates.MAX_ID || dfValues[i] < 0) {
                throw new IllegalArgumentException("a word list holds an id or df out of range "
                    + "at position " + i);
            }
            if (i > 0 && dfValues[i] > dfValues[i - 1]) {  // the plan merges lists by mass
                throw new IllegalArgumentException("a word list is not most frequent first at "
                    + "position " + i);
            }
        }
        return new WordList(idValues, dfValues, termText + (count == 0 ? "" : "\n"), starts);
    }

    private static int[] ints(String text, String name) {
        byte[] bytes;
        try {
            bytes = Base64.getDecoder().decode(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("a word list's " + name + " is not base64");
        }
        if (bytes.length % 4 != 0) {
            throw new IllegalArgumentException("a word list's " + name + " is not 32-bit integers");
        }
        IntBuffer buffer = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).asIntBuffer();
        int[] out = new int[buffer.remaining()];
        buffer.get(out);
        return out;
    }

    public int size() {
        return ids.length;
    }

    /** Estimated heap bytes: the arrays and the terms' one String (a byte a character when
     * all are Latin-1, as Java's compact strings keep it, else two). */
    long bytes() {
        boolean latin1 = joined.chars().allMatch(c -> c < 256);
        return 128 + 12L * ids.length + (latin1 ? 1L : 2L) * joined.length();
    }
}
