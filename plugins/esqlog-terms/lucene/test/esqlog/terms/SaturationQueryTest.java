package esqlog.terms;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.lucene.tests.analysis.MockAnalyzer;
import org.apache.lucene.tests.analysis.MockTokenizer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.NumericDocValuesField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.MultiDocValues;
import org.apache.lucene.index.NumericDocValues;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.tests.search.CheckHits;
import org.apache.lucene.search.CollectionStatistics;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.tests.search.QueryUtils;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.ScoreMode;
import org.apache.lucene.search.SynonymQuery;
import org.apache.lucene.search.TermStatistics;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.search.similarities.Similarity;
import org.apache.lucene.search.similarities.Similarity.SimScorer;
import org.apache.lucene.store.Directory;
import org.apache.lucene.tests.index.RandomIndexWriter;
import org.apache.lucene.tests.util.LuceneTestCase;
import org.apache.lucene.util.BytesRef;

/**
 * SaturationQuery on random small indices, checked with Lucene's own test tools: QueryUtils
 * (equals/hashCode, explain, skipping, searching segment by segment and concurrently),
 * CheckHits (the match set against a SynonymQuery's, explanations against scores, top hits
 * with skipping against exhaustive), and every score against the field's BM25 of the group's
 * summed tf counted from the generated text, without idf.
 */
public class SaturationQueryTest extends LuceneTestCase {
    private static final String FIELD = "body";
    private static final int VOCABULARY = 30;

    private Directory dir;
    private IndexReader reader;
    private List<String[]> texts;

    @Override
    public void setUp() throws Exception {
        super.setUp();
        dir = newDirectory();
        RandomIndexWriter writer = new RandomIndexWriter(random(), dir,
            newIndexWriterConfig(new MockAnalyzer(random(), MockTokenizer.WHITESPACE, false)).setSimilarity(new BM25Similarity()));
        texts = new ArrayList<>();
        int docs = atLeast(200);
        for (int d = 0; d < docs; d++) {
            int length = 1 + random().nextInt(12);
            String[] words = new String[length];
            for (int i = 0; i < length; i++) {  // skewed: low numbers are common
                int w = random().nextInt(1 + random().nextInt(VOCABULARY));
                words[i] = "t" + w;
            }
            texts.add(words);
            Document doc = new Document();
            doc.add(new TextField(FIELD, String.join(" ", words), Field.Store.NO));
            doc.add(new NumericDocValuesField("id", d));
            writer.addDocument(doc);
            if (rarely()) {
                writer.commit();  // several segments
            }
        }
        reader = writer.getReader();
        writer.close();
        // every check runs without the term-state cache, with one that evicts all the time,
        // and with one that holds everything: the scores must not depend on it
        long[] sizes = {0, 2048, 1 << 20};
        TermStateCache.install(new TermStateCache(sizes[random().nextInt(sizes.length)]));
    }

    @Override
    public void tearDown() throws Exception {
        TermStateCache.install(new TermStateCache(0));
        reader.close();
        dir.close();
        super.tearDown();
    }

    private IndexSearcher searcher() {
        IndexSearcher searcher = newSearcher(reader);
        searcher.setSimilarity(new BM25Similarity());
        return searcher;
    }

    private static List<BytesRef> group(String... terms) {
        List<BytesRef> out = new ArrayList<>();
        for (String term : terms) {
            out.add(new BytesRef(term));
        }
        return out;
    }

    private List<BytesRef> randomGroup() {
        int size = 1 + random().nextInt(5);
        String[] terms = new String[size];
        for (int i = 0; i < size; i++) {  // distinct, sometimes absent from the index
            terms[i] = "t" + (i * 7 + random().nextInt(7)) % (VOCABULARY + 5);
        }
        return group(java.util.Arrays.stream(terms).distinct().toArray(String[]::new));
    }

    private static Query saturation(List<BytesRef> terms) {
        return SaturationQuery.of(FIELD, terms, false, SaturationQuery::luceneBm25);
    }

