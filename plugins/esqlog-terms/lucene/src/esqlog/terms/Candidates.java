package esqlog.terms;

import java.util.Arrays;
import java.util.List;

/**
 * The first {@code room} candidates of a query's clause budget ({@link WordPlan}), in the
 * order the client's esqlog.identifiers.selection takes them (by tier, then score mass
 * {@code weight * df}, largest first, then candidate order): per candidate its word
 * ({@code owner}) and its position in that word's list ({@code at}).
 *
 * <p>Why not a sort of every candidate, as the client does: the shared compounds (held by
 * two or more of the query's words, a few hundred) always come first (their tier is at most 0,
 * a plain one's 1 or 2), and each word's plain candidates are already in mass order (a list is
 * most frequent first, and its word's weight is one number), so the rest is a merge of one
 * run per word, stopped at {@code room}. The shared ones are found with two bitsets over the
 * compound ids (this thread's, cleared after use), not by sorting or hashing the ~15,000 ids.
 */
final class Candidates {
    /** Compound ids a word list may hold: the bitsets stay within 16 MB a thread. */
    static final int MAX_ID = 1 << 27;

    private static final ThreadLocal<long[][]> BITS = ThreadLocal.withInitial(
        () -> new long[][] {new long[0], new long[0]});

    final int[] owner;
    final int[] at;
    int count;

    private Candidates(int capacity) {
        owner = new int[capacity];
        at = new int[capacity];
    }

    private void add(int word, int position) {
        owner[count] = word;
        at[count++] = position;
    }

    /**
     * The first {@code room} candidates: {@code cover} (select is not "mass" and the query
     * has several words) puts the shared ones first, tiered by {@code select}.
     */
    static Candidates top(List<WordList> lists, int[] size, int[] first, double[] weight,
                          double[] tierOf, int room, String select, boolean cover) {
        int n = size.length;
        int[] head = new int[n];
        int maxId = 0;
        for (int k = 0; k < n; k++) {
            head[k] = Math.min(size[k], WordPlan.MULTI_SCAN);
            maxId = Math.max(maxId, lists.get(k).maxId);
        }
        Candidates out = new Candidates(room);
        if (!cover) {
            merge(lists, head, first, weight, tierOf, room, out, null);
            return out;
        }
        long[][] bits = BITS.get();
        int words = (maxId >>> 6) + 1;
        if (bits[0].length < words) {
            bits[0] = new long[Math.max(words, bits[0].length * 2)];
            bits[1] = new long[bits[0].length];
        }
        long[] seen = bits[0];
        long[] dup = bits[1];
        try {
            for (int k = 0; k < n; k++) {  // an id seen in an earlier list is shared
                int[] ids = lists.get(k).ids;
                for (int i = 0; i < head[k]; i++) {
                    int id = ids[i];
                    long bit = 1L << id;
                    if ((seen[id >>> 6] & bit) != 0) {
                        dup[id >>> 6] |= bit;
                    } else {
                        seen[id >>> 6] |= bit;
                    }
                }
            }
            Shared found = Shared.of(lists, head, first, weight, select, dup);
            for (int s = 0; s < Math.min(found.count, room); s++) {
                out.add(found.owner[found.order[s]], found.at[found.order[s]]);
            }
            if (out.count < room) {
                merge(lists, head, first, weight, tierOf, room, out, dup);
            }
            return out;
        } finally {
            Arrays.fill(seen, 0, words, 0L);  // one pass over the few KB the ids span
            Arrays.fill(dup, 0, words, 0L);
        }
    }

