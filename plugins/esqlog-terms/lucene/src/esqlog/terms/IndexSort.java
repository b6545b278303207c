package esqlog.terms;

/**
 * The stable sort of the clause budget's shared candidates ({@link Candidates}), over candidate
 * numbers: a merge sort of an int array (no boxing), a few hundred numbers.
 */
final class IndexSort {
    private IndexSort() {
    }

    /** {@code order[0, count)} by tier (lowest first), then mass (largest first), stable. */
    static void byTierThenMass(int[] order, int count, double[] tier, double[] mass) {
        sort(order, count, (a, b) -> tier[a] < tier[b] ? -1 : tier[a] > tier[b] ? 1
            : mass[a] > mass[b] ? -1 : mass[a] < mass[b] ? 1 : 0);
    }

    private interface Order {
        int compare(int a, int b);
    }

    private static void sort(int[] values, int count, Order order) {
        if (count < 2) {
            return;
        }
        int[] scratch = new int[count];
        int[] from = values;
        int[] to = scratch;
        for (int width = 1; width < count; width *= 2) {
            for (int lo = 0; lo < count; lo += 2 * width) {
                int mid = Math.min(lo + width, count);
                int hi = Math.min(lo + 2 * width, count);
                int i = lo;
                int j = mid;
                int k = lo;
                while (i < mid && j < hi) {
                    to[k++] = order.compare(from[j], from[i]) < 0 ? from[j++] : from[i++];
                }
                while (i < mid) {
                    to[k++] = from[i++];
                }
                while (j < hi) {
                    to[k++] = from[j++];
                }
            }
            int[] swap = from;
            from = to;
            to = swap;
        }
        if (from != values) {
            System.arraycopy(from, 0, values, 0, count);
        }
    }
}