    private static Query synonym(List<BytesRef> terms) {
        SynonymQuery.Builder builder = new SynonymQuery.Builder(FIELD);
        for (BytesRef term : terms) {
            builder.addTerm(new Term(FIELD, term));
        }
        return builder.build();
    }

    public void testLuceneQueryChecks() throws IOException {
        IndexSearcher searcher = searcher();
        for (int i = 0; i < 20; i++) {
            List<BytesRef> terms = randomGroup();
            Query query = saturation(terms);
            QueryUtils.check(random(), query, searcher);
            CheckHits.checkTopScores(random(), query, searcher);
            CheckHits.checkHitCollector(random(), query, FIELD, searcher,
                matches(searcher, synonym(terms)));
        }
    }

    public void testBooleanOfGroupsSkipsToTheSameTopHits() throws IOException {
        IndexSearcher searcher = searcher();
        for (int i = 0; i < 10; i++) {
            BooleanQuery.Builder bool = new BooleanQuery.Builder();
            for (int g = 0; g < 1 + random().nextInt(6); g++) {
                bool.add(saturation(randomGroup()), BooleanClause.Occur.SHOULD);
            }
            Query query = bool.build();
            QueryUtils.check(random(), query, searcher);
            CheckHits.checkTopScores(random(), query, searcher);
        }
    }

    public void testScoresAreTheBm25OfTheSummedTfWithoutIdf() throws IOException {
        IndexSearcher searcher = searcher();
        for (int i = 0; i < 20; i++) {
            List<BytesRef> terms = randomGroup();
            float boost = 0.5f + random().nextInt(4);
            Query query = new org.apache.lucene.search.BoostQuery(saturation(terms), boost);
            CollectionStatistics stats = searcher.collectionStatistics(FIELD);
            assertExpectedScores(searcher, query, terms, boost, stats);
        }
    }

    /** Under dfs the engine's searcher answers the whole index's field statistics: they, not
     * the shard's own, make avgdl. */
    public void testFieldStatisticsComeFromTheEnginesSearcher() throws IOException {
        IndexSearcher local = searcher();
        CollectionStatistics own = local.collectionStatistics(FIELD);
        CollectionStatistics global = new CollectionStatistics(FIELD, own.maxDoc() * 3,
            own.docCount() * 3, own.sumTotalTermFreq() * 6, own.sumDocFreq() * 3);
        IndexSearcher dfs = new IndexSearcher(reader) {
            @Override
            public CollectionStatistics collectionStatistics(String field) {
                return global;
            }
        };
        dfs.setSimilarity(new BM25Similarity());
        List<BytesRef> terms = group("t0", "t1");
        assertExpectedScores(dfs, saturation(terms), terms, 1f, global);
    }

    /** A group exposes its terms' merged impacts: a block of documents whose summed tf is
     * low is bounded lower than one holding a high tf, so top-k collection can skip it. */
    public void testGroupsExposeImpacts() throws IOException {
        try (Directory impactsDir = newDirectory()) {
            org.apache.lucene.index.IndexWriterConfig config = new org.apache.lucene.index
                .IndexWriterConfig(new MockAnalyzer(random(), MockTokenizer.WHITESPACE, false))
                .setSimilarity(new BM25Similarity())
                // the engines' postings format: a random test one (Direct) has no impacts
                .setCodec(org.apache.lucene.tests.util.TestUtil.getDefaultCodec());
            try (org.apache.lucene.index.IndexWriter writer =
                     new org.apache.lucene.index.IndexWriter(impactsDir, config)) {
                for (int d = 0; d < 4096; d++) {
                    Document doc = new Document();
                    String text = d == 0 ? "a a b b"  // short, a high summed tf
                        : (d % 2 == 0 ? "a" : "b") + " x x x x x x x";
                    doc.add(new TextField(FIELD, text, Field.Store.NO));
                    writer.addDocument(doc);
                }
                writer.forceMerge(1);
            }
            try (IndexReader one = org.apache.lucene.index.DirectoryReader.open(impactsDir)) {
                IndexSearcher searcher = new IndexSearcher(one);
                searcher.setSimilarity(new BM25Similarity());
                Query query = searcher.rewrite(saturation(group("a", "b")));
                org.apache.lucene.search.Scorer scorer = searcher.createWeight(query,
                    ScoreMode.TOP_SCORES, 1f).scorer(one.leaves().get(0));
                int first = scorer.advanceShallow(0);
                float high = scorer.getMaxScore(first);
                int later = scorer.advanceShallow(3000);
                float low = scorer.getMaxScore(later);
                assertTrue(first + " " + high + " / " + later + " " + low, low < 0.95f * high);
            }
        }
    }

