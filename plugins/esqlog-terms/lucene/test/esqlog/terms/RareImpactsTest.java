package esqlog.terms;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import org.apache.lucene.codecs.CompetitiveImpactAccumulator;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.Impacts;
import org.apache.lucene.index.ImpactsEnum;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.NumericDocValues;
import org.apache.lucene.index.PostingsEnum;
import org.apache.lucene.index.Term;
import org.apache.lucene.index.Terms;
import org.apache.lucene.index.TermsEnum;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.SynonymQuery;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.TopScoreDocCollectorManager;
import org.apache.lucene.search.TotalHits;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.store.Directory;
import org.apache.lucene.tests.analysis.MockAnalyzer;
import org.apache.lucene.tests.analysis.MockTokenizer;
import org.apache.lucene.tests.search.CheckHits;
import org.apache.lucene.tests.search.QueryUtils;
import org.apache.lucene.tests.util.LuceneTestCase;
import org.apache.lucene.tests.util.TestUtil;
import org.apache.lucene.util.BytesRef;

/**
 * The exact impacts of a group's rare-terms list (RareImpacts through the version's
 * LevelImpacts): each window's impacts are Lucene's own competitive set of its documents
 * (CompetitiveImpactAccumulator), no document of a window scores above them (skipping never
 * drops a competitive document), and top-k collection that skips by them finds the same hits
 * as exhaustive collection, and does skip.
 */
public class RareImpactsTest extends LuceneTestCase {
    private static final String FIELD = "body";
    private static final int RARE = 24;

    private Directory dir;
    private IndexReader reader;

    @Override
    public void setUp() throws Exception {
        super.setUp();
        TermStateCache.install(new TermStateCache(1 << 20));  // the rare view needs the cache
        dir = newDirectory();
        IndexWriterConfig config = new IndexWriterConfig(
            new MockAnalyzer(random(), MockTokenizer.WHITESPACE, false))
            .setSimilarity(new BM25Similarity())
            .setCodec(TestUtil.getDefaultCodec());  // the engines' postings, with impacts
        try (IndexWriter writer = new IndexWriter(dir, config)) {
            // several windows of doc ids (RareImpacts.SHIFT), each rare term under 128 documents
            int docs = 12000 + random().nextInt(4000);
            for (int d = 0; d < docs; d++) {
                StringBuilder text = new StringBuilder("common");
                // the rare terms in the first 2/5 of the documents only, each in ~1 of 120
                // there (tf 1-4): the later windows hold none, so their blocks can be skipped
                for (int r = 0; r < RARE && d < docs * 2 / 5; r++) {
                    if (random().nextInt(120) == 0) {
                        text.append((" r" + r).repeat(1 + random().nextInt(4)));
                    }
                }
                if (d % 4000 == 7) {  // a group of a few documents (WordTerms keeps norms)
                    text.append(" tiny");
                }
                text.append(" filler".repeat(random().nextInt(30)));
                Document doc = new Document();
                doc.add(new TextField(FIELD, text.toString(), Field.Store.NO));
                writer.addDocument(doc);
            }
            // one segment, so that its windows are known: the rare-terms path on several
            // segments is SaturationQueryTest's and DeletedDocumentsTest's
            writer.forceMerge(1);
        }
        reader = DirectoryReader.open(dir);
    }

    @Override
    public void tearDown() throws Exception {
        TermStateCache.install(new TermStateCache(0));
        reader.close();
        dir.close();
        super.tearDown();
    }

    private static List<BytesRef> terms(String... words) {
        List<BytesRef> out = new ArrayList<>();
        for (String word : words) {
            out.add(new BytesRef(word));
        }
        return out;
    }

    private static List<BytesRef> rareTerms() {
        List<BytesRef> out = new ArrayList<>();
        for (int r = 0; r < RARE; r++) {
            out.add(new BytesRef("r" + r));
        }
        return out;
    }

    private static Query saturation(List<BytesRef> terms) {
        return SaturationQuery.of(FIELD, terms, false, SaturationQuery::luceneBm25);
    }

