package esqlog.terms;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.BoostQuery;
import org.apache.lucene.search.Explanation;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.store.Directory;
import org.apache.lucene.tests.analysis.MockAnalyzer;
import org.apache.lucene.tests.analysis.MockTokenizer;
import org.apache.lucene.tests.index.RandomIndexWriter;
import org.apache.lucene.tests.search.CheckHits;
import org.apache.lucene.tests.search.QueryUtils;
import org.apache.lucene.tests.util.LuceneTestCase;
import org.apache.lucene.util.BytesRef;

/**
 * WholeWordQuery (select "all": a word's own term and every compound of its list as one group,
 * read once per segment and kept) against SaturationQuery over the same terms listed one by
 * one: the same match set and scores, on random indices of several segments with deletions,
 * with and without the term-state cache, with a word-postings cache that keeps everything,
 * one that is full, and none; Lucene's own checks (QueryUtils, CheckHits); the cache's
 * admission, eviction and release when a segment closes.
 */
public class WholeWordQueryTest extends LuceneTestCase {
    private static final String FIELD = "body";
    private static final String LISTS = "esqlog-words-test";
    /** A word and its compounds, most frequent first (as calibrate lists them). */
    private static final List<String> COMPOUNDS = List.of("readfile", "readall", "fileread",
        "readsocket", "rereadable", "readonce", "absentread");

    private Directory dir;
    private IndexReader reader;
    private boolean deletions;

    @Override
    public void setUp() throws Exception {
        super.setUp();
        dir = newDirectory();
        RandomIndexWriter writer = new RandomIndexWriter(random(), dir,
            newIndexWriterConfig(new MockAnalyzer(random(), MockTokenizer.WHITESPACE, false))
                .setSimilarity(new BM25Similarity()));
        String[] vocabulary = {"read", "readfile", "readall", "fileread", "readsocket",
            "rereadable", "readonce", "file", "socket", "filler", "write"};
        int docs = atLeast(300);
        for (int d = 0; d < docs; d++) {
            StringBuilder text = new StringBuilder();
            for (int i = 1 + random().nextInt(10); i > 0; i--) {  // skewed to the first words
                text.append(' ').append(vocabulary[random().nextInt(
                    1 + random().nextInt(vocabulary.length))]);
            }
            Document doc = new Document();
            doc.add(new TextField(FIELD, text.toString(), Field.Store.NO));
            doc.add(new StringField("id", "" + d, Field.Store.NO));
            writer.addDocument(doc);
            if (random().nextInt(60) == 0) {
                writer.commit();  // several segments
            }
        }
        if (random().nextBoolean()) {  // Lucene's QueryUtils expects no deleted documents
            writer.deleteDocuments(new Term("id", "3"));
            writer.deleteDocuments(new Term("id", "40"));
            deletions = true;
        }
        reader = writer.getReader();
        writer.close();
        long[] sizes = {0, 2048, 1 << 20};
        TermStateCache.install(new TermStateCache(sizes[random().nextInt(sizes.length)]));
        long[] words = {0, 1 << 10, 64 << 20};
        WordPostings.install(new WordPostings(words[random().nextInt(words.length)]));
    }

    @Override
    public void tearDown() throws Exception {
        TermStateCache.install(new TermStateCache(0));
        WordPostings.install(new WordPostings(0));
        reader.close();
        dir.close();
        super.tearDown();
    }