    /**
     * A group's rare terms (under 128 documents in a segment) are read at once as one list of
     * (doc, summed tf): the same scores and top hits as Lucene's SynonymQuery over every term
     * on its own, with a common term beside them, documents holding several of them, terms
     * absent from some segments.
     */
    public void testRareTermsReadAtOnceScoreAsEachOnItsOwn() throws IOException {
        TermStateCache.install(new TermStateCache(1 << 20));
        try (Directory rareDir = newDirectory()) {
            try (RandomIndexWriter writer = new RandomIndexWriter(random(), rareDir,
                     newIndexWriterConfig(new MockAnalyzer(random(), MockTokenizer.WHITESPACE,
                         false)).setSimilarity(new BM25Similarity()))) {
                for (int d = 0; d < 700; d++) {
                    StringBuilder text = new StringBuilder("common");
                    for (int i = random().nextInt(3); i > 0; i--) {
                        text.append(" common");
                    }
                    for (int r = 0; r < 12; r++) {  // each in ~1 document of 40
                        if (random().nextInt(40) == 0) {
                            text.append(" r").append(r).append(random().nextBoolean() ? " r" + r : "");
                        }
                    }
                    text.append(" filler".repeat(random().nextInt(6)));
                    Document doc = new Document();
                    doc.add(new TextField(FIELD, text.toString(), Field.Store.NO));
                    doc.add(new org.apache.lucene.document.StringField("id", "" + d, Field.Store.NO));
                    writer.addDocument(doc);
                    if (random().nextInt(150) == 0) {
                        writer.commit();  // several segments
                    }
                }
                writer.deleteDocuments(new Term("id", "7"));
                writer.deleteDocuments(new Term("id", "300"));
            }
            try (IndexReader rare = org.apache.lucene.index.DirectoryReader.open(rareDir)) {
                IndexSearcher searcher = newSearcher(rare);
                searcher.setSimilarity(new BM25Similarity());
                IndexSearcher plain = new IndexSearcher(rare);
                plain.setSimilarity(new SaturationQuery.UnitIdfBM25(1.2f, 0.75f, 1f));
                List<BytesRef> terms = group("common", "r0", "r1", "r2", "r3", "r4", "r5", "r6",
                    "r7", "r8", "r9", "r10", "r11", "absent");
                for (List<BytesRef> g : List.of(terms, terms.subList(1, 12))) {
                    Query query = saturation(g);
                    Query rewritten = searcher.rewrite(query);
                    assertTrue(plain.createWeight(rewritten, ScoreMode.TOP_SCORES, 1f)
                        instanceof RareGroupWeight);
                    ScoreDoc[] want = plain.search(synonym(g), rare.maxDoc()).scoreDocs;
                    ScoreDoc[] got = searcher.search(query, rare.maxDoc()).scoreDocs;
                    DeletedDocumentsTest.assertSameHits(want, got);
                    // with deleted documents: QueryUtils' skip checks expect scorers to skip
                    // them (DeletedDocumentsTest says why not), its other checks run here
                    DeletedDocumentsTest.checkWithDeletions(searcher, query, synonym(g));
                    {  // read at once: one entry per document
                        long once = cost(plain, rewritten);
                        assertTrue(once < cost(plain, synonym(g)));
                        // the engine hands its leaves wrapped anew (cancellation): the same
                        // segment cores, still read at once
                        assertEquals(once, cost(plain, rewritten, rewrapped(rare)));
                    }
                }
            }
        }
    }