    /**
     * A norm outside one byte (a similarity of one's own) keeps its own value and its place in
     * the unsigned order: -200 after the non-negative byte norms and before -128..-1. Such a
     * window takes the sorted path whole; its pairs are Lucene's own.
     */
    public void testNormsOfNoByteKeepTheirValue() {
        assertImpactsOfOneWindow(new int[] {1, 9, 5, 4}, new long[] {5, -200, 6, 7},
            new long[] {5, 6, -200});
        assertImpactsOfOneWindow(new int[] {1, 9, 5, 12}, new long[] {5, -200, 6, -1},
            new long[] {5, 6, -200, -1});
    }

    private static void assertImpactsOfOneWindow(int[] freqs, long[] norms, long[] wantNorms) {
        int[] docs = {1, 5, 9, 12};
        RareImpacts impacts = new RareImpacts(docs, freqs, norms, docs.length, 20);
        int last = impacts.numLevels() - 1;
        CompetitiveImpactAccumulator lucene = new CompetitiveImpactAccumulator();
        for (int i = 0; i < docs.length; i++) {
            lucene.add(freqs[i], norms[i]);
        }
        assertArrayEquals(wantNorms, impacts.norms(last, 0));
        assertLucenesPairs(lucene, impacts.freqs(last, 0), impacts.norms(last, 0));
    }

    /** The (freq, norm) pairs equal Lucene's competitive set, in its order. */
    private static void assertLucenesPairs(CompetitiveImpactAccumulator lucene, int[] gotFreqs,
                                           long[] gotNorms) {
        var want = lucene.getCompetitiveFreqNormPairs();
        assertEquals(want.size(), gotFreqs.length);
        int k = 0;
        for (var impact : want) {
            assertEquals(impact.freq, gotFreqs[k]);
            assertEquals(impact.norm, gotNorms[k]);
            k++;
        }
    }

    /**
     * Each window's impacts, on each level, are Lucene's own competitive set of the pairs of
     * the documents in it; an empty window's one impact is beaten by no document.
     */
    public void testEachWindowHasLucenesCompetitiveImpacts() {
        for (int round = 0; round < 50; round++) {
            int size = 1 + random().nextInt(random().nextBoolean() ? 40 : 1500);
            int[] docs = new int[size];
            int[] freqs = new int[size];
            long[] norms = new long[size];
            int gap = 1 + random().nextInt(random().nextBoolean() ? 20 : 2000);
            for (int i = 0; i < size; i++) {
                docs[i] = (i == 0 ? 0 : docs[i - 1] + 1) + random().nextInt(gap);
                freqs[i] = 1 + random().nextInt(random().nextBoolean() ? 3 : 40);
                norms[i] = random().nextInt(3) == 0 ? random().nextInt(256) - 128
                    : random().nextInt(4) + 1;  // signed bytes as Lucene stores them
                if (round % 5 == 4 && random().nextInt(8) == 0) {  // a norm of no byte
                    norms[i] = random().nextBoolean() ? 128 + random().nextInt(1000)
                        : -129 - random().nextInt(1000);
                }
            }
            int maxDoc = docs[size - 1] + 1 + random().nextInt(random().nextBoolean() ? 10000
                : 1 << 20);
            RareImpacts impacts = new RareImpacts(docs, freqs, norms, size, maxDoc);
            int last = impacts.numLevels() - 1;
            assertEquals(DocIdSetIterator.NO_MORE_DOCS, impacts.docIdUpTo(last, 0));
            for (int probe = 0; probe < 40; probe++) {
                int doc = random().nextInt(maxDoc);
                int previous = doc - 1;
                for (int level = 0; level <= last; level++) {
                    int upTo = impacts.docIdUpTo(level, doc);
                    assertTrue(upTo >= doc && upTo >= previous);
                    int shift = level == last ? 31 : impacts.shift(level);
                    assertTrue(level == last || shift >= RareImpacts.SHIFT
                        && maxDoc <= 4L << shift);  // a quarter of the segment, or wider
                    int from = level == last ? 0 : doc >> shift << shift;
                    assertTrue(level == last || upTo == DocIdSetIterator.NO_MORE_DOCS
                        || upTo == from + (1 << shift) - 1);
                    assertTrue(upTo != DocIdSetIterator.NO_MORE_DOCS
                        || level == last || from + (1 << shift) >= maxDoc);
                    previous = upTo;
                    CompetitiveImpactAccumulator lucene = new CompetitiveImpactAccumulator();
                    int inWindow = 0;
                    for (int i = 0; i < size; i++) {
                        if (docs[i] >= from && docs[i] <= upTo) {
                            lucene.add(freqs[i], norms[i]);
                            inWindow++;
                        }
                    }
                    int[] gotFreqs = impacts.freqs(level, doc);
                    long[] gotNorms = impacts.norms(level, doc);
                    if (inWindow == 0) {
                        assertArrayEquals(new int[] {1}, gotFreqs);
                        assertArrayEquals(new long[] {-1L}, gotNorms);
                        continue;
                    }
                    assertLucenesPairs(lucene, gotFreqs, gotNorms);
                }
            }
        }
    }

