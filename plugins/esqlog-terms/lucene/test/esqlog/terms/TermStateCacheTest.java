package esqlog.terms;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.store.Directory;
import org.apache.lucene.tests.analysis.MockAnalyzer;
import org.apache.lucene.tests.analysis.MockTokenizer;
import org.apache.lucene.tests.util.LuceneTestCase;
import org.apache.lucene.util.BytesRef;

/**
 * TermStateCache through SaturationQuery on a real index: its budgets hold (present and absent
 * terms apart, absent ones unable to push out present ones), it evicts and keeps answering
 * when full, a closed segment's entries and bytes go, and the scores are the same with and
 * without it.
 */
public class TermStateCacheTest extends LuceneTestCase {
    private static final String FIELD = "body";
    private static final String OTHER = "title";

    private Directory dir;
    private IndexWriter writer;

    @Override
    public void setUp() throws Exception {
        super.setUp();
        dir = newDirectory();
        writer = new IndexWriter(dir, new IndexWriterConfig(
            new MockAnalyzer(random(), MockTokenizer.WHITESPACE, false))
            .setSimilarity(new BM25Similarity()).setMergePolicy(apartUntilForced()));
        for (int segment = 0; segment < 3; segment++) {
            for (int d = 0; d < 50; d++) {
                StringBuilder text = new StringBuilder();
                for (int i = 0; i < 1 + (d % 7); i++) {
                    text.append(" w").append((d * 13 + i * 7 + segment) % 200);
                }
                Document doc = new Document();
                doc.add(new TextField(FIELD, text.toString(), Field.Store.NO));
                // the same words on another field, elsewhere: a cache keyed by term alone mixes them
                doc.add(new TextField(OTHER, " w" + (d * 3 + segment) % 40 + " w" + d % 3,
                    Field.Store.NO));
                writer.addDocument(doc);
            }
            writer.commit();
        }
    }

    @Override
    public void tearDown() throws Exception {
        TermStateCache.install(new TermStateCache(0));
        writer.close();
        dir.close();
        super.tearDown();
    }

    /** Keeps the three committed segments apart until forceMerge. */
    private static org.apache.lucene.index.MergePolicy apartUntilForced() {
        org.apache.lucene.index.LogDocMergePolicy policy =
            new org.apache.lucene.index.LogDocMergePolicy();
        policy.setMergeFactor(1000);
        return policy;
    }

    private static Query group(String... terms) {
        return groupOn(FIELD, terms);
    }

    private static Query groupOn(String field, String... terms) {
        List<BytesRef> bytes = new ArrayList<>();
        for (String term : terms) {
            bytes.add(new BytesRef(term));
        }
        return SaturationQuery.of(field, bytes, false, SaturationQuery::luceneBm25);
    }

    private static void assertSameHits(ScoreDoc[] expected, ScoreDoc[] actual) {
        assertEquals(expected.length, actual.length);
        for (int i = 0; i < expected.length; i++) {
            assertEquals(expected[i].doc, actual[i].doc);
            assertEquals(expected[i].score, actual[i].score, 0f);
        }
    }

    public void testACachedSeekAnswersAsTheSegmentsOwn() throws IOException {
        TermStateCache cache = new TermStateCache(1 << 20);
        try (DirectoryReader reader = DirectoryReader.open(writer)) {
            org.apache.lucene.index.IndexReader view =
                CachedTermsView.of(reader.getContext(), FIELD, cache);
            for (int leaf = 0; leaf < reader.leaves().size(); leaf++) {
                for (String word : words("w", 0, 20)) {
                    BytesRef term = new BytesRef(word);
                    org.apache.lucene.index.TermsEnum own =
                        reader.leaves().get(leaf).reader().terms(FIELD).iterator();
                    boolean found = own.seekExact(term);
                    for (int pass = 0; pass < 2; pass++) {  // a miss, then a hit
                        org.apache.lucene.index.TermsEnum cached =
                            view.leaves().get(leaf).reader().terms(FIELD).iterator();
                        assertEquals(found, cached.seekExact(term));
                        if (!found) {
                            continue;
                        }
                        assertEquals(own.docFreq(), cached.docFreq());
                        assertEquals(own.totalTermFreq(), cached.totalTermFreq());
                        assertEquals(term, cached.term());
                        org.apache.lucene.index.PostingsEnum a = own.postings(null);
                        org.apache.lucene.index.PostingsEnum b = cached.postings(null);
                        for (int doc = a.nextDoc(); ; doc = a.nextDoc()) {
                            assertEquals(doc, b.nextDoc());
                            if (doc == org.apache.lucene.search.DocIdSetIterator.NO_MORE_DOCS) {
                                break;
                            }
                            assertEquals(a.freq(), b.freq());
                        }
                    }
                }
            }
            assertTrue(cache.stats().get("hits") > 0);
        }
    }