    /**
     * The rare bound is Lucene's postings block size, drawn alike by the view and the list: a
     * term in 127 documents of a segment is read into the group's list, terms in 128 and 129
     * from their own postings, each document's tf counted once (a term on both sides would
     * count twice, on neither not at all).
     */
    public void testTheRareBoundIsLucenesBlockSize() throws IOException {
        TermStateCache.install(new TermStateCache(1 << 20));
        try (Directory edgeDir = newDirectory()) {
            try (org.apache.lucene.index.IndexWriter writer =
                     new org.apache.lucene.index.IndexWriter(edgeDir, newIndexWriterConfig(
                         new MockAnalyzer(random(), MockTokenizer.WHITESPACE, false))
                         .setSimilarity(new BM25Similarity()))) {
                for (int d = 0; d < 300; d++) {
                    StringBuilder text = new StringBuilder("filler");
                    text.append(d < 127 ? " b127" : "");
                    text.append(d % 2 == 0 && d < 256 ? " b128 b128" : "");
                    text.append(d >= 150 && d < 279 ? " b129" : "");
                    text.append(" filler".repeat(d % 5));
                    Document doc = new Document();
                    doc.add(new TextField(FIELD, text.toString(), Field.Store.NO));
                    writer.addDocument(doc);
                }
                writer.forceMerge(1);
            }
            try (IndexReader edge = org.apache.lucene.index.DirectoryReader.open(edgeDir)) {
                assertEquals(1, edge.leaves().size());
                assertEquals(128, edge.docFreq(new Term(FIELD, "b128")));
                IndexSearcher searcher = newSearcher(edge);
                searcher.setSimilarity(new BM25Similarity());
                IndexSearcher plain = new IndexSearcher(edge);
                plain.setSimilarity(new SaturationQuery.UnitIdfBM25(1.2f, 0.75f, 1f));
                List<BytesRef> g = group("b127", "b128", "b129");
                ScoreDoc[] want = plain.search(synonym(g), edge.maxDoc()).scoreDocs;
                ScoreDoc[] got = searcher.search(saturation(g), edge.maxDoc()).scoreDocs;
                DeletedDocumentsTest.assertSameHits(want, got);
            }
        }
    }

    /** The summed cost of a query's scorers over the leaves: its postings' lengths. */
    private static long cost(IndexSearcher searcher, Query query) throws IOException {
        return cost(searcher, query, searcher.getIndexReader());
    }

    /** The same, the weight made on {@code searcher} and asked for {@code leaves}' leaves. */
    private static long cost(IndexSearcher searcher, Query query, IndexReader leaves)
            throws IOException {
        org.apache.lucene.search.Weight weight = searcher.createWeight(query,
            ScoreMode.TOP_SCORES, 1f);
        long cost = 0;
        for (org.apache.lucene.index.LeafReaderContext leaf : leaves.leaves()) {
            org.apache.lucene.search.ScorerSupplier supplier = weight.scorerSupplier(leaf);
            cost += supplier == null ? 0 : supplier.cost();
        }
        return cost;
    }

    /** {@code reader}'s segments, each in a wrapper of its own, in the same order. */
    private static IndexReader rewrapped(IndexReader reader) throws IOException {
        List<IndexReader> leaves = new ArrayList<>();
        for (org.apache.lucene.index.LeafReaderContext leaf : reader.leaves()) {
            leaves.add(new org.apache.lucene.index.FilterLeafReader(leaf.reader()) {
                @Override
                public CacheHelper getCoreCacheHelper() {
                    return in.getCoreCacheHelper();
                }

                @Override
                public CacheHelper getReaderCacheHelper() {
                    return null;
                }
            });
        }
        return new org.apache.lucene.index.MultiReader(leaves.toArray(new IndexReader[0]), false);
    }

