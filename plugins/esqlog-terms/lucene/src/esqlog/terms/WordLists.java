package esqlog.terms;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The word lists the node has fetched for {@code esqlog_identifiers} queries, by word-lists
 * index and word: a query's dozen words are mostly those of earlier queries, so after the
 * first searches a plan reads every list from here and sends no multi-get.
 *
 * <p>Bounded as {@link TermStateCache} is: entries counted in estimated bytes against a
 * budget (and in the engine's breaker), evicted by a clock (an entry read since the hand last
 * passed survives one more pass), lookups without a lock, one thread at a time evicting. A
 * word-lists index is named by the checksum of the statistics it was written from, so an
 * entry never goes stale: a new calibration writes (and its wrappers name) another index.
 */
public final class WordLists {
    /** The node setting (bytes or % of heap); 0 keeps no list (each query fetches its own). */
    public static final String SETTING = "esqlog.terms.word_lists_cache_size";
    public static final String DEFAULT = "4%";

    private static volatile WordLists shared = new WordLists(0);

    private final long budget;
    private final ConcurrentHashMap<String, Entry> map = new ConcurrentHashMap<>();
    private final AtomicLong bytes = new AtomicLong();
    private final LongAdder hits = new LongAdder();
    private final LongAdder misses = new LongAdder();
    private final LongAdder evictions = new LongAdder();
    private final LongAdder refused = new LongAdder();
    private final ReentrantLock evicting = new ReentrantLock();
    private volatile TermStateCache.Accounting accounting = TermStateCache.UNCOUNTED;

    private static final class Entry {
        final WordList list;
        final long bytes;
        /** Set when read, and when new: a list just fetched is not the next to go. */
        volatile boolean referenced = true;
        TermStateCache.Accounting accounting = TermStateCache.UNCOUNTED;

        Entry(WordList list, long bytes) {
            this.list = list;
            this.bytes = bytes;
        }
    }

    public WordLists(long budget) {
        this.budget = Math.max(0, budget);
    }

    /** The node's cache, which every esqlog_identifiers query uses (set at start). */
    public static WordLists shared() {
        return shared;
    }

    public static void install(WordLists lists) {
        shared = lists;
    }

    /** Counts the entries in {@code to} from now on (the engine's breaker, once, at start). */
    public void account(TermStateCache.Accounting to) {
        accounting = to;
    }

    static String key(String index, String word) {
        return index + '\u0000' + word;
    }

    /** The list of {@code word} from {@code index}, or null when this node has not kept it. */
    public WordList get(String index, String word) {
        Entry entry = map.get(key(index, word));
        if (entry == null) {
            misses.increment();
            return null;
        }
        hits.increment();
        entry.referenced = true;
        return entry.list;
    }

    /** Keeps {@code list} when the budget and the breaker allow it (else only this query has it). */
    public void put(String index, String word, WordList list) {
        long size = list.bytes() + 2L * (index.length() + word.length()) + 64;
        if (size > budget / 4) {
            refused.increment();  // one list may not push out a quarter of the others
            return;
        }
        Entry entry = new Entry(list, size);
        TermStateCache.Accounting counted = accounting;
        if (!counted.reserve(size)) {
            refused.increment();
            return;
        }
        entry.accounting = counted;
        if (map.putIfAbsent(key(index, word), entry) != null) {
            counted.release(size);
            return;
        }
        if (bytes.addAndGet(size) > budget) {
            evict();
        }
    }

    private void evict() {
        if (!evicting.tryLock()) {
            return;
        }
        try {
            long target = budget / 10 * 9;
            for (int pass = 0; pass < 3 && bytes.get() > target; pass++) {
                for (Iterator<Map.Entry<String, Entry>> it = map.entrySet().iterator();
                        it.hasNext() && bytes.get() > target; ) {
                    Map.Entry<String, Entry> next = it.next();
                    Entry entry = next.getValue();
                    if (entry.referenced) {
                        entry.referenced = false;
                    } else if (map.remove(next.getKey(), entry)) {
                        bytes.addAndGet(-entry.bytes);
                        entry.accounting.release(entry.bytes);
                        evictions.increment();
                    }
                }
            }
        } finally {
            evicting.unlock();
        }
    }

    /** Size, budget and counters, for the plugin's stats endpoint and tests. */
    public Map<String, Long> stats() {
        Map<String, Long> out = new LinkedHashMap<>();
        out.put("size_in_bytes", bytes.get());
        out.put("limit_in_bytes", budget);
        out.put("entries", (long) map.size());
        out.put("hits", hits.sum());
        out.put("misses", misses.sum());
        out.put("evictions", evictions.sum());
        out.put("refused", refused.sum());
        return out;
    }
}
