package esqlog.terms;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;

import org.apache.lucene.index.IndexReader;

/**
 * The whole-word groups ({@link WordTerms}) the node has read, by segment core and word: a
 * query's words are mostly those of earlier queries (62-85% on Go and Java doc comments), so
 * after the first searches a {@code select: "all"} query reads each word's group from here.
 *
 * <p>Bounded as {@link TermStateCache} is: entries in estimated bytes against a budget and in
 * the engine's breaker, evicted by a clock (an entry read since the hand last passed survives
 * one more pass), lookups without a lock, one thread at a time evicting; a segment's entries
 * go when its core closes, so merges and refreshes free what they obsolete. Admission: while
 * there is room every group read is kept; once full, a group is kept only the second time it
 * is read within the doorkeeper's memory (the keys of recent refusals), so that words seen
 * once do not push out those named again and again; one group may not take more than an
 * eighth of the budget. A group not kept serves its query and is then garbage.
 */
public final class WordPostings {
    /** The node setting (bytes or % of heap); 0 keeps no group (each query reads its own). */
    public static final String SETTING = "esqlog.terms.word_postings_cache_size";
    public static final String DEFAULT = "5%";
    /** Refused keys the doorkeeper remembers before it forgets them all. */
    static final int DOORKEEPER = 4096;

    private static volatile WordPostings shared = new WordPostings(0);

    private final long budget;
    private final Map<IndexReader.CacheKey, Map<String, Entry>> segments =
        new ConcurrentHashMap<>();
    private final Set<String> doorkeeper = ConcurrentHashMap.newKeySet();
    private final AtomicLong bytes = new AtomicLong();
    private final AtomicLong entries = new AtomicLong();
    private final LongAdder hits = new LongAdder();
    private final LongAdder misses = new LongAdder();
    private final LongAdder evictions = new LongAdder();
    private final LongAdder refused = new LongAdder();
    private final LongAdder readNanos = new LongAdder();
    private final ReentrantLock evicting = new ReentrantLock();
    private volatile TermStateCache.Accounting accounting = TermStateCache.UNCOUNTED;
    private int hand;

    private static final class Entry {
        final WordTerms group;
        final long bytes;
        volatile boolean referenced = true;
        TermStateCache.Accounting accounting = TermStateCache.UNCOUNTED;

        Entry(WordTerms group, long bytes) {
            this.group = group;
            this.bytes = bytes;
        }
    }

    public WordPostings(long budget) {
        this.budget = Math.max(0, budget);
    }

    /** The node's cache, which every whole-word group uses (set at start). */
    public static WordPostings shared() {
        return shared;
    }

    public static void install(WordPostings cache) {
        shared = cache;
    }

    /** Counts the entries in {@code to} from now on (the engine's breaker, once, at start). */
    public void account(TermStateCache.Accounting to) {
        accounting = to;
    }

    /** The group {@code key} of the segment core {@code core}, or null if not kept. */
    WordTerms get(IndexReader.CacheHelper core, String key) {
        Map<String, Entry> segment = core == null ? null : segments.get(core.getKey());
        Entry entry = segment == null ? null : segment.get(key);
        if (entry == null) {
            misses.increment();
            return null;
        }
        hits.increment();
        entry.referenced = true;
        return entry.group;
    }

    /** Counts the time a group took to read (for the stats: what a miss costs). */
    void read(long nanos) {
        readNanos.add(nanos);
    }

    /**
     * Keeps {@code group} when the admission rule, the budget and the breaker allow it; true
     * if the cache holds it now (this one, or the same group another thread read meanwhile).
     */
    boolean put(IndexReader.CacheHelper core, String key, WordTerms group) {
        long size = group.bytes() + 2L * key.length() + 64;
        if (core == null || size > budget / 8) {
            refused.increment();
            return false;
        }
        String seen = core.getKey().hashCode() + ":" + key;
        if (bytes.get() + size > budget && !doorkeeper.remove(seen)) {
            if (doorkeeper.size() >= DOORKEEPER) {
                doorkeeper.clear();
            }
            doorkeeper.add(seen);  // full, and new: kept if asked again soon
            refused.increment();
            return false;
        }
        TermStateCache.Accounting counted = accounting;
        if (!counted.reserve(size)) {
            refused.increment();  // the node is short of memory
            return false;
        }
        Entry entry = new Entry(group, size);
        entry.accounting = counted;
        Map<String, Entry> segment = segments.get(core.getKey());
        if (segment == null) {
            Map<String, Entry> made = new ConcurrentHashMap<>();
            segment = segments.putIfAbsent(core.getKey(), made);
            if (segment == null) {
                segment = made;
                core.addClosedListener(this::drop);
            }
        }
        if (segment.putIfAbsent(key, entry) != null) {
            counted.release(size);
            return true;
        }
        entries.incrementAndGet();
        long total = bytes.addAndGet(size);
        if (segments.get(core.getKey()) != segment && segment.remove(key, entry)) {
            release(entry);  // the core closed meanwhile: nothing may stay counted
            return false;
        }
        if (total > budget) {
            evict();
        }
        return true;
    }

    /** A closed segment core's groups: gone, their bytes returned. */
    void drop(IndexReader.CacheKey core) {
        Map<String, Entry> segment = segments.remove(core);
        if (segment == null) {
            return;
        }
        for (Iterator<Entry> it = segment.values().iterator(); it.hasNext(); ) {
            release(it.next());
            it.remove();
        }
    }

    private void release(Entry entry) {
        bytes.addAndGet(-entry.bytes);
        entries.decrementAndGet();
        entry.accounting.release(entry.bytes);
    }

    /** Evicts down to 90% of the budget, the clock's hand going round the segments. */
    private void evict() {
        if (!evicting.tryLock()) {
            return;
        }
        try {
            long target = budget / 10 * 9;
            List<Map<String, Entry>> all = new ArrayList<>(segments.values());
            for (int pass = 0; pass < 3 && bytes.get() > target && !all.isEmpty(); pass++) {
                for (int i = 0; i < all.size() && bytes.get() > target; i++) {
                    hand = (hand + 1) % all.size();
                    Map<String, Entry> segment = all.get(hand);
                    for (Iterator<Map.Entry<String, Entry>> it = segment.entrySet().iterator();
                            it.hasNext() && bytes.get() > target; ) {
                        Map.Entry<String, Entry> next = it.next();
                        Entry entry = next.getValue();
                        if (entry.referenced) {
                            entry.referenced = false;
                        } else if (segment.remove(next.getKey(), entry)) {
                            release(entry);
                            evictions.increment();
                        }
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
        out.put("entries", entries.get());
        out.put("segments", (long) segments.size());
        out.put("hits", hits.sum());
        out.put("misses", misses.sum());
        out.put("evictions", evictions.sum());
        out.put("refused", refused.sum());
        out.put("read_millis", readNanos.sum() / 1_000_000);
        return out;
    }
}