    /** The list calibrate would write for these compounds (ids and df made up, df falling). */
    static WordList list(List<String> terms) {
        ByteBuffer ids = ByteBuffer.allocate(4 * terms.size()).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer df = ByteBuffer.allocate(4 * terms.size()).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < terms.size(); i++) {
            ids.putInt(i + 1);
            df.putInt(terms.size() - i);
        }
        return WordList.parse(Base64.getEncoder().encodeToString(ids.array()),
            Base64.getEncoder().encodeToString(df.array()), String.join("\n", terms));
    }

    private static WordPlan.Whole whole(boolean own, int head) {
        return new WordPlan.Whole("read", own, list(COMPOUNDS), head, 1.0);
    }

    private static Query wholeQuery(WordPlan.Whole whole) {
        return new WholeWordQuery(FIELD, LISTS, whole, SaturationQuery::luceneBm25,
            new AtomicLong());
    }

    private static Query listed(WordPlan.Whole whole) {
        return SaturationQuery.of(FIELD, SaturationQuery.encoded(whole.terms()), false,
            SaturationQuery::luceneBm25);
    }

    private IndexSearcher searcher() {
        IndexSearcher searcher = newSearcher(reader);
        searcher.setSimilarity(new BM25Similarity());
        return searcher;
    }

    private static Map<Integer, Float> scores(IndexSearcher searcher, Query query)
            throws IOException {
        Map<Integer, Float> out = new HashMap<>();
        for (ScoreDoc hit : searcher.search(query, 10_000).scoreDocs) {
            out.put(hit.doc, hit.score);
        }
        return out;
    }

    private static void assertSameScores(Map<Integer, Float> expected, Map<Integer, Float> got) {
        assertEquals(expected.keySet(), got.keySet());
        for (Map.Entry<Integer, Float> hit : expected.entrySet()) {
            assertEquals("doc " + hit.getKey(), hit.getValue(), got.get(hit.getKey()), 1e-5f);
        }
    }

    private static int[] matches(IndexSearcher searcher, Query query) throws IOException {
        ScoreDoc[] hits = searcher.search(query, 10_000).scoreDocs;
        int[] out = new int[hits.length];
        for (int i = 0; i < hits.length; i++) {
            out[i] = hits[i].doc;
        }
        return out;
    }

    public void testTheTermsOfAWholeGroup() {
        assertEquals(List.of("read", "readfile", "readall"), whole(true, 2).terms());
        assertEquals(List.of("readfile", "readall"), whole(false, 2).terms());
        assertEquals(COMPOUNDS.size() + 1, whole(true, COMPOUNDS.size()).terms().size());
    }

    /** Each group's scores, read afresh and then from the cache (or again where it keeps
     * nothing or has no room): groups of the same word that differ in the own term or the
     * head are different entries. */
    public void testScoresAreTheListedGroupsTwiceOver() throws IOException {
        IndexSearcher searcher = searcher();
        for (long size : new long[] {0, 1 << 10, 64 << 20}) {
            WordPostings.install(new WordPostings(size));
            for (WordPlan.Whole whole : List.of(whole(true, COMPOUNDS.size()), whole(false, 4),
                    whole(true, 1), whole(false, COMPOUNDS.size()))) {
                Map<Integer, Float> expected = scores(searcher, listed(whole));
                assertFalse(expected.isEmpty());
                assertSameScores(expected, scores(searcher, wholeQuery(whole)));
                assertSameScores(expected, scores(searcher, wholeQuery(whole)));
            }
        }
    }

    /** The groups one query reads outside the cache are bounded: past the bound a word is
     * scored from its terms' own postings (the same scores), so the query still answers and
     * holds nothing more; the bytes of the group that passed it are not counted. */
    public void testGroupsReadOutsideTheCacheAreBoundedPerQuery() throws IOException {
        WordPostings.install(new WordPostings(0));  // keeps nothing
        IndexSearcher searcher = searcher();
        AtomicLong shared = new AtomicLong();
        Query small = new WholeWordQuery(FIELD, LISTS, whole(true, 3),
            SaturationQuery::luceneBm25, shared, 1L << 30);
        searcher.search(small, 10);
        assertTrue(shared.get() > 0);
        for (WordPlan.Whole whole : List.of(whole(true, 3), whole(false, COMPOUNDS.size()))) {
            AtomicLong bounded = new AtomicLong();
            Query over = new WholeWordQuery(FIELD, LISTS, whole, SaturationQuery::luceneBm25,
                bounded, 16);
            Map<Integer, Float> expected = scores(searcher, listed(whole));
            assertFalse(expected.isEmpty());
            assertSameScores(expected, scores(searcher, over));
            assertTrue("at most the groups read before the one past the bound: "
                + bounded.get(), bounded.get() <= 16);
        }
    }

    public void testLuceneQueryChecks() throws IOException {
        IndexSearcher searcher = searcher();
        for (WordPlan.Whole whole : List.of(whole(true, COMPOUNDS.size()), whole(false, 3))) {
            Query query = wholeQuery(whole);
            if (!deletions) {  // both check skipping against collection, live docs or not
                QueryUtils.check(random(), query, searcher);
                CheckHits.checkHitCollector(random(), query, FIELD, searcher,
                    matches(searcher, listed(whole)));
            }
            CheckHits.checkTopScores(random(), query, searcher);
        }
    }

    public void testInABooleanBesideOtherGroupsTheTopHitsAreTheListedOnes() throws IOException {
        IndexSearcher searcher = searcher();
        List<BytesRef> file = SaturationQuery.encoded(List.of("file", "fileread"));
        for (int i = 0; i < 5; i++) {
            float a = 0.5f + random().nextInt(3);
            float b = 0.5f + random().nextInt(3);
            BooleanQuery.Builder expected = new BooleanQuery.Builder();
            BooleanQuery.Builder got = new BooleanQuery.Builder();
            Query other = SaturationQuery.of(FIELD, file, false, SaturationQuery::luceneBm25);
            expected.add(new BoostQuery(listed(whole(true, 5)), a), BooleanClause.Occur.SHOULD);
            expected.add(new BoostQuery(other, b), BooleanClause.Occur.SHOULD);
            got.add(new BoostQuery(wholeQuery(whole(true, 5)), a), BooleanClause.Occur.SHOULD);
            got.add(new BoostQuery(other, b), BooleanClause.Occur.SHOULD);
            assertSameScores(scores(searcher, expected.build()), scores(searcher, got.build()));
            CheckHits.checkTopScores(random(), got.build(), searcher);
        }
    }

    public void testExplanationsGiveTheScoreAndNameTheWord() throws IOException {
        IndexSearcher searcher = searcher();
        Query query = wholeQuery(whole(true, COMPOUNDS.size()));
        CheckHits.checkExplanations(query, FIELD, searcher);
        ScoreDoc top = searcher.search(query, 1).scoreDocs[0];
        Explanation explanation = searcher.explain(query, top.doc);
        assertEquals(top.score, explanation.getValue().floatValue(), 1e-5f);
        assertTrue(explanation.getDescription(), explanation.getDescription().contains("[read]"));
    }

    public void testTheCacheKeepsAGroupAndServesItAgain() throws IOException {
        WordPostings.install(new WordPostings(64 << 20));
        IndexSearcher searcher = searcher();
        Query query = wholeQuery(whole(true, COMPOUNDS.size()));
        searcher.search(query, 10);
        Map<String, Long> first = WordPostings.shared().stats();
        assertEquals((long) reader.leaves().size(), (long) first.get("misses"));
        assertTrue(first.toString(), first.get("entries") > 0 && first.get("size_in_bytes") > 0);
        searcher.search(query, 10);
        Map<String, Long> second = WordPostings.shared().stats();
        assertEquals(first.get("misses"), second.get("misses"));
        assertEquals((long) reader.leaves().size(), (long) second.get("hits"));
    }

    /** Full, a group is kept only when asked again soon (the doorkeeper), and the cache keeps
     * to its budget; a segment's groups go when the reader closes. */
    public void testAdmissionWhenFullEvictionAndRelease() throws IOException {
        WordPostings cache = new WordPostings(1 << 20);
        WordPostings.install(cache);
        try (Directory one = newDirectory()) {
            try (RandomIndexWriter writer = new RandomIndexWriter(random(), one,
                     newIndexWriterConfig(new MockAnalyzer(random(), MockTokenizer.WHITESPACE,
                         false)).setSimilarity(new BM25Similarity()))) {
                for (int d = 0; d < 4000; d++) {  // each word in every document: big groups
                    Document doc = new Document();
                    doc.add(new TextField(FIELD, "w0 w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11",
                        Field.Store.NO));
                    writer.addDocument(doc);
                }
                writer.forceMerge(1);
            }
            try (DirectoryReader small = DirectoryReader.open(one)) {
                IndexSearcher searcher = new IndexSearcher(small);
                searcher.setSimilarity(new BM25Similarity());
                List<Query> words = new ArrayList<>();
                for (int w = 0; w < 12; w++) {  // each ~64 KB: 16 fill the cache
                    words.add(new WholeWordQuery(FIELD, LISTS, new WordPlan.Whole("w" + w, true,
                        list(List.of("w" + w + "x")), 1, 1.0), SaturationQuery::luceneBm25,
                        new AtomicLong()));
                }
                for (int round = 0; round < 3; round++) {
                    for (Query q : words) {
                        assertEquals(4000, searcher.count(q));
                        searcher.search(q, 10);
                    }
                }
                Map<String, Long> stats = cache.stats();
                assertTrue(stats.toString(), stats.get("size_in_bytes") <= (1 << 20));
                assertTrue(stats.toString(), stats.get("entries") > 0);
                assertTrue(stats.toString(), stats.get("hits") > 0);
            }
            Map<String, Long> closed = cache.stats();
            assertEquals(closed.toString(), 0L, (long) closed.get("entries"));
            assertEquals(closed.toString(), 0L, (long) closed.get("size_in_bytes"));
        }
    }

    private WordTerms readOne() throws IOException {
        var leaf = reader.leaves().get(0).reader();
        return WordTerms.read(SaturationQuery.encoded(List.of("read")), leaf.terms(FIELD),
            leaf.getNormValues(FIELD), leaf.maxDoc());
    }

    public void testDoorkeeperTakesTheSecondSight() throws IOException {
        WordTerms group = readOne();
        long size = group.bytes() + 2L * "k00".length() + 64;
        long budget = size * 8;
        WordPostings cache = new WordPostings(budget);  // eight groups fit, not nine
        var core = reader.leaves().get(0).reader().getCoreCacheHelper();
        // fill to the brim (keys of one length: the same size), then a new key is refused
        // once and taken after
        for (int i = 0; i < 8; i++) {
            assertTrue(cache.put(core, "f0" + i, group));
        }
        boolean firstSight = cache.put(core, "new", group);
        boolean secondSight = cache.put(core, "new", group);
        assertFalse("a full cache took a key seen once", firstSight);
        assertTrue("a full cache refused a key seen twice", secondSight);
        assertEquals(1L, (long) cache.stats().get("refused"));
        assertTrue(cache.stats().toString(), cache.stats().get("size_in_bytes") <= budget);
        assertTrue(cache.stats().toString(), cache.stats().get("evictions") > 0);
    }
}
