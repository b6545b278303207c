package esqlog.terms;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.DocIdSetIterator;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.ScoreMode;
import org.apache.lucene.search.Scorer;
import org.apache.lucene.search.ScorerSupplier;
import org.apache.lucene.search.SynonymQuery;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.Weight;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.store.Directory;
import org.apache.lucene.tests.analysis.MockAnalyzer;
import org.apache.lucene.tests.analysis.MockTokenizer;
import org.apache.lucene.tests.search.CheckHits;
import org.apache.lucene.tests.search.QueryUtils;
import org.apache.lucene.tests.util.LuceneTestCase;
import org.apache.lucene.util.Bits;
import org.apache.lucene.util.BytesRef;

/**
 * SaturationQuery on indices with deleted and updated documents, with the term-state cache on
 * (warmed before the deletions, kept across reopens and merges) and off, through the rare view
 * (Lucene 10) and the cached view (Lucene 9): the hits, totals and scores are those of Lucene's
 * own SynonymQuery over the same reader, no deleted document is returned or counted, and every
 * scorer lands on the same documents with the same scores as the SynonymQuery's.
 *
 * <p>Why not QueryUtils.check as is: its checkFirstSkipTo and checkSkipTo collect hits through
 * the searcher (live docs applied) and then expect a fresh scorer's advance to land on the
 * collected document, while Weight#scorer documents that a scorer does not apply live docs, so
 * a deleted matching document between two hits fails them for Lucene's own TermQuery too
 * ({@link #testQueryUtilsSkipChecksFailOnLucenesOwnQueriesWithDeletedMatches}); so does
 * CheckHits.checkMatches (Weight#matches of the deleted document before a hit). The checks of
 * QueryUtils that are defined with deletions run here unchanged; the skip checks are replaced
 * by a comparison of the scorers with SynonymQuery's, advance by advance.
 */
public class DeletedDocumentsTest extends LuceneTestCase {
    private static final String FIELD = "body";

    @Override
    public void tearDown() throws Exception {
        TermStateCache.install(new TermStateCache(0));
        super.tearDown();
    }

    private static Document doc(int id, String text) {
        Document doc = new Document();
        doc.add(new StringField("id", "" + id, Field.Store.YES));
        doc.add(new TextField(FIELD, text, Field.Store.NO));
        return doc;
    }

    /** The evidence that the skip checks ignore live docs: TermQuery and SynonymQuery fail
     * them on a segment whose deleted document matches between two live ones. */
    public void testQueryUtilsSkipChecksFailOnLucenesOwnQueriesWithDeletedMatches()
            throws IOException {
        try (Directory dir = newDirectory()) {
            try (IndexWriter writer = new IndexWriter(dir, newIndexWriterConfig(
                     new MockAnalyzer(random(), MockTokenizer.WHITESPACE, false))
                     .setMergePolicy(org.apache.lucene.index.NoMergePolicy.INSTANCE))) {
                for (int d = 0; d < 3; d++) {
                    writer.addDocument(doc(d, "a b"));
                }
                writer.deleteDocuments(new Term("id", "1"));
            }
            try (IndexReader reader = DirectoryReader.open(dir)) {
                IndexSearcher searcher = new IndexSearcher(reader);
                for (Query query : List.of(new TermQuery(new Term(FIELD, "a")),
                         new SynonymQuery.Builder(FIELD).addTerm(new Term(FIELD, "a"))
                             .addTerm(new Term(FIELD, "b")).build())) {
                    Throwable e = expectThrows(Throwable.class,
                        () -> QueryUtils.checkFirstSkipTo(query, searcher));
                    assertTrue(e.toString(), e.toString().contains("advance(1) got to 1"));
                    // and the matches check, for the same reason (matches of a deleted doc)
                    e = expectThrows(Throwable.class, () -> CheckHits.checkMatches(query,
                        searcher));
                    assertTrue(e.toString(), e.toString().contains("non-matching doc2"));
                    // the scorer does land on the deleted document: by design
                    Weight weight = searcher.createWeight(searcher.rewrite(query),
                        ScoreMode.COMPLETE, 1f);
                    assertEquals(1, weight.scorer(reader.leaves().get(0)).iterator().advance(1));
                    assertEquals(2, searcher.count(query));
                }
            }
        }
    }

