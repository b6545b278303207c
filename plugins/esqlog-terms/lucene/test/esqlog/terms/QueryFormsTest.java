package esqlog.terms;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.lucene.tests.util.LuceneTestCase;

/**
 * The two forms both engines' query builders give a query outside Lucene (NodeStream,
 * QueryForms): its
 * JSON object read back as the same query, with its boost and name; its stream read back as
 * the same query, whatever the words; and a malformed object refused with a message that
 * names the key.
 */
public class QueryFormsTest extends LuceneTestCase {
    private static WordsQuery randomWords() {
        List<WordPlan.Word> words = new ArrayList<>();
        int n = random().nextInt(20);
        for (int i = 0; i < n; i++) {
            words.add(new WordPlan.Word("w" + i + "é", random().nextDouble() * 30,
                random().nextBoolean(), random().nextBoolean() ? 1.0 : 2.0,
                random().nextBoolean() ? -1 : random().nextInt(5000), random().nextBoolean(),
                random().nextBoolean()));
        }
        String select = List.of("cover", "all", "mass", "multi", "words")
            .get(random().nextInt(5));
        return new WordsQuery("body", "esqlog-words-0123456789abcdef",
            1 + random().nextInt(4000), select, words);
    }

    private static TermsQuery randomTerms() {
        List<String> terms = new ArrayList<>();
        int n = 1 + random().nextInt(30);
        for (int i = 0; i < n; i++) {
            terms.add("t" + random().nextInt(40));  // repeats: the query keeps each once
        }
        return new TermsQuery("body", terms, random().nextBoolean());
    }

    /** A stream of the engines' shape (a string, a var-int...) over Java's data streams. */
    static NodeStream.Out out(DataOutputStream data) {
        return new NodeStream.Out(data::writeUTF, data::writeInt, data::writeDouble,
            data::writeBoolean, data::writeInt, data::writeLong);
    }

    static NodeStream.In in(byte[] bytes) {
        DataInputStream data = new DataInputStream(new ByteArrayInputStream(bytes));
        return new NodeStream.In(data::readUTF, data::readInt, data::readDouble,
            data::readBoolean, data::readInt, data::readLong);
    }

    public void testAWordsQueryReadsBackFromItsStreamAndItsObject() throws IOException {
        for (int round = 0; round < 50; round++) {
            WordsQuery query = randomWords();
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            query.writeTo(out(new DataOutputStream(bytes)));
            assertEquals(query, WordsQuery.readFrom(in(bytes.toByteArray())));
            Map<String, Object> object = new LinkedHashMap<>(query.fields());
            object.put("boost", 0.5);
            object.put("_name", "q" + round);
            QueryForms.Parsed<WordsQuery> parsed = WordsQuery.parse(object);
            assertEquals(query, parsed.query());
            assertEquals(0.5f, parsed.boost(), 0f);
            assertEquals("q" + round, parsed.queryName());
        }
    }

    public void testATermsQueryReadsBackFromItsStreamAndItsObject() throws IOException {
        for (int round = 0; round < 50; round++) {
            TermsQuery query = randomTerms();
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            query.writeTo(out(new DataOutputStream(bytes)));
            TermsQuery read = TermsQuery.readFrom(in(bytes.toByteArray()));
            assertEquals(query, read);
            assertEquals(query.hashCode(), read.hashCode());
            QueryForms.Parsed<TermsQuery> parsed = TermsQuery.parse(query.fields());
            assertEquals(query, parsed.query());
            assertEquals(1.0f, parsed.boost(), 0f);
            assertNull(parsed.queryName());
        }
        assertNotEquals(new TermsQuery("body", List.of("a"), true),
            new TermsQuery("body", List.of("a"), false));
        assertTrue(new TermsQuery("body", List.of("a"), false).fields().containsKey("idf"));
        assertFalse(new TermsQuery("body", List.of("a"), true).fields().containsKey("idf"));
    }

    private static String refusal(Runnable parse) {
        IllegalArgumentException e = expectThrows(IllegalArgumentException.class, parse::run);
        return e.getMessage();
    }

    public void testAMalformedObjectIsRefusedByName() {
        Map<String, Object> words = new LinkedHashMap<>(randomWords().fields());
        Map<String, Object> bad = new LinkedHashMap<>(words);
        bad.put("size", 3);
        assertTrue(refusal(() -> WordsQuery.parse(bad)).contains("does not support [size]"));
        Map<String, Object> notObjects = new LinkedHashMap<>(words);
        notObjects.put("words", List.of("read"));
        assertTrue(refusal(() -> WordsQuery.parse(notObjects)).contains("must hold objects only"));
        Map<String, Object> fieldArray = new LinkedHashMap<>(words);
        fieldArray.put("field", List.of("body"));
        assertTrue(refusal(() -> WordsQuery.parse(fieldArray)).contains("does not support [field]"));
        Map<String, Object> budget = new LinkedHashMap<>(words);
        budget.put("budget", 2.5);
        assertTrue(refusal(() -> WordsQuery.parse(budget)).contains("[budget] must be a whole"));
        Map<String, Object> boost = new LinkedHashMap<>(words);
        boost.put("boost", -1.5);
        assertTrue(refusal(() -> WordsQuery.parse(boost))
            .contains("[boost] must be 0 or more, got [-1.5]"));

        Map<String, Object> terms = new LinkedHashMap<>(Map.of("field", "body",
            "terms", List.of("a", 3)));
        assertTrue(refusal(() -> TermsQuery.parse(terms)).contains("must hold strings only"));
        Map<String, Object> idf = new LinkedHashMap<>(Map.of("field", "body",
            "terms", List.of("a"), "idf", "no"));
        assertTrue(refusal(() -> TermsQuery.parse(idf)).contains("does not support [idf]"));
        Map<String, Object> empty = new LinkedHashMap<>(Map.of("field", "body",
            "terms", List.of()));
        assertTrue(refusal(() -> TermsQuery.parse(empty))
            .contains("requires a non-empty [terms] array"));
        Map<String, Object> coerced = new LinkedHashMap<>(Map.of("field", "body",
            "terms", List.of("a"), "boost", "2.5"));
        assertEquals(2.5f, TermsQuery.parse(coerced).boost(), 0f);
    }
}
