package esqlog.terms;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.lucene.index.BaseTermsEnum;
import org.apache.lucene.index.FilterLeafReader;
import org.apache.lucene.index.ImpactsEnum;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.IndexReaderContext;
import org.apache.lucene.index.LeafReader;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.MultiReader;
import org.apache.lucene.index.PostingsEnum;
import org.apache.lucene.index.SlowImpactsEnum;
import org.apache.lucene.index.TermState;
import org.apache.lucene.index.Terms;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.util.BytesRef;

/**
 * The engine searcher's segments, in the same order (so the same leaf ords), whose terms
 * dictionary on one field answers a seek from the {@link TermStateCache} when it can: a term
 * known absent costs a map lookup, a known term is positioned by its cached TermState (no
 * dictionary block read). Lucene's own weights build their TermStates through it; since a
 * TermState is only looked up by leaf ord and then applied to the segment's own dictionary, the
 * weight then scores the engine's leaves unchanged (same postings, impacts and norms).
 */
final class CachedTermsView {
    private CachedTermsView() {
    }

    /**
     * The view of {@code searcher}'s reader for {@code field}: one per reader and field, made
     * by the first group that asks and kept until the reader closes (its closed listener), so
     * the many groups of a request do not each wrap every segment; made afresh where the
     * reader offers no cache key or the searcher is over part of it.
     */
    static IndexReader of(IndexSearcher searcher, String field, TermStateCache cache)
            throws IOException {
        return of(searcher, field, cache, false);
    }

    /**
     * As {@link #of(IndexSearcher, String, TermStateCache)}; {@code rare} true: the view in
     * which a group's rare terms (under {@link RareTerms#MAX_DF} documents in a segment) answer
     * as absent and its {@link RareTerms#key rare-terms key} answers for all of them at once.
     */
    static IndexReader of(IndexSearcher searcher, String field, TermStateCache cache,
                          boolean rare) throws IOException {
        IndexReader reader = searcher.getIndexReader();
        IndexReader.CacheHelper helper = reader.getReaderCacheHelper();
        if (helper == null || searcher.getTopReaderContext() != reader.getContext()) {
            return of(searcher.getTopReaderContext(), field, cache, rare);
        }
        Map<String, IndexReader> views = cache.views.get(helper.getKey());
        if (views == null) {
            Map<String, IndexReader> created = new ConcurrentHashMap<>();
            views = cache.views.putIfAbsent(helper.getKey(), created);
            if (views == null) {
                helper.addClosedListener(cache.views::remove);
                views = created;
            }
        }
        String name = rare ? field + "\u0000rare" : field;
        IndexReader view = views.get(name);
        if (view == null) {
            view = of(reader.getContext(), field, cache, rare);
            IndexReader raced = views.putIfAbsent(name, view);
            view = raced == null ? view : raced;
        }
        return view;
    }

    /** A reader over {@code top}'s leaves, caching seeks on {@code field}. */
    static IndexReader of(IndexReaderContext top, String field, TermStateCache cache)
            throws IOException {
        return of(top, field, cache, false);
    }

    static IndexReader of(IndexReaderContext top, String field, TermStateCache cache,
                          boolean rare) throws IOException {
        List<LeafReaderContext> leaves = top.leaves();
        byte[] name = field.getBytes(StandardCharsets.UTF_8);
        byte[] prefix = Arrays.copyOf(name, name.length + 1);
        prefix[name.length] = (byte) 0xFF;  // no UTF-8 byte: field and term split unambiguously
        IndexReader[] subs = new IndexReader[leaves.size()];
        for (int i = 0; i < subs.length; i++) {
            LeafReader leaf = leaves.get(i).reader();
            subs[i] = new Leaf(leaf, field, prefix, cache.segment(leaf.getCoreCacheHelper()),
                rare);
        }
        return new MultiReader(subs, false);
    }

    /** One segment: its field's terms seek through the cache, all else is the segment's. */
    private static final class Leaf extends FilterLeafReader {
        private final String field;
        private final byte[] prefix;
        private final TermStateCache.Segment segment;
        private final boolean rare;

        Leaf(LeafReader in, String field, byte[] prefix, TermStateCache.Segment segment,
             boolean rare) {
            super(in);
            this.field = field;
            this.prefix = prefix;
            this.segment = segment;
            this.rare = rare;
        }

        @Override
        public Terms terms(String name) throws IOException {
            Terms terms = in.terms(name);
            if (terms == null || (segment == null && !rare) || !field.equals(name)) {
                return terms;
            }
            return new FilterTerms(terms) {
                @Override
                public TermsEnum iterator() throws IOException {
                    return new CachingTermsEnum(in, prefix, segment, rare, Leaf.this.in, field);
                }
            };
        }

        @Override
        public CacheHelper getCoreCacheHelper() {
            return in.getCoreCacheHelper();
        }

        @Override
        public CacheHelper getReaderCacheHelper() {
            return in.getReaderCacheHelper();
        }
    }

    /**
     * A segment's terms enum whose exact seeks go through the cache. A hit costs no terms
     * dictionary work at all: the state and statistics a weight reads after a seek come from
     * the entry, and the segment's own enum is made (and positioned by the cached state) only
     * if something else is asked. A miss seeks the segment's enum and records the outcome. A
     * BaseTermsEnum so that Lucene 10's prepareSeekExact comes here too (it calls seekExact).
     */
    static final class CachingTermsEnum extends BaseTermsEnum {
        private final Terms terms;
        private final byte[] prefix;
        private final TermStateCache.Segment segment;
        /** Rare terms answer as absent, and a rare-terms key answers for them (RareTerms). */
        private final boolean rareMode;
        private final LeafReader leaf;
        private final String field;
        private TermsEnum in;
        /** The rare terms of the last seek if it was a rare-terms key. */
        private RareTerms rare;
        /** The whole-word group of the last seek by state (WholeWordQuery). */
        private WordTerms word;
        /** The entry of the last seek if it was a hit the segment's enum is not positioned on. */
        private TermStateCache.Entry current;
        private BytesRef currentTerm;