    public void testEqualsIgnoresTermOrder() {
        Query ab = saturation(group("a", "b", "c"));
        Query ba = saturation(group("c", "a", "b"));
        assertEquals(ab, ba);
        assertEquals(ab.hashCode(), ba.hashCode());
        assertNotEquals(ab, saturation(group("a", "b")));
        assertNotEquals(ab, SaturationQuery.of(FIELD, group("a", "b", "c"), true,
            SaturationQuery::luceneBm25));
        QueryUtils.checkUnequal(saturation(group("a")), saturation(group("b")));
        assertNotEquals(ab.hashCode(), saturation(group("a", "b")).hashCode());
    }

    /** A filter scores nothing, so it needs no BM25: the same match set on any similarity. */
    public void testAFilterNeedsNoBm25() throws IOException {
        IndexSearcher searcher = searcher();
        searcher.setSimilarity(new org.apache.lucene.search.similarities.ClassicSimilarity());
        List<BytesRef> terms = group("t0", "t1", "t2");
        Query filter = new org.apache.lucene.search.ConstantScoreQuery(saturation(terms));
        assertTrue(searcher.count(filter) > 0);
        assertEquals(searcher.count(synonym(terms)), searcher.count(filter));
        CheckHits.checkHitCollector(random(), filter, FIELD, searcher,
            matches(searcher, synonym(terms)));
    }

    public void testAFieldWithoutBm25IsRefused() throws IOException {
        IndexSearcher searcher = searcher();
        searcher.setSimilarity(new org.apache.lucene.search.similarities.ClassicSimilarity());
        IllegalArgumentException e = expectThrows(IllegalArgumentException.class,
            () -> searcher.search(saturation(group("t0", "t1")), 10));
        assertTrue(e.getMessage(), e.getMessage().contains("needs a BM25 similarity"));
    }

    private static int[] matches(IndexSearcher searcher, Query query) throws IOException {
        ScoreDoc[] hits = searcher.search(query, Math.max(1, searcher.getIndexReader().maxDoc()))
            .scoreDocs;
        int[] docs = new int[hits.length];
        for (int i = 0; i < hits.length; i++) {
            docs[i] = hits[i].doc;
        }
        return docs;
    }

    private void assertExpectedScores(IndexSearcher searcher, Query query, List<BytesRef> terms,
                                      float boost, CollectionStatistics stats) throws IOException {
        Similarity unit = new SaturationQuery.UnitIdfBM25(1.2f, 0.75f, 1f);
        SimScorer sim = unit.scorer(boost, stats, new TermStatistics(new BytesRef("x"), 1, 1));
        Map<Integer, Float> expected = new HashMap<>();
        for (int doc = 0; doc < reader.maxDoc(); doc++) {
            int tf = summedTf(doc, terms);
            if (tf > 0) {
                expected.put(doc, sim.score(tf, norm(doc)));
            }
        }
        ScoreDoc[] hits = searcher.search(query, Math.max(1, reader.maxDoc())).scoreDocs;
        assertEquals(terms.toString(), expected.size(), hits.length);
        for (ScoreDoc hit : hits) {
            Float want = expected.get(hit.doc);
            assertNotNull("doc " + hit.doc + " matched " + terms, want);
            assertEquals("doc " + hit.doc, want, hit.score, 1e-5f);
        }
    }

    private int summedTf(int doc, List<BytesRef> terms) throws IOException {
        NumericDocValues ids = MultiDocValues.getNumericValues(reader, "id");
        assertTrue(ids.advanceExact(doc));
        int tf = 0;
        for (String word : texts.get((int) ids.longValue())) {
            if (terms.contains(new BytesRef(word))) {
                tf++;
            }
        }
        return tf;
    }

    private long norm(int doc) throws IOException {
        NumericDocValues norms = MultiDocValues.getNormValues(reader, FIELD);
        return norms.advanceExact(doc) ? norms.longValue() : 1L;
    }
}
