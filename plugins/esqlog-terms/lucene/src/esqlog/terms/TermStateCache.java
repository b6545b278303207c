package esqlog.terms;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;

import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.TermState;
import org.apache.lucene.util.BytesRef;

/**
 * Where each (segment, field, term) was found in the terms dictionary: its TermState, or that
 * the segment has no such term. A group's weight takes its terms' states from here instead of
 * seeking every term in every segment (an identifiers query names ~300 terms, most of them
 * absent from most segments and most of them named by an earlier query, and those seeks were
 * the larger part of its query phase).
 *
 * <p>Bounded: entries are counted in estimated bytes against a budget, absent terms against a
 * separate quarter of it (so a flood of made-up terms cannot push out real ones), and evicted
 * by a clock (second chance: an entry read since the hand last passed survives one more pass).
 * Lookups take no lock (one concurrent map per segment core); one thread at a time evicts and
 * the others go on. A segment's entries go when its core closes (the reader's closed listener),
 * so merges and refreshes free what they obsolete.
 */
public final class TermStateCache {
    /** The node setting (bytes or % of heap); 0 turns the cache off. */
    public static final String SETTING = "esqlog.terms.postings_cache_size";
    /** Its default: small, since a hit saves a seek (microseconds) and not a postings read. */
    public static final String DEFAULT = "1%";

    /** Estimated bytes of a present entry beyond its key: map node, entry, a block TermState. */
    static final int PRESENT_OVERHEAD = 200;
    /** Estimated bytes of an absent entry beyond its key: map node, entry. */
    static final int ABSENT_OVERHEAD = 100;

    /**
     * Where the cache's bytes are also counted: the engine's circuit breaker (each engine's
     * plugin registers one), so that the node's memory accounting sees the cache and a node
     * short of memory stops filling it. Without one (Lucene tests) nothing is counted.
     */
    public interface Accounting {
        /** Counts {@code bytes} more; false (nothing counted) if the breaker refuses them. */
        boolean reserve(long bytes);

        /** Counts {@code bytes} fewer. */
        void release(long bytes);

        /** The breaker's limit in bytes (-1: none). */
        long limit();
    }

    static final Accounting UNCOUNTED = new Accounting() {
        @Override
        public boolean reserve(long bytes) {
            return true;
        }

        @Override
        public void release(long bytes) {
        }

        @Override
        public long limit() {
            return -1;
        }
    };

    /**
     * The node's cache. Declared after UNCOUNTED: a static field is set in the order written,
     * and the cache made here reads UNCOUNTED as its accounting (declared first, it read null,
     * so that the cache before the plugin installed its own failed on its stats).
     */
    private static volatile TermStateCache shared = new TermStateCache(0);

    private final long presentBudget;
    private final long absentBudget;
    private final Map<IndexReader.CacheKey, Segment> segments = new ConcurrentHashMap<>();
    /** Each open top-level reader's cached views, by field (CachedTermsView). */
    final Map<IndexReader.CacheKey, Map<String, IndexReader>> views = new ConcurrentHashMap<>();
    private final AtomicLong presentBytes = new AtomicLong();
    private final AtomicLong absentBytes = new AtomicLong();
    private final AtomicLong entries = new AtomicLong();
    private final LongAdder hits = new LongAdder();
    private final LongAdder misses = new LongAdder();
    private final LongAdder evictions = new LongAdder();
    private final LongAdder refused = new LongAdder();
    private volatile Accounting accounting = UNCOUNTED;
    private final ReentrantLock evicting = new ReentrantLock();
    private int hand;

    /** A cache of at most {@code bytes} estimated bytes (a quarter for absent terms). */
    public TermStateCache(long bytes) {
        this.absentBudget = Math.max(0, bytes) / 4;
        this.presentBudget = Math.max(0, bytes) - absentBudget;
    }

    /** The node's cache, which every group's weight uses (off until the plugin sets it). */
    public static TermStateCache shared() {
        return shared;
    }

    /** Installs the node's cache (each engine's plugin, from its setting, at start). */
    public static void install(TermStateCache cache) {
        shared = cache;
    }

    /** Counts the entries in {@code to} from now on (the engine's breaker, once, at start). */
    public void account(Accounting to) {
        accounting = to;
    }

    public boolean enabled() {
        return presentBudget > 0;
    }

    /** A cached entry of one segment core: the state, or null for a term the segment lacks. */
    static final class Entry {
        final TermState state;
        final int docFreq;
        final long totalTermFreq;
        final int bytes;
        volatile boolean referenced;
        /** Where its bytes were counted (released there, even if the accounting changed). */
        Accounting accounting = UNCOUNTED;