    /**
     * Through the rare view, as the group's synonym query reads it: after any shallow advance,
     * every document of the list up to a level's docIdUpTo is dominated by one of that level's
     * impacts (a freq at least its summed tf at a norm at most its own), each impact is some
     * document's own (exact, not the largest possible, or the one no document beats where the window holds
     * none), the levels nest, and the last is the whole segment.
     */
    public void testNoDocumentScoresAboveItsBlocksImpacts() throws IOException {
        IndexReader rare = CachedTermsView.of(new IndexSearcher(reader).getTopReaderContext(),
            FIELD, TermStateCache.shared(), true);
        BytesRef key = RareTerms.key(rareTerms());
        int checked = 0;
        for (LeafReaderContext leaf : rare.leaves()) {
            Terms terms = leaf.reader().terms(FIELD);
            TermsEnum view = terms.iterator();
            if (!view.seekExact(key)) {  // a segment of later documents only: none of them
                continue;
            }
            PostingsEnum list = view.postings(null, PostingsEnum.FREQS);
            List<int[]> entries = new ArrayList<>();
            for (int doc = list.nextDoc(); doc != DocIdSetIterator.NO_MORE_DOCS;
                 doc = list.nextDoc()) {
                entries.add(new int[] {doc, list.freq()});
            }
            assertTrue(view.seekExact(key));
            ImpactsEnum impactsEnum = view.impacts(PostingsEnum.FREQS);
            NumericDocValues norms = leaf.reader().getNormValues(FIELD);
            long[] docNorms = new long[entries.size()];
            for (int i = 0; i < entries.size(); i++) {
                assertTrue(norms.advanceExact(entries.get(i)[0]));
                docNorms[i] = norms.longValue();
            }
            int target = 0;
            while (target != DocIdSetIterator.NO_MORE_DOCS) {
                if (random().nextBoolean() && impactsEnum.docID() < target) {
                    impactsEnum.advance(target);  // positioned, then asked
                } else {
                    impactsEnum.advanceShallow(target);
                }
                Impacts impacts = impactsEnum.getImpacts();
                int previousUpTo = -1;
                for (int level = 0; level < impacts.numLevels(); level++) {
                    int upTo = impacts.getDocIdUpTo(level);
                    assertTrue(upTo >= target && upTo >= previousUpTo);
                    previousUpTo = upTo;
                    long[][] pairs = pairs(impacts, level);
                    for (int i = 1; i < pairs.length; i++) {  // increasing freq and norm
                        assertTrue(pairs[i][0] > pairs[i - 1][0]);
                        assertTrue(Long.compareUnsigned(pairs[i][1], pairs[i - 1][1]) > 0);
                    }
                    for (int i = 0; i < entries.size(); i++) {
                        int doc = entries.get(i)[0];
                        if (doc < target || doc > upTo) {
                            continue;
                        }
                        assertTrue("doc " + doc + " above its impacts on level " + level,
                            dominated(pairs, entries.get(i)[1], docNorms[i]));
                        checked++;
                    }
                    for (long[] pair : pairs) {  // each one a document's own
                        boolean own = pairs.length == 1 && pair[0] == 1 && pair[1] == -1L;
                        for (int i = 0; i < entries.size(); i++) {
                            own |= entries.get(i)[0] <= upTo && entries.get(i)[1] == pair[0]
                                && docNorms[i] == pair[1];
                        }
                        assertTrue("impact " + pair[0] + "," + pair[1] + " is no document's",
                            own);
                    }
                }
                // the last level is the whole segment: a bound for skipping past every window
                assertEquals(DocIdSetIterator.NO_MORE_DOCS, previousUpTo);
                target = previousUpTo == DocIdSetIterator.NO_MORE_DOCS
                    ? DocIdSetIterator.NO_MORE_DOCS : previousUpTo + 1 + random().nextInt(50);
                if (random().nextInt(4) == 0) {
                    target = impacts.getDocIdUpTo(0) == DocIdSetIterator.NO_MORE_DOCS
                        ? DocIdSetIterator.NO_MORE_DOCS : impacts.getDocIdUpTo(0) + 1;
                }
            }
        }
        assertTrue(checked > 0);
    }

