package esqlog.terms;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.lucene.index.IndexReader;
import org.apache.lucene.util.BytesRef;

/**
 * The postings of rare terms, and the absence of terms, per segment: what SaturationLeaf would
 * otherwise look up in the terms dictionary on every query.
 *
 * <p>Why: an identifiers query lists ~300 terms, mostly rare compounds, and on every shard the
 * engine seeks each one in the terms dictionary (a term a shard lacks costs three quarters of
 * a term it holds). Consecutive queries share most of their compounds (~70% of the terms of
 * 2,000 doc-comment queries were listed by an earlier one). A segment's postings never change
 * (deletions are applied by the collector's live docs, not here), so its terms' postings can
 * be kept for as long as the segment core lives: its entries go when it closes.
 *
 * <p>Bounded by bytes (the node setting {@code esqlog.terms.postings_cache_size}; off unless
 * set). Once full it admits nothing more until a segment closes: evicting instead (tried
 * first in and first out) turned every entry into garbage once the terms queried outgrew the
 * bound, and on a 1 GB heap the collector's work tripped the engine's memory circuit breaker.
 * Only terms of at most {@link #MAX_DOCS} documents are kept: longer lists are read as before.
 */
final class PostingsCache {
    /** The node setting of the byte budget, and its default (off): both engines' plugins. */
    static final String SETTING = "esqlog.terms.postings_cache_size";
    static final String DEFAULT = "0%";
    /** Terms with more documents in the segment are read from the index every time. */
    static final int MAX_DOCS = 4096;
    /** A term the segment does not hold. */
    static final int[][] ABSENT = new int[][] {new int[0], new int[0]};

    private static volatile PostingsCache shared = new PostingsCache(0);

    private final long budget;
    private final AtomicLong bytes = new AtomicLong();
    private final Map<Object, Segment> segments = new ConcurrentHashMap<>();

    PostingsCache(long budget) {
        this.budget = budget;
    }

    /** The node's cache, or null when it is turned off. */
    static PostingsCache shared() {
        PostingsCache cache = shared;
        return cache.budget > 0 ? cache : null;
    }

    /** Sets the node's byte budget (from its settings, when the plugin loads). */
    static void configure(long bytes) {
        shared = new PostingsCache(Math.max(bytes, 0));
    }

    /** The entries of one segment core, created with a listener that drops them when the
     * core closes; null when the reader has no core cache key. */
    Segment segment(IndexReader.CacheHelper helper) {
        if (helper == null) {
            return null;
        }
        IndexReader.CacheKey core = helper.getKey();
        Segment found = segments.get(core);
        if (found != null) {
            return found;
        }
        Segment created = new Segment();
        found = segments.putIfAbsent(core, created);
        if (found != null) {
            return found;
        }
        helper.addClosedListener(key -> {
            Segment gone = segments.remove(key);
            if (gone != null) {
                bytes.addAndGet(-gone.bytes);
            }
        });
        return created;
    }

    /** One segment core's terms: (field, term) -> (docs, freqs) or {@link #ABSENT}. */
    final class Segment {
        private final Map<Key, int[][]> entries = new HashMap<>();
        private long bytes;

        /** The postings, {@link #ABSENT}, or null when not known; {@code termHash} is the
         * term's hashCode. */
        synchronized int[][] get(String field, BytesRef term, int termHash) {
            return entries.get(new Key(field, term, termHash));
        }

        /** Remembers the term's postings ({@link #ABSENT}: none), unless the cache is full. */
        void put(String field, BytesRef term, int termHash, int[][] postings) {
            long size = entryBytes(term, postings);
            if (PostingsCache.this.bytes.addAndGet(size) > budget) {
                PostingsCache.this.bytes.addAndGet(-size);
                return;
            }
            synchronized (this) {
                if (entries.putIfAbsent(new Key(field, BytesRef.deepCopyOf(term), termHash),
                                        postings) == null) {
                    bytes += size;
                    return;
                }
            }
            PostingsCache.this.bytes.addAndGet(-size);  // another thread put it first
        }
    }

    /**
     * The heap an entry holds, as a class histogram of a filled cache counts it: the map's
     * entry (32 bytes), the key and its BytesRef (48), the term's bytes (16 + length, to 8),
     * and unless the term is absent the two arrays (24 + 2 * 16 + 8 per document).
     */
    private static long entryBytes(BytesRef term, int[][] postings) {
        long own = 96 + ((term.length + 7) & ~7L);
        return postings == ABSENT ? own : own + 56 + 8L * postings[0].length;
    }

    /** A field and a term, hashed once per query (the term's hash comes from the query). */
    private static final class Key {
        final String field;
        final BytesRef term;
        final int hash;

        Key(String field, BytesRef term, int termHash) {
            this.field = field;
            this.term = term;
            this.hash = 31 * field.hashCode() + termHash;
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof Key key && key.hash == hash
                && (key.field == field || key.field.equals(field)) && key.term.equals(term);
        }

        @Override
        public int hashCode() {
            return hash;
        }
    }
}