    /**
     * Adds the plain candidates to {@code out} until it holds {@code room}: tier by tier, the
     * words' runs merged by mass (equal masses: the earlier word first, then list order); a
     * run is a word's positions after its first clause, at most {@code room} of them, less
     * the shared ones ({@code dup}, null when none are).
     */
    private static void merge(List<WordList> lists, int[] head, int[] first, double[] weight,
                              double[] tierOf, int room, Candidates out, long[] dup) {
        int n = head.length;
        int[] pos = new int[n];
        int[] end = new int[n];
        double tier = Double.NEGATIVE_INFINITY;
        while (out.count < room) {
            double next = Double.POSITIVE_INFINITY;  // the lowest tier above the last one
            for (int k = 0; k < n; k++) {
                if (tierOf[k] > tier) {
                    next = Math.min(next, tierOf[k]);
                }
            }
            if (next == Double.POSITIVE_INFINITY) {
                return;
            }
            tier = next;
            for (int k = 0; k < n; k++) {
                pos[k] = first[k];
                end[k] = tierOf[k] == tier
                    ? first[k] + Math.max(Math.min(head[k] - first[k], room), 0) : first[k];
                pos[k] = skipShared(lists.get(k), pos[k], end[k], dup);
            }
            while (out.count < room) {
                int best = -1;
                double most = 0;
                for (int k = 0; k < n; k++) {
                    if (pos[k] < end[k]) {
                        double mass = weight[k] * (double) lists.get(k).df[pos[k]];
                        if (best < 0 || mass > most) {
                            best = k;
                            most = mass;
                        }
                    }
                }
                if (best < 0) {
                    break;
                }
                out.add(best, pos[best]);
                pos[best] = skipShared(lists.get(best), pos[best] + 1, end[best], dup);
            }
        }
    }

    private static int skipShared(WordList list, int pos, int end, long[] dup) {
        if (dup == null) {
            return pos;
        }
        while (pos < end && (dup[list.ids[pos] >>> 6] & (1L << list.ids[pos])) != 0) {
            pos++;
        }
        return pos;
    }

    /** The shared candidates, with their tiers and masses, sorted as the budget takes them. */
    private static final class Shared {
        final int[] owner;
        final int[] at;
        final int[] order;
        int count;

        private Shared(int capacity) {
            owner = new int[capacity];
            at = new int[capacity];
            order = new int[capacity];
        }

        static Shared of(List<WordList> lists, int[] head, int[] first, double[] weight,
                         String select, long[] dup) {
            // the shared positions (word, position, id), in order
            int[] word = new int[256];
            int[] position = new int[256];
            int[] id = new int[256];
            int shared = 0;
            for (int k = 0; k < head.length; k++) {
                int[] ids = lists.get(k).ids;
                for (int i = 0; i < head[k]; i++) {
                    if ((dup[ids[i] >>> 6] & (1L << ids[i])) != 0) {
                        if (shared == word.length) {
                            word = Arrays.copyOf(word, shared * 2);
                            position = Arrays.copyOf(position, shared * 2);
                            id = Arrays.copyOf(id, shared * 2);
                        }
                        word[shared] = k;
                        position[shared] = i;
                        id[shared++] = ids[i];
                    }
                }
            }
            // each shared id's count and weight summed in position order (the client's
            // bincount), over every position, a word's first clause included
            SharedIds table = SharedIds.forThread(shared);
            Shared out = new Shared(shared);
            int[] slot = new int[shared];
            for (int s = 0; s < shared; s++) {
                int at = table.add(id[s]);
                table.addMass(at, weight[word[s]]);
                if (position[s] > 0 || first[word[s]] == 0) {  // a first clause is taken already
                    out.owner[out.count] = word[s];
                    out.at[out.count] = position[s];
                    slot[out.count++] = at;
                }
            }
            double[] tier = new double[out.count];
            double[] mass = new double[out.count];
            for (int c = 0; c < out.count; c++) {
                tier[c] = "words".equals(select) ? -table.count(slot[c])
                    : "cover".equals(select) ? -table.mass(slot[c]) : 0.0;
                mass[c] = weight[out.owner[c]] * (double) lists.get(out.owner[c]).df[out.at[c]];
                out.order[c] = c;
            }
            IndexSort.byTierThenMass(out.order, out.count, tier, mass);
            return out;
        }
    }
}