    public void testFieldsAreKeptApart() throws IOException {
        try (DirectoryReader reader = DirectoryReader.open(writer)) {
            String[] terms = words("w", 0, 45);
            TermStateCache.install(new TermStateCache(0));
            ScoreDoc[] body = search(reader, groupOn(FIELD, terms));
            ScoreDoc[] other = search(reader, groupOn(OTHER, terms));
            TermStateCache.install(new TermStateCache(1 << 20));
            for (int round = 0; round < 2; round++) {  // each field after the other's entries
                assertSameHits(body, search(reader, groupOn(FIELD, terms)));
                assertSameHits(other, search(reader, groupOn(OTHER, terms)));
            }
        }
    }

    private static ScoreDoc[] search(DirectoryReader reader, Query query) throws IOException {
        IndexSearcher searcher = new IndexSearcher(reader);
        searcher.setSimilarity(new BM25Similarity());
        return searcher.search(query, 1000).scoreDocs;
    }

    private static String[] words(String prefix, int from, int count) {
        String[] out = new String[count];
        for (int i = 0; i < count; i++) {
            out[i] = prefix + (from + i);
        }
        return out;
    }

    public void testSameScoresWithAndWithoutTheCache() throws IOException {
        try (DirectoryReader reader = DirectoryReader.open(writer)) {
            for (int round = 0; round < 10; round++) {
                Query query = group(words("w", random().nextInt(200), 1 + random().nextInt(6)));
                TermStateCache.install(new TermStateCache(0));
                ScoreDoc[] plain = search(reader, query);
                TermStateCache.install(new TermStateCache(1 << 20));
                ScoreDoc[] cold = search(reader, query);
                ScoreDoc[] warm = search(reader, query);  // every seek a hit
                assertTrue(TermStateCache.shared().stats().get("hits") > 0);
                assertSameHits(plain, cold);
                assertSameHits(plain, warm);
            }
        }
    }

    public void testBudgetsHoldAndAbsentTermsCannotPushOutPresentOnes() throws IOException {
        TermStateCache cache = new TermStateCache(8 * 1024);
        TermStateCache.install(cache);
        try (DirectoryReader reader = DirectoryReader.open(writer)) {
            search(reader, group(words("w", 0, 8)));
            Map<String, Long> before = cache.stats();
            assertTrue(before.get("present_size_in_bytes") > 0);
            assertEquals(0L, (long) before.get("evictions"));
            for (int round = 0; round < 20; round++) {  // a flood of made-up terms
                search(reader, group(words("absent", round * 50, 50)));
                Map<String, Long> stats = cache.stats();
                assertTrue(stats.get("absent_size_in_bytes")
                    <= stats.get("absent_limit_in_bytes") + 200);
                assertEquals(before.get("present_size_in_bytes"),
                    stats.get("present_size_in_bytes"));
            }
            assertTrue(cache.stats().get("evictions") > 0);
            long hits = cache.stats().get("hits");
            search(reader, group(words("w", 0, 8)));  // the present ones still cached: hits
            assertTrue(cache.stats().get("hits") > hits);
            assertEquals(before.get("present_size_in_bytes"),
                cache.stats().get("present_size_in_bytes"));
            for (int round = 0; round < 20; round++) {  // present terms beyond their budget
                search(reader, group(words("w", round * 10 % 200, 10)));
                Map<String, Long> stats = cache.stats();
                long limit = stats.get("limit_in_bytes") - stats.get("absent_limit_in_bytes");
                assertTrue(stats.get("present_size_in_bytes") <= limit + 300);
            }
        }
    }

