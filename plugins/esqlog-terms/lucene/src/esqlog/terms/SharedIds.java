package esqlog.terms;

import java.util.Arrays;

/**
 * How many of a query's word lists hold each compound id: an open-addressing table kept per
 * searching thread and emptied by a new generation number rather than cleared, so a plan of
 * ~15,000 ids costs one probe each and no allocation.
 */
final class SharedIds {
    private static final ThreadLocal<SharedIds> TABLES = ThreadLocal.withInitial(SharedIds::new);

    private int[] keys = new int[0];
    private int[] counts = new int[0];
    private int[] stamps = new int[0];
    private double[] masses = new double[0];
    private int generation;
    private int mask;

    /** This thread's table, emptied, with room for {@code ids} distinct ids. */
    static SharedIds forThread(int ids) {
        SharedIds table = TABLES.get();
        table.reset(ids);
        return table;
    }

    private void reset(int ids) {
        int capacity = Integer.highestOneBit(Math.max(16, ids * 2 - 1)) << 1;
        if (capacity > keys.length) {
            keys = new int[capacity];
            counts = new int[capacity];
            stamps = new int[capacity];
            masses = new double[capacity];
            generation = 0;
        }
        if (++generation == 0) {  // wrapped: every stamp could look current
            Arrays.fill(stamps, 0);
            generation = 1;
        }
        mask = Math.min(capacity, keys.length) - 1;
    }

    /** Counts {@code id} once more; its slot (the same for every count of one id). */
    int add(int id) {
        int at = mix(id) & mask;
        while (stamps[at] == generation) {
            if (keys[at] == id) {
                counts[at]++;
                return at;
            }
            at = (at + 1) & mask;
        }
        stamps[at] = generation;
        keys[at] = id;
        counts[at] = 1;
        masses[at] = 0.0;
        return at;
    }

    int count(int slot) {
        return counts[slot];
    }

    /** Adds {@code weight} to the summed weight of the id in {@code slot}. */
    void addMass(int slot, double weight) {
        masses[slot] += weight;
    }

    double mass(int slot) {
        return masses[slot];
    }

    private static int mix(int id) {
        int h = id * 0x9E3779B9;
        return h ^ (h >>> 16);
    }
}