    /** The cache warmed on a reader, then documents deleted and updated, the reader reopened
     * (the same segment cores, new live docs), then the deletions merged away: at each step
     * the same answers as SynonymQuery's and as the live texts say. */
    public void testDeletesUpdatesAndMergesAfterTheCacheIsWarm() throws IOException {
        long[] sizes = {0, 2048, 1 << 20};
        TermStateCache.install(new TermStateCache(sizes[random().nextInt(sizes.length)]));
        Map<Integer, String> live = new HashMap<>();
        try (Directory dir = newDirectory();
             IndexWriter writer = new IndexWriter(dir, newIndexWriterConfig(
                 new MockAnalyzer(random(), MockTokenizer.WHITESPACE, false))
                 .setSimilarity(new BM25Similarity()))) {
            for (int d = 0; d < 600; d++) {
                live.put(d, text());
                writer.addDocument(doc(d, live.get(d)));
                if (random().nextInt(120) == 0) {
                    writer.commit();  // several segments
                }
            }
            DirectoryReader first = DirectoryReader.open(writer);
            check(first, live);  // warms the cache and the views on the first reader
            Map<Integer, String> before = new HashMap<>(live);
            for (int d = 0; d < 600; d += 1 + random().nextInt(12)) {
                if (random().nextBoolean()) {
                    writer.deleteDocuments(new Term("id", "" + d));
                    live.remove(d);
                } else {  // an update: a deletion and the new version in a new segment
                    live.put(d, text());
                    writer.updateDocument(new Term("id", "" + d), doc(d, live.get(d)));
                }
            }
            DirectoryReader second = DirectoryReader.openIfChanged(first, writer);
            assertNotNull(second);
            check(second, live);
            check(first, before);  // the older reader still answers as of its point in time
            first.close();
            writer.forceMergeDeletes();
            DirectoryReader merged = DirectoryReader.openIfChanged(second, writer);
            second.close();
            if (merged != null) {
                check(merged, live);
                merged.close();
            }
        }
    }

    /** A text of common words, rare ones (each in ~1 document of 40), sometimes repeated. */
    private static String text() {
        StringBuilder text = new StringBuilder("common");
        for (int i = random().nextInt(3); i > 0; i--) {
            text.append(" common");
        }
        for (int r = 0; r < 12; r++) {
            if (random().nextInt(40) == 0) {
                text.append(" r").append(r).append(random().nextBoolean() ? " r" + r : "");
            }
        }
        return text.append(" filler".repeat(random().nextInt(6))).toString();
    }

    private static List<BytesRef> group(String... terms) {
        List<BytesRef> out = new ArrayList<>();
        for (String term : terms) {
            out.add(new BytesRef(term));
        }
        return out;
    }

    private void check(IndexReader reader, Map<Integer, String> live) throws IOException {
        List<BytesRef> all = group("common", "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7",
            "r8", "r9", "r10", "r11", "absent");
        for (List<BytesRef> terms : List.of(all, all.subList(1, 12), group("r3"))) {
            check(reader, terms, live);
        }
        // every document holds "common": each deleted one is compared on the scorers' level
        assertEquals(reader.maxDoc() - reader.numDocs(), check(reader, group("common"), live));
    }

    /** Everything one group must answer on {@code reader}, whose live documents' texts are
     * {@code live} (by id); returns how many deleted documents the scorers were compared on. */
    private static int check(IndexReader reader, List<BytesRef> terms, Map<Integer, String> live)
            throws IOException {
        IndexSearcher searcher = newSearcher(reader);
        searcher.setSimilarity(new BM25Similarity());
        Query query = SaturationQuery.of(FIELD, terms, false, SaturationQuery::luceneBm25);
        Query synonym = SaturationQuery.synonym(FIELD, terms);
        int expected = 0;
        for (String text : live.values()) {
            for (String word : text.split(" ")) {
                if (terms.contains(new BytesRef(word))) {
                    expected++;
                    break;
                }
            }
        }
        ScoreDoc[] got = searcher.search(query, Math.max(1, reader.maxDoc())).scoreDocs;
        assertEquals(terms.toString(), expected, got.length);
        assertEquals(terms.toString(), expected, searcher.count(query));
        for (ScoreDoc hit : got) {
            String id = searcher.storedFields().document(hit.doc).get("id");
            assertTrue("deleted doc " + id + " returned", live.containsKey(Integer.parseInt(id)));
        }
        return checkWithDeletions(searcher, query, synonym);
    }