        CachingTermsEnum(Terms terms, byte[] prefix, TermStateCache.Segment segment) {
            this(terms, prefix, segment, false, null, null);
        }

        /** {@code leaf} and {@code field}: whose norms a rare-terms list's impacts read. */
        CachingTermsEnum(Terms terms, byte[] prefix, TermStateCache.Segment segment,
                         boolean rareMode, LeafReader leaf, String field) {
            this.terms = terms;
            this.prefix = prefix;
            this.segment = segment;
            this.rareMode = rareMode;
            this.leaf = leaf;
            this.field = field;
        }

        private BytesRef key(BytesRef term) {
            byte[] bytes = Arrays.copyOf(prefix, prefix.length + term.length);
            System.arraycopy(term.bytes, term.offset, bytes, prefix.length, term.length);
            return new BytesRef(bytes);
        }

        /** The segment's own enum, unpositioned by a cached hit. */
        private TermsEnum in() throws IOException {
            if (in == null) {
                in = terms.iterator();
            }
            current = null;
            rare = null;
            word = null;
            return in;
        }

        /** The segment's own enum, on the term of the last seek. */
        private TermsEnum positioned() throws IOException {
            TermStateCache.Entry entry = current;
            TermsEnum out = in();
            if (entry != null) {
                out.seekExact(currentTerm, entry.state);
            }
            return out;
        }

        @Override
        public boolean seekExact(BytesRef text) throws IOException {
            rare = null;
            word = null;
            if (rareMode && RareTerms.isKey(text)) {
                RareTerms found = RareTerms.find(text, this);
                current = null;
                rare = found;
                currentTerm = found == null ? null : BytesRef.deepCopyOf(text);
                return found != null;
            }
            boolean found = seek(text);
            return found && !(rareMode && docFreq() < RareTerms.MAX_DF);
        }

        /** The exact seek of a real term through the cache (a hit positions nothing). */
        boolean seek(BytesRef text) throws IOException {
            rare = null;
            word = null;
            if (segment == null) {  // no cache (the rare view of whole-word groups)
                return in().seekExact(text);
            }
            BytesRef key = key(text);
            TermStateCache.Entry entry = segment.get(key);
            if (entry != null) {
                current = entry.state == null ? null : entry;
                currentTerm = entry.state == null ? null
                    : new BytesRef(key.bytes, prefix.length, key.length - prefix.length);
                return entry.state != null;
            }
            TermsEnum out = in();
            boolean found = out.seekExact(text);
            if (found) {
                segment.put(key, out.termState(), out.docFreq(), out.totalTermFreq());
            } else {
                segment.put(key, null, 0, 0);
            }
            return found;
        }

        @Override
        public void seekExact(BytesRef term, TermState state) throws IOException {
            if (state instanceof RareTerms found) {
                current = null;
                rare = found;
                word = null;
                currentTerm = BytesRef.deepCopyOf(term);
                return;
            }
            if (state instanceof WordTerms found) {
                current = null;
                rare = null;
                word = found;
                currentTerm = BytesRef.deepCopyOf(term);
                return;
            }
            in().seekExact(term, state);
        }

        @Override
        public TermState termState() throws IOException {
            if (word != null) {
                return word;
            }
            if (rare != null) {
                return rare;
            }
            return current != null ? current.state : in().termState();
        }

        @Override
        public int docFreq() throws IOException {
            if (word != null) {
                return word.docFreq();
            }
            if (rare != null) {
                return rare.docFreq();
            }
            return current != null ? current.docFreq : in().docFreq();
        }

        @Override
        public long totalTermFreq() throws IOException {
            if (word != null) {
                return word.totalTermFreq();
            }
            if (rare != null) {
                return rare.totalTermFreq();
            }
            return current != null ? current.totalTermFreq : in().totalTermFreq();
        }

        @Override
        public BytesRef term() throws IOException {
            return current != null || rare != null || word != null ? currentTerm
                : in().term();
        }

        @Override
        public SeekStatus seekCeil(BytesRef text) throws IOException {
            return in().seekCeil(text);
        }

        @Override
        public void seekExact(long ord) throws IOException {
            in().seekExact(ord);
        }

        @Override
        public long ord() throws IOException {
            return positioned().ord();
        }

        @Override
        public PostingsEnum postings(PostingsEnum reuse, int flags) throws IOException {
            if (word != null) {
                return word.postings(flags, false);
            }
            if (rare != null) {
                RareTerms found = rare;
                return found.postings(in(), flags, null, false, 0);
            }
            return positioned().postings(reuse, flags);
        }

        @Override
        public ImpactsEnum impacts(int flags) throws IOException {
            if (word != null) {
                return word.postings(flags, true);
            }
            if (rare != null) {
                RareTerms found = rare;
                if (leaf == null) {  // no norms to read: the largest impact, as for one block
                    return new SlowImpactsEnum(found.postings(in(), flags, null, false, 0));
                }
                return found.postings(in(), flags, leaf.getNormValues(field), true,
                    leaf.maxDoc());
            }
            return positioned().impacts(flags);
        }

        @Override
        public BytesRef next() throws IOException {
            return positioned().next();
        }
    }
}