        Entry(TermState state, int docFreq, long totalTermFreq, int bytes) {
            this.state = state;
            this.docFreq = docFreq;
            this.totalTermFreq = totalTermFreq;
            this.bytes = bytes;
        }
    }

    /** One segment core's entries, keyed by field + 0xFF + term bytes. */
    final class Segment {
        final ConcurrentHashMap<BytesRef, Entry> map = new ConcurrentHashMap<>();
        final IndexReader.CacheKey core;

        Segment(IndexReader.CacheKey core) {
            this.core = core;
        }

        Entry get(BytesRef key) {
            Entry entry = map.get(key);
            if (entry == null) {
                misses.increment();
            } else {
                hits.increment();
                entry.referenced = true;
            }
            return entry;
        }

        /** Records where the segment has the term (its state and statistics), or null: absent. */
        void put(BytesRef key, TermState state, int docFreq, long totalTermFreq) {
            boolean absent = state == null;
            Entry entry = new Entry(state, docFreq, totalTermFreq,
                key.length + (absent ? ABSENT_OVERHEAD : PRESENT_OVERHEAD));
            Accounting counted = accounting;
            if (!counted.reserve(entry.bytes)) {
                refused.increment();  // the node is short of memory: not cached
                return;
            }
            entry.accounting = counted;
            if (map.putIfAbsent(key, entry) != null) {
                counted.release(entry.bytes);
                return;
            }
            entries.incrementAndGet();
            AtomicLong used = absent ? absentBytes : presentBytes;
            long total = used.addAndGet(entry.bytes);
            if (segments.get(core) != this && map.remove(key, entry)) {
                release(entry);  // the core closed meanwhile: nothing may stay counted
            } else if (total > (absent ? absentBudget : presentBudget)) {
                evict(absent);
            }
        }
    }

    /** The entries of this segment core (null if the reader offers no core key: not cached). */
    Segment segment(IndexReader.CacheHelper helper) {
        if (helper == null || !enabled()) {
            return null;
        }
        IndexReader.CacheKey key = helper.getKey();
        Segment segment = segments.get(key);
        if (segment != null) {
            return segment;
        }
        Segment created = new Segment(key);
        segment = segments.putIfAbsent(key, created);
        if (segment == null) {
            helper.addClosedListener(this::drop);
            segment = created;
        }
        return segment;
    }

    /** A closed segment core's entries: gone, and their bytes returned to the budgets. */
    void drop(IndexReader.CacheKey key) {
        Segment segment = segments.remove(key);
        if (segment == null) {
            return;
        }
        for (Iterator<Entry> it = segment.map.values().iterator(); it.hasNext(); ) {
            release(it.next());
            it.remove();
        }
    }

    private void release(Entry entry) {
        (entry.state == null ? absentBytes : presentBytes).addAndGet(-entry.bytes);
        entries.decrementAndGet();
        entry.accounting.release(entry.bytes);
    }

    /**
     * Evicts entries of one kind down to 90% of its budget, the clock's hand going round the
     * segments (from where it last stopped) and their entries; if another thread is evicting,
     * returns at once (the budget is overrun by at most what threads add meanwhile).
     */
    private void evict(boolean absent) {
        if (!evicting.tryLock()) {
            return;
        }
        try {
            AtomicLong used = absent ? absentBytes : presentBytes;
            long target = (absent ? absentBudget : presentBudget) / 10 * 9;
            List<Segment> all = new ArrayList<>(segments.values());
            for (int pass = 0; pass < 3 && used.get() > target && !all.isEmpty(); pass++) {
                for (int i = 0; i < all.size() && used.get() > target; i++) {
                    hand = (hand + 1) % all.size();
                    Segment segment = all.get(hand);
                    for (Iterator<Map.Entry<BytesRef, Entry>> it = segment.map.entrySet().iterator();
                            it.hasNext() && used.get() > target; ) {
                        Map.Entry<BytesRef, Entry> next = it.next();
                        Entry entry = next.getValue();
                        if ((entry.state == null) != absent) {
                            continue;
                        }
                        if (entry.referenced) {
                            entry.referenced = false;
                        } else if (segment.map.remove(next.getKey(), entry)) {
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
        out.put("size_in_bytes", presentBytes.get() + absentBytes.get());
        out.put("present_size_in_bytes", presentBytes.get());
        out.put("absent_size_in_bytes", absentBytes.get());
        out.put("limit_in_bytes", presentBudget + absentBudget);
        out.put("absent_limit_in_bytes", absentBudget);
        out.put("entries", entries.get());
        out.put("segments", (long) segments.size());
        out.put("hits", hits.sum());
        out.put("misses", misses.sum());
        out.put("evictions", evictions.sum());
        out.put("breaker_limit_in_bytes", accounting.limit());
        out.put("breaker_refused", refused.sum());
        return out;
    }
}