    /**
     * (freq, norm) of a level's impacts, whichever type the Lucene version returns (a list of
     * Impact up to 10.3, a FreqAndNormBuffer from 10.4): read by reflection, so that one test
     * source compiles against both.
     */
    private static long[][] pairs(Impacts impacts, int level) {
        Object got = impacts.getImpacts(level);
        List<long[]> out = new ArrayList<>();
        try {
            if (got instanceof List<?> list) {
                for (Object impact : list) {
                    out.add(new long[] {impact.getClass().getField("freq").getInt(impact),
                        impact.getClass().getField("norm").getLong(impact)});
                }
            } else {
                int[] freqs = (int[]) got.getClass().getField("freqs").get(got);
                long[] norms = (long[]) got.getClass().getField("norms").get(got);
                int size = got.getClass().getField("size").getInt(got);
                for (int i = 0; i < size; i++) {
                    out.add(new long[] {freqs[i], norms[i]});
                }
            }
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
        return out.toArray(new long[0][]);
    }

    /** TotalHits' count: a field up to Lucene 9, a record component from 10. */
    private static long value(TotalHits hits) {
        try {
            return hits.getClass().getMethod("value").invoke(hits) instanceof Long v ? v : -1;
        } catch (NoSuchMethodException e) {
            try {
                return hits.getClass().getField("value").getLong(hits);
            } catch (ReflectiveOperationException f) {
                throw new AssertionError(f);
            }
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    /** TotalHits' relation, likewise. */
    private static Object relation(TotalHits hits) {
        try {
            return hits.getClass().getMethod("relation").invoke(hits);
        } catch (NoSuchMethodException e) {
            try {
                return hits.getClass().getField("relation").get(hits);
            } catch (ReflectiveOperationException f) {
                throw new AssertionError(f);
            }
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    private static boolean dominated(long[][] pairs, long freq, long norm) {
        for (long[] pair : pairs) {
            if (pair[0] >= freq && Long.compareUnsigned(pair[1], norm) <= 0) {
                return true;
            }
        }
        return false;
    }

    /** Lucene's checkers on a group of rare terms alone and beside a common term. */
    public void testLuceneQueryChecks() throws IOException {
        IndexSearcher searcher = newSearcher(reader);
        searcher.setSimilarity(new BM25Similarity());
        List<BytesRef> withCommon = new ArrayList<>(rareTerms());
        withCommon.add(new BytesRef("common"));
        for (List<BytesRef> group : List.of(rareTerms(), withCommon)) {
            Query query = saturation(group);
            QueryUtils.check(random(), query, searcher);
            CheckHits.checkTopScores(random(), query, searcher);
            BooleanQuery.Builder bool = new BooleanQuery.Builder();
            bool.add(query, BooleanClause.Occur.SHOULD);
            bool.add(saturation(terms("r3", "filler")), BooleanClause.Occur.SHOULD);
            CheckHits.checkTopScores(random(), bool.build(), searcher);
        }
    }

    /**
     * Top 10 collected with skipping (a lower-bound total) equals exhaustive collection, scores
     * equal Lucene's SynonymQuery over the terms one by one; and the group's blocks are
     * skipped: the collected total is a lower bound below the match count.
     */
    public void testTopHitsWithSkippingAreTheExhaustiveOnes() throws IOException {
        IndexSearcher searcher = new IndexSearcher(reader);
        searcher.setSimilarity(new BM25Similarity());
        IndexSearcher plain = new IndexSearcher(reader);
        plain.setSimilarity(new SaturationQuery.UnitIdfBM25(1.2f, 0.75f, 1f));
        List<BytesRef> group = new ArrayList<>(rareTerms());
        group.add(new BytesRef("common"));
        Query query = saturation(group);
        TopDocs skipping = searcher.search(query, new TopScoreDocCollectorManager(10, null, 10));
        TopDocs exhaustive = searcher.search(query, new TopScoreDocCollectorManager(10, null,
            Integer.MAX_VALUE));
        SynonymQuery.Builder synonym = new SynonymQuery.Builder(FIELD);
        for (BytesRef term : group) {
            synonym.addTerm(new Term(FIELD, term));
        }
        TopDocs lucene = plain.search(synonym.build(), 10);
        assertEquals(reader.maxDoc(), value(exhaustive.totalHits));
        assertEquals(TotalHits.Relation.EQUAL_TO, relation(exhaustive.totalHits));
        assertEquals(10, skipping.scoreDocs.length);
        for (int i = 0; i < 10; i++) {
            ScoreDoc got = skipping.scoreDocs[i];
            assertEquals(exhaustive.scoreDocs[i].doc, got.doc);
            assertEquals(exhaustive.scoreDocs[i].score, got.score, 0f);
            assertEquals(lucene.scoreDocs[i].doc, got.doc);
            assertEquals(lucene.scoreDocs[i].score, got.score, 0f);
        }
        assertEquals(TotalHits.Relation.GREATER_THAN_OR_EQUAL_TO, relation(skipping.totalHits));
        assertTrue(value(skipping.totalHits) + " of " + reader.maxDoc(),
            value(skipping.totalHits) < reader.maxDoc());
    }

    /**
     * A whole word's group keeps its impacts where they take fewer bytes than its norms
     * (WordTerms), and serves every query the same impacts, each window Lucene's own
     * competitive set of its documents, counted in its bytes; a group of a few documents
     * keeps its norms instead. Its list advances to the first document at or after each
     * target, as a scan of the list finds it, and top-k collection over the kept group with
     * skipping finds the exhaustive top hits.
     */
    public void testAKeptGroupsImpactsAndAdvance() throws IOException {
        List<BytesRef> group = new ArrayList<>(rareTerms());
        group.add(new BytesRef("common"));
        LeafReaderContext leaf = reader.leaves().get(0);
        WordTerms kept = WordTerms.read(WordTerms.inIndexOrder(group), leaf.reader().terms(FIELD),
            leaf.reader().getNormValues(FIELD), leaf.reader().maxDoc());
        WordTerms rare = WordTerms.read(terms("r3"), leaf.reader().terms(FIELD),
            leaf.reader().getNormValues(FIELD), leaf.reader().maxDoc());
        WordTerms tiny = WordTerms.read(terms("tiny"), leaf.reader().terms(FIELD),
            leaf.reader().getNormValues(FIELD), leaf.reader().maxDoc());
        assertTrue(tiny.docFreq() > 0 && tiny.docFreq() <= 4);
        for (WordTerms each : List.of(kept, rare, tiny)) {
            RareImpacts fresh = assertServesItsListsImpacts(each, leaf);
            long norms = 8L * each.docFreq();
            // the impacts where they take fewer bytes than the norms, else the norms: a large
            // group keeps its impacts, a tiny one its norms (a rare one, ~50 documents, either)
            long held = Math.min(fresh.bytes(), norms);
            assertEquals(WordTerms.OVERHEAD + 8L * each.docFreq() + held, each.bytes());
            assertTrue(each != kept || fresh.bytes() < norms);
            assertTrue(each != tiny || fresh.bytes() > norms);
        }
        WordPostings.install(new WordPostings(64L << 20));
        try {
            WordPlan.Whole whole = new WordPlan.Whole("common", true,
                WholeWordQueryTest.list(rareTermStrings()), RARE, 1.0);
            Query query = new WholeWordQuery(FIELD, "esqlog-words-test", whole,
                SaturationQuery::luceneBm25, new java.util.concurrent.atomic.AtomicLong());
            IndexSearcher searcher = new IndexSearcher(reader);
            searcher.setSimilarity(new BM25Similarity());
            for (int round = 0; round < 2; round++) {  // read, then kept
                TopDocs skipping = searcher.search(query,
                    new TopScoreDocCollectorManager(10, null, 10));
                TopDocs exhaustive = searcher.search(query,
                    new TopScoreDocCollectorManager(10, null, Integer.MAX_VALUE));
                for (int i = 0; i < 10; i++) {
                    assertEquals(exhaustive.scoreDocs[i].doc, skipping.scoreDocs[i].doc);
                    assertEquals(exhaustive.scoreDocs[i].score, skipping.scoreDocs[i].score, 0f);
                }
                CheckHits.checkTopScores(random(), query, searcher);
            }
        } finally {
            WordPostings.install(new WordPostings(0));
        }
    }

    /**
     * {@code group}'s list, as two queries read it, advances to the first document at or
     * after each target, with the impacts computed afresh from its documents' tf and the
     * segment's norms (the kept ones of a large group, computed on demand for a small one);
     * those fresh impacts.
     */
    private static RareImpacts assertServesItsListsImpacts(WordTerms group,
                                                           LeafReaderContext leaf)
        throws IOException {
        // the list's documents, norms and tf, read once as plain postings
        RareList scan = group.postings(PostingsEnum.FREQS, false);
        List<int[]> entries = new ArrayList<>();
        for (int doc = scan.nextDoc(); doc != DocIdSetIterator.NO_MORE_DOCS; doc = scan.nextDoc()) {
            entries.add(new int[] {doc, scan.freq()});
        }
        NumericDocValues norms = leaf.reader().getNormValues(FIELD);
        long[] docNorms = new long[entries.size()];
        for (int i = 0; i < entries.size(); i++) {
            assertTrue(norms.advanceExact(entries.get(i)[0]));
            docNorms[i] = norms.longValue();
        }
        // the impacts a query computes of the same list (checked against Lucene's own sets by
        // testEachWindowHasLucenesCompetitiveImpacts)
        int[] docs = new int[entries.size()];
        int[] freqs = new int[entries.size()];
        for (int i = 0; i < docs.length; i++) {
            docs[i] = entries.get(i)[0];
            freqs[i] = entries.get(i)[1];
        }
        RareImpacts fresh = new RareImpacts(docs, freqs, docNorms, docs.length,
            leaf.reader().maxDoc());
        for (int round = 0; round < 2; round++) {  // a second query: the same impacts
            RareList list = group.postings(PostingsEnum.FREQS, true);
            int next = 0;
            int target = random().nextInt(3);
            while (true) {
                while (next < entries.size() && entries.get(next)[0] < target) {
                    next++;
                }
                int want = next < entries.size() ? entries.get(next)[0]
                    : DocIdSetIterator.NO_MORE_DOCS;
                assertEquals("advance(" + target + ")", want, list.advance(target));
                if (want == DocIdSetIterator.NO_MORE_DOCS) {
                    break;
                }
                assertEquals(entries.get(next)[1], list.freq());
                Impacts impacts = list.getImpacts();
                assertEquals(fresh.numLevels(), impacts.numLevels());
                for (int level = 0; level < impacts.numLevels(); level++) {
                    assertEquals(fresh.docIdUpTo(level, want), impacts.getDocIdUpTo(level));
                    int[] wantFreqs = fresh.freqs(level, want);
                    long[] wantNorms = fresh.norms(level, want);
                    long[][] got = pairs(impacts, level);
                    assertEquals(wantFreqs.length, got.length);
                    for (int k = 0; k < got.length; k++) {
                        assertEquals(wantFreqs[k], got[k][0]);
                        assertEquals(wantNorms[k], got[k][1]);
                    }
                }
                // near (the next few) or far (windows ahead) targets: both of the engine's
                target = want + 1 + (random().nextBoolean() ? random().nextInt(4)
                    : random().nextInt(3000));
            }
        }
        return fresh;
    }

    private static List<String> rareTermStrings() {
        List<String> out = new ArrayList<>();
        for (int r = 0; r < RARE; r++) {
            out.add("r" + r);
        }
        return out;
    }
}