    /**
     * QueryUtils' and CheckHits' checks that are defined on deleted documents, the hits and
     * scores against Lucene's SynonymQuery over the same reader (exact), and the scorers
     * against its scorers ({@link #assertSameScorers}) in place of the skip checks; returns
     * how many deleted documents the scorers were compared on.
     */
    /**
     * The same documents with the same scores, in any order (ties may order apart): what a
     * group scored through the plugin must give against Lucene's own synonym query.
     */
    static void assertSameHits(ScoreDoc[] want, ScoreDoc[] got) {
        assertEquals(want.length, got.length);
        Map<Integer, Float> scores = new HashMap<>();
        for (ScoreDoc hit : want) {
            scores.put(hit.doc, hit.score);
        }
        for (ScoreDoc hit : got) {
            assertNotNull("doc " + hit.doc, scores.get(hit.doc));
            assertEquals("doc " + hit.doc, scores.get(hit.doc), hit.score, 0f);
        }
    }

    static int checkWithDeletions(IndexSearcher searcher, Query query, Query synonym)
            throws IOException {
        IndexReader reader = searcher.getIndexReader();
        IndexSearcher plain = new IndexSearcher(reader);
        plain.setSimilarity(new SaturationQuery.UnitIdfBM25(1.2f, 0.75f, 1f));
        ScoreDoc[] want = plain.search(synonym, Math.max(1, reader.maxDoc())).scoreDocs;
        ScoreDoc[] got = searcher.search(query, Math.max(1, reader.maxDoc())).scoreDocs;
        assertEquals(plain.count(synonym), searcher.count(query));
        assertSameHits(want, got);
        int deletedSeen = assertSameScorers(searcher, query, plain, synonym);
        QueryUtils.check(query);
        QueryUtils.checkBulkScorerSkipTo(random(), query, searcher);
        QueryUtils.checkCount(query, searcher);
        QueryUtils.checkExplanations(query, searcher);
        CheckHits.checkTopScores(random(), query, searcher);
        return deletedSeen;
    }

    /**
     * Each leaf's scorer against SynonymQuery's on the same leaf, deleted documents included
     * (neither applies live docs): all of them by nextDoc, then fresh scorers advanced to
     * targets all along the leaf (as checkFirstSkipTo does), the same document and score each
     * time; returns how many deleted documents they were compared on.
     */
    static int assertSameScorers(IndexSearcher searcher, Query query, IndexSearcher plain,
                                 Query synonym) throws IOException {
        Weight ours = searcher.createWeight(searcher.rewrite(query), ScoreMode.COMPLETE, 1f);
        Weight theirs = plain.createWeight(plain.rewrite(synonym), ScoreMode.COMPLETE, 1f);
        int deletedSeen = 0;
        for (LeafReaderContext leaf : searcher.getIndexReader().leaves()) {
            Scorer a = scorer(ours, leaf);
            Scorer b = scorer(theirs, leaf);
            if (a == null || b == null) {  // no scorer: no document, on either side
                Scorer other = a == null ? b : a;
                assertTrue(other == null
                    || other.iterator().nextDoc() == DocIdSetIterator.NO_MORE_DOCS);
                continue;
            }
            Bits liveDocs = leaf.reader().getLiveDocs();
            for (int doc = b.iterator().nextDoc(); ; doc = b.iterator().nextDoc()) {
                assertEquals(doc, a.iterator().nextDoc());
                if (doc == DocIdSetIterator.NO_MORE_DOCS) {
                    break;
                }
                assertEquals("doc " + doc, b.score(), a.score(), 0f);
                deletedSeen += liveDocs != null && !liveDocs.get(doc) ? 1 : 0;
            }
            int maxDoc = leaf.reader().maxDoc();
            for (int target = 0; target < maxDoc; target += 1 + random().nextInt(4)) {
                a = scorer(ours, leaf);
                b = scorer(theirs, leaf);
                if (a == null || b == null) {
                    break;
                }
                int doc = b.iterator().advance(target);
                assertEquals("advance(" + target + ")", doc, a.iterator().advance(target));
                if (doc != DocIdSetIterator.NO_MORE_DOCS) {
                    assertEquals("advance(" + target + ")", b.score(), a.score(), 0f);
                }
            }
        }
        return deletedSeen;
    }

    private static Scorer scorer(Weight weight, LeafReaderContext leaf) throws IOException {
        ScorerSupplier supplier = weight.scorerSupplier(leaf);
        return supplier == null ? null : supplier.get(1L);
    }
}
