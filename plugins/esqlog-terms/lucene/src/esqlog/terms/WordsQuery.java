package esqlog.terms;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.BoostQuery;
import org.apache.lucene.search.MatchNoDocsQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.similarities.Similarity;

/**
 * What an {@code esqlog_identifiers} query says, checked, in its two forms outside Lucene (a
 * node's stream: {@link NodeStream}; a request's JSON object: {@link QueryForms}), and what
 * both engines' builders do with it: find its words' lists in the node's memory, keep those
 * fetched, and plan the groups ({@link WordPlan}).
 *
 * @param lists the word-lists index esqlog calibrate wrote (its name starts esqlog-words-)
 */
public record WordsQuery(String field, String lists, int budget, String select,
                         List<WordPlan.Word> words) {
    /** The query's name in a request, as both engines register it. */
    public static final String NAME = "esqlog_identifiers";
    /** The parameters, for the message naming one the query does not take. */
    public static final String TAKES = "it takes field, lists, budget, select, words, boost "
        + "and _name";
    static final String LISTS_PREFIX = "esqlog-words-";
    static final Set<String> SELECTS = Set.of("mass", "multi", "words", "cover", "all");
    /** Words a query may name: a query text of a few hundred words at most. */
    static final int MAX_WORDS = 1024;

    public WordsQuery {
        String name = "[esqlog_identifiers] ";
        if (field == null || field.isEmpty()) {
            throw new IllegalArgumentException(name + "requires a non-empty [field]");
        }
        if (lists == null || !lists.startsWith(LISTS_PREFIX)) {
            throw new IllegalArgumentException(name + "requires [lists], the word-lists index "
                + "esqlog calibrate wrote (" + LISTS_PREFIX + "...), got [" + lists + "]");
        }
        if (budget < 1 || budget >= WordPlan.MULTI_SCAN) {
            throw new IllegalArgumentException(name + "[budget] must be 1 to "
                + (WordPlan.MULTI_SCAN - 1) + ", got [" + budget + "]");
        }
        if (!SELECTS.contains(select)) {
            throw new IllegalArgumentException(name + "[select] must be one of cover, words, "
                + "multi, mass or all, got [" + select + "]");
        }
        if (words == null || words.size() > MAX_WORDS) {
            throw new IllegalArgumentException(name + "requires [words], at most " + MAX_WORDS);
        }
        words = List.copyOf(words);
    }

    /** One word from its object in the query. */
    private static WordPlan.Word word(Map<String, Object> value) {
        for (String key : value.keySet()) {
            if (!Set.of("word", "weight", "first", "tier", "own", "apart", "limit").contains(key)) {
                throw new IllegalArgumentException("[esqlog_identifiers] a word does not take ["
                    + key + "]; it takes word, weight, first, tier, own, apart and limit");
            }
        }
        Object word = value.get("word");
        if (!(word instanceof String text) || text.isEmpty()) {
            throw new IllegalArgumentException("[esqlog_identifiers] each word needs [word]");
        }
        double weight = number(value, "weight", Double.NaN);
        if (!(weight >= 0) || Double.isInfinite(weight)) {
            throw new IllegalArgumentException("[esqlog_identifiers] the weight of [" + text
                + "] must be a finite number, 0 or more");
        }
        double tier = number(value, "tier", 1.0);
        if (tier != 1.0 && tier != 2.0) {  // the shared compounds' tiers are below 1
            throw new IllegalArgumentException("[esqlog_identifiers] the tier of [" + text
                + "] must be 1 or 2 (2: a common word's compounds after the others')");
        }
        double limit = number(value, "limit", -1);
        if (limit != Math.rint(limit) || limit < -1 || limit > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("[esqlog_identifiers] the limit of [" + text
                + "] must be a whole number, 0 or more");
        }
        return new WordPlan.Word(text, weight, flag(value, "first"), tier, (int) limit,
            flag(value, "own"), flag(value, "apart"));
    }

    private static double number(Map<String, Object> value, String key, double absent) {
        Object found = value.get(key);
        if (found == null) {
            if (Double.isNaN(absent)) {
                throw new IllegalArgumentException("[esqlog_identifiers] each word needs [" + key
                    + "]");
            }
            return absent;
        }
        if (!(found instanceof Number number)) {
            throw new IllegalArgumentException("[esqlog_identifiers] [" + key + "] must be a "
                + "number, got [" + found + "]");
        }
        return number.doubleValue();
    }

    private static boolean flag(Map<String, Object> value, String key) {
        Object found = value.getOrDefault(key, Boolean.FALSE);
        if (!(found instanceof Boolean bool)) {
            throw new IllegalArgumentException("[esqlog_identifiers] [" + key + "] must be true "
                + "or false, got [" + found + "]");
        }
        return bool;
    }

    /**
     * The query from its JSON object (the engine's parser read it as a map), with its boost
     * and name; IllegalArgumentException names what is wrong.
     */
    static QueryForms.Parsed<WordsQuery> parse(Map<String, Object> body) {
        String field = null;
        String lists = null;
        String select = "cover";
        String queryName = null;
        int budget = 0;
        float boost = 1.0f;
        List<WordPlan.Word> words = new ArrayList<>();
        for (Map.Entry<String, Object> entry : body.entrySet()) {
            String key = entry.getKey();
            Object value = entry.getValue();
            if ("words".equals(key)) {
                if (!(value instanceof List<?> list)) {
                    throw new IllegalArgumentException("[" + NAME + "] [words] must be an "
                        + "array of objects, got [" + value + "]");
                }
                for (Object word : list) {
                    if (!(word instanceof Map<?, ?> object)) {
                        throw new IllegalArgumentException("[" + NAME + "] [words] must hold "
                            + "objects only, found [" + word + "]");
                    }
                    @SuppressWarnings("unchecked")
                    Map<String, Object> fields = (Map<String, Object>) object;
                    words.add(word(fields));
                }
                continue;
            }
            String text = QueryForms.text(NAME, key, value, TAKES);
            switch (key) {
                case "field" -> field = text;
                case "lists" -> lists = text;
                case "select" -> select = text;
                case "budget" -> budget = whole(value, "budget");
                case "boost" -> boost = QueryForms.boost(NAME, value);
                case "_name" -> queryName = text;
                default -> throw new IllegalArgumentException("[" + NAME + "] does not support ["
                    + key + "]; " + TAKES);
            }
        }
        return new QueryForms.Parsed<>(new WordsQuery(field, lists, budget, select, words), boost,
            queryName);
    }

    private static int whole(Object text, String key) {
        double value = QueryForms.number(NAME, key, text);
        if (value != Math.rint(value) || Math.abs(value) > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("[" + NAME + "] [" + key + "] must be a whole "
                + "number, got [" + text + "]");
        }
        return (int) value;
    }

    /** The query's JSON object, as {@link #parse} reads it (without boost and _name). */
    Map<String, Object> fields() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("field", field);
        out.put("lists", lists);
        out.put("budget", budget);
        out.put("select", select);
        List<Map<String, Object>> objects = new ArrayList<>(words.size());
        for (WordPlan.Word w : words) {
            Map<String, Object> object = new LinkedHashMap<>();
            object.put("word", w.word());
            object.put("weight", w.weight());
            object.put("first", w.first());
            object.put("tier", w.tier());
            object.put("own", w.own());
            object.put("apart", w.apart());
            if (w.limit() >= 0) {
                object.put("limit", w.limit());
            }
            objects.add(object);
        }
        out.put("words", objects);
        return out;
    }

    /** The query to another node's stream, as {@link #readFrom} reads it. */
    void writeTo(NodeStream.Out out) throws IOException {
        out.string().put(field);
        out.string().put(lists);
        out.vint().put(budget);
        out.string().put(select);
        out.vint().put(words.size());
        for (WordPlan.Word w : words) {
            out.string().put(w.word());
            out.dbl().put(w.weight());
            out.bool().put(w.first());
            out.dbl().put(w.tier());
            out.i32().put(w.limit());
            out.bool().put(w.own());
            out.bool().put(w.apart());
        }
    }

    /** The query another node wrote ({@link #writeTo}). */
    static WordsQuery readFrom(NodeStream.In in) throws IOException {
        String field = in.string().take();
        String lists = in.string().take();
        int budget = in.vint().take();
        String select = in.string().take();
        int n = in.vint().take();
        List<WordPlan.Word> words = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            String word = in.string().take();
            double weight = in.dbl().take();
            boolean first = in.bool().take();
            double tier = in.dbl().take();
            int limit = in.i32().take();
            boolean own = in.bool().take();
            words.add(new WordPlan.Word(word, weight, first, tier, limit, own, in.bool().take()));
        }
        return new WordsQuery(field, lists, budget, select, words);
    }

    /** Each word's list as {@code cache} holds it, null where it does not. */
    List<WordList> cached(WordLists cache) {
        List<WordList> out = new ArrayList<>(words.size());
        for (WordPlan.Word w : words) {
            out.add(cache.get(lists, w.word()));
        }
        return out;
    }

    /** The positions of the lists not found. */
    static List<Integer> missing(List<WordList> found) {
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < found.size(); i++) {
            if (found.get(i) == null) {
                out.add(i);
            }
        }
        return out;
    }

    /**
     * The list of word {@code at} from its document's source (null: no document, the word is
     * inside no compound), kept in {@code cache}; a malformed document is the lists index's
     * fault, named.
     */
    WordList kept(WordLists cache, int at, Map<String, Object> source) {
        String word = words.get(at).word();
        WordList list;
        try {
            list = source == null ? WordList.EMPTY
                : WordList.parse(source.get("ids"), source.get("df"), source.get("terms"));
        } catch (IllegalArgumentException e) {
            throw unreadable("the list of [" + word + "] is malformed: " + e.getMessage());
        }
        cache.put(lists, word, list);
        return list;
    }

    /** The error of a word-lists index that cannot be read: the client plans again itself. */
    IllegalArgumentException unreadable(String why) {
        return new IllegalArgumentException("[esqlog_identifiers] cannot read the word lists in ["
            + lists + "]: " + why + "; run esqlog calibrate --identifiers again to write them");
    }

    /** Whether the query takes every compound of each word (no budget): {@code select: "all"}. */
    public boolean everyCompound() {
        return "all".equals(select);
    }

    /**
     * select "all": the Lucene query of every word's whole group ({@link WholeWordQuery}) or
     * own term, over {@code found} (its words' lists, in word order), on the engine's field
     * {@code fieldName}; {@code bm25} reads the field's BM25 as SaturationQuery does.
     */
    public Query everyCompoundQuery(String fieldName, List<WordList> found,
                                    Function<Similarity, float[]> bm25) {
        List<WordPlan.Clause> clauses = WordPlan.everyCompound(words, found);
        if (clauses.isEmpty()) {
            return new MatchNoDocsQuery("no word of the query is in the index");
        }
        AtomicLong uncached = new AtomicLong();
        BooleanQuery.Builder out = new BooleanQuery.Builder();
        for (WordPlan.Clause clause : clauses) {
            Query one = clause instanceof WordPlan.Whole whole
                ? new WholeWordQuery(fieldName, lists, whole, bm25, uncached)
                : SaturationQuery.of(fieldName, SaturationQuery.encoded(
                    ((WordPlan.Group) clause).terms()), false, bm25);
            out.add(new BoostQuery(one, (float) clause.boost()), BooleanClause.Occur.SHOULD);
        }
        return out.build();
    }

    /** The groups of this query over its words' lists (in word order). */
    List<WordPlan.Group> groups(List<WordList> found) {
        return WordPlan.groups(words, found, budget, select);
    }
}
