package esqlog.terms;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

import org.apache.lucene.tests.util.LuceneTestCase;

/**
 * The node's plan chooses what the client's does: every case of word-plans.txt (made by
 * tests/unit/test_word_plan_cases.py from the client's esqlog.identifiers.selection.choose and
 * groups.one_shard_groups, over the inputs esqlog.identifiers.node_plan sends) planned here
 * gives the same groups, terms and boosts to the bit; and the word lists and their cache
 * refuse what is malformed and keep to their budget.
 */
public class WordPlanTest extends LuceneTestCase {
    private static Path cases() {
        String given = System.getProperty("esqlog.test.data");
        List<Path> candidates = new ArrayList<>();
        if (given != null) {
            candidates.add(Path.of(given, "word-plans.txt"));
        }
        for (String root : new String[] {"plugins/esqlog-terms/lucene", "../lucene", "lucene"}) {
            candidates.add(Path.of(root, "test/esqlog/terms/word-plans.txt"));
        }
        for (Path path : candidates) {
            if (Files.isRegularFile(path)) {
                return path;
            }
        }
        throw new AssertionError("word-plans.txt not found in " + candidates);
    }

    private static WordList list(String ids, String df) {
        if (ids.isEmpty()) {
            return WordList.EMPTY;
        }
        String[] idText = ids.split(",");
        String[] dfText = df.split(",");
        StringBuilder terms = new StringBuilder();
        for (String id : idText) {
            terms.append(terms.length() == 0 ? "" : "\n").append('c').append(id);
        }
        return WordList.parse(ints(idText), ints(dfText), terms.toString());
    }

    private static String ints(String[] values) {
        ByteBuffer buffer = ByteBuffer.allocate(4 * values.length).order(ByteOrder.LITTLE_ENDIAN);
        for (String value : values) {
            buffer.putInt(Integer.parseInt(value));
        }
        return Base64.getEncoder().encodeToString(buffer.array());
    }

    public void testTheNodePlansWhatTheClientPlans() throws IOException {
        List<String> lines = Files.readAllLines(cases(), StandardCharsets.UTF_8);
        int checked = 0;
        int groups = 0;
        int budget = 0;
        String select = null;
        List<WordPlan.Word> words = new ArrayList<>();
        List<WordList> lists = new ArrayList<>();
        List<String> expected = new ArrayList<>();
        for (String line : lines) {
            String[] f = line.split("\t", -1);
            switch (f[0]) {
                case "case" -> {
                    budget = Integer.parseInt(f[1]);
                    select = f[2];
                    words.clear();
                    lists.clear();
                    expected.clear();
                }
                case "word" -> {
                    words.add(new WordPlan.Word(f[1], Double.parseDouble(f[2]), f[3].equals("1"),
                        Double.parseDouble(f[4]), Integer.parseInt(f[5]), f[6].equals("1"),
                        f[7].equals("1")));
                    lists.add(list(f[8], f[9]));
                }
                case "group" -> expected.add(Double.doubleToLongBits(Double.parseDouble(f[1]))
                    + " " + f[2]);
                case "end" -> {
                    List<String> got = new ArrayList<>();
                    for (WordPlan.Group group : WordPlan.groups(words, lists, budget, select)) {
                        got.add(Double.doubleToLongBits(group.boost()) + " "
                            + String.join(",", group.terms()));
                    }
                    assertEquals("case " + checked + " " + words, expected, got);
                    groups += got.size();
                    checked++;
                }
                default -> {
                }
            }
        }
        assertTrue(checked >= 200);
        assertTrue(groups >= checked);
    }

    public void testMalformedListsAreRefusedNamingTheProblem() {
        String one = ints(new String[] {"3"});
        String two = ints(new String[] {"3", "4"});
        String rising = ints(new String[] {"1", "5"});
        Object[][] bad = {
            {one, one, "a\nb"},  // more terms than ids
            {two, two, "a"},  // fewer
            {two, rising, "a\nb"},  // not most frequent first
            {ints(new String[] {"-1"}), one, "a"},  // a negative id
            {two, two, "a\n"},  // an empty term
            {"***", one, "a"},  // not base64
            {"AAA=", one, "a"},  // not whole int32s
            {one, one, 7},  // not a string
        };
        for (Object[] fields : bad) {
            IllegalArgumentException e = expectThrows(IllegalArgumentException.class,
                () -> WordList.parse(fields[0], fields[1], fields[2]));
            assertTrue(e.getMessage(), e.getMessage().startsWith("a word list"));
        }
        WordList good = WordList.parse(two, ints(new String[] {"9", "9"}), "ab\ncd");
        assertEquals(2, good.size());
        assertEquals("ab", good.term(0));
        assertEquals("cd", good.term(1));
        assertEquals(4, good.maxId);
    }

    public void testTheCacheKeepsToItsBudgetAndCountsWhatItServes() {
        String ids = ints(new String[] {"1", "2", "3"});
        WordList list = WordList.parse(ids, ints(new String[] {"3", "2", "1"}),
            "alpha\nbeta\ngamma");
        WordLists cache = new WordLists(list.bytes() * 40);
        assertNull(cache.get("esqlog-words-a", "w0"));
        for (int i = 0; i < 200; i++) {
            cache.put("esqlog-words-a", "w" + i, list);
            assertTrue(cache.stats().get("size_in_bytes") <= list.bytes() * 41 + 1000);
        }
        assertTrue(cache.stats().get("evictions") > 100);
        cache.put("esqlog-words-a", "kept", list);
        assertSame(list, cache.get("esqlog-words-a", "kept"));
        assertNull(cache.get("esqlog-words-b", "kept"));  // another lists index
        assertEquals(1L, (long) cache.stats().get("hits"));
        WordLists tiny = new WordLists(list.bytes());  // a list over a quarter of the budget
        tiny.put("esqlog-words-a", "w", list);
        assertNull(tiny.get("esqlog-words-a", "w"));
        assertEquals(1L, (long) tiny.stats().get("refused"));
    }
}