    public void testClosedSegmentsEntriesAreFreed() throws IOException {
        TermStateCache cache = new TermStateCache(1 << 20);
        TermStateCache.install(cache);
        DirectoryReader first = DirectoryReader.open(writer);
        DirectoryReader merged = null;
        try {
        search(first, group("w1", "w2", "nothere"));
        assertEquals(3L, (long) cache.stats().get("segments"));
        long entries = cache.stats().get("entries");
        assertEquals(9L, entries);
        writer.forceMerge(1);
        writer.commit();
        merged = DirectoryReader.openIfChanged(first);
        assertNotNull(merged);
        search(merged, group("w1", "w2", "nothere"));
        assertEquals(4L, (long) cache.stats().get("segments"));
        first.close();  // the three old cores close: their entries go
        Map<String, Long> stats = cache.stats();
        assertEquals(1L, (long) stats.get("segments"));
        assertEquals(3L, (long) stats.get("entries"));
        assertEquals(2 * (TermStateCache.PRESENT_OVERHEAD + "body".length() + 1 + 2)
            + TermStateCache.ABSENT_OVERHEAD + "body".length() + 1 + 7,
            (long) stats.get("size_in_bytes"));  // the merged segment has w1 and w2
        } finally {
            org.apache.lucene.util.IOUtils.close(first, merged);
        }
    }

    /** A breaker that counts, and refuses once more than {@code room} bytes would be held. */
    private static final class Counting implements TermStateCache.Accounting {
        long held;
        long room;

        Counting(long room) {
            this.room = room;
        }

        @Override
        public boolean reserve(long bytes) {
            if (held + bytes > room) {
                return false;
            }
            held += bytes;
            return true;
        }

        @Override
        public void release(long bytes) {
            held -= bytes;
        }

        @Override
        public long limit() {
            return room;
        }
    }

    public void testTheBreakerHoldsWhatTheCacheHolds() throws IOException {
        TermStateCache cache = new TermStateCache(8 * 1024);
        Counting breaker = new Counting(1 << 20);
        cache.account(breaker);
        TermStateCache.install(cache);
        DirectoryReader reader = DirectoryReader.open(writer);
        try {
            search(reader, group(words("w", 0, 8)));
            for (int round = 0; round < 20; round++) {  // evictions release what they free
                search(reader, group(words("absent", round * 50, 50)));
                assertEquals((long) cache.stats().get("size_in_bytes"), breaker.held);
            }
            assertTrue(cache.stats().get("evictions") > 0);
            assertEquals(1L << 20, (long) cache.stats().get("breaker_limit_in_bytes"));
            long before = breaker.held;
            cache.drop(reader.leaves().get(0).reader().getCoreCacheHelper().getKey());
            assertTrue(breaker.held < before);  // a closed core's entries are released
            assertEquals((long) cache.stats().get("size_in_bytes"), breaker.held);
        } finally {
            reader.close();
        }
    }

    public void testARefusingBreakerCachesNothingAndScoresStay() throws IOException {
        try (DirectoryReader reader = DirectoryReader.open(writer)) {
            Query query = group("w1", "w2", "w3", "nothere");
            ScoreDoc[] expected = search(reader, query);
            TermStateCache cache = new TermStateCache(1 << 20);
            cache.account(new Counting(0));
            TermStateCache.install(cache);
            assertSameHits(expected, search(reader, query));
            assertSameHits(expected, search(reader, query));
            Map<String, Long> stats = cache.stats();
            assertEquals(0L, (long) stats.get("entries"));
            assertEquals(0L, (long) stats.get("size_in_bytes"));
            assertEquals(0L, (long) stats.get("hits"));
            assertTrue(stats.get("breaker_refused") >= 8);  // four terms, three segments, twice
        }
    }

    public void testAnEntryReadSinceTheHandPassedSurvivesEviction() throws IOException {
        TermStateCache cache = new TermStateCache(4 * 1000);  // absent terms: 1,000 bytes
        try (DirectoryReader reader = DirectoryReader.open(writer)) {
            TermStateCache.Segment segment =
                cache.segment(reader.leaves().get(0).reader().getCoreCacheHelper());
            BytesRef kept = new BytesRef("kept-00000");
            segment.put(kept, null, 0, 0);
            for (int k = 0; k < 60; k++) {  // ~9 absent entries fit: each put past it evicts
                assertNotNull("a read entry was evicted before an unread one", segment.get(kept));
                segment.put(new BytesRef(String.format(java.util.Locale.ROOT, "made-%05d", k)),
                    null, 0, 0);
            }
            assertTrue(cache.stats().get("evictions") > 40);
            assertNotNull(segment.get(kept));
        }
    }
}
