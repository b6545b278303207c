package esqlog.terms;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.similarities.Similarity;
import org.apache.lucene.util.BytesRef;

/**
 * What an {@code esqlog_terms} query says ({@code {"field": "body", "terms": ["read",
 * "readfile"], "idf": false}}), checked, in its two forms outside Lucene (a node's stream:
 * {@link NodeStream}; a request's JSON object: {@link QueryForms}), and the Lucene query it
 * runs as ({@link SaturationQuery}); both engines' builders hold one.
 */
final class TermsQuery {
    /** The query's name in a request, as both engines register it. */
    static final String NAME = "esqlog_terms";
    static final String TAKES = "it takes field, terms, idf (a boolean), boost and _name";

    private final String field;
    private final List<String> terms;
    private final List<BytesRef> bytes;  // the terms encoded once, not on every shard
    private final boolean idf;

    /** {@code idf} false: the score is boost * the BM25 saturation, no idf (SaturationQuery). */
    TermsQuery(String field, List<String> terms, boolean idf) {
        if (field == null || field.isEmpty()) {
            throw new IllegalArgumentException("[" + NAME + "] requires a non-empty [field]");
        }
        if (terms == null || terms.isEmpty()) {
            throw new IllegalArgumentException("[" + NAME + "] requires a non-empty [terms] array");
        }
        int limit = IndexSearcher.getMaxClauseCount();
        if (terms.size() > limit) {
            throw new IllegalArgumentException("[" + NAME + "] holds " + terms.size()
                + " terms, more than the engine's max clause count of " + limit);
        }
        this.field = field;
        this.terms = List.copyOf(new LinkedHashSet<>(terms));
        this.bytes = SaturationQuery.encoded(this.terms);
        this.idf = idf;
    }

    /**
     * The query as another node checked it ({@link #readFrom}): its terms already each once,
     * and not held again to this node's clause limit, which the engine may size by the
     * node's heap (the query was accepted where it was parsed).
     */
    private TermsQuery(String field, String[] unique, boolean idf) {
        this.field = field;
        this.terms = List.of(unique);
        this.bytes = SaturationQuery.encoded(this.terms);
        this.idf = idf;
    }

    String field() {
        return field;
    }

    /**
     * The query from its JSON object (the engine's parser read it as a map), with its boost
     * and name; IllegalArgumentException names what is wrong.
     */
    static QueryForms.Parsed<TermsQuery> parse(Map<String, Object> body) {
        String field = null;
        List<String> terms = null;
        boolean idf = true;
        float boost = 1.0f;
        String queryName = null;
        for (Map.Entry<String, Object> entry : body.entrySet()) {
            String key = entry.getKey();
            Object value = entry.getValue();
            switch (key) {
                case "terms" -> terms = strings(value);
                case "idf" -> {
                    if (!(value instanceof Boolean flag)) {
                        throw new IllegalArgumentException("[" + NAME + "] does not support [idf] "
                            + "here ([" + value + "]: a boolean); " + TAKES);
                    }
                    idf = flag;
                }
                case "field" -> field = QueryForms.text(NAME, key, value, TAKES);
                case "boost" -> boost = QueryForms.boost(NAME, value);
                case "_name" -> queryName = QueryForms.text(NAME, key, value, TAKES);
                default -> throw new IllegalArgumentException("[" + NAME + "] does not support ["
                    + key + "]; " + TAKES);
            }
        }
        return new QueryForms.Parsed<>(new TermsQuery(field, terms, idf), boost, queryName);
    }

    private static List<String> strings(Object value) {
        if (!(value instanceof List<?> list)) {
            throw new IllegalArgumentException("[" + NAME + "] does not support [terms] here (["
                + value + "]: an array of strings); " + TAKES);
        }
        List<String> out = new ArrayList<>(list.size());
        for (Object term : list) {
            if (!(term instanceof String text)) {
                throw new IllegalArgumentException("[" + NAME + "] [terms] must hold strings only, "
                    + "found [" + term + "]");
            }
            out.add(text);
        }
        return out;
    }

    /** The query's JSON object, as {@link #parse} reads it (without boost and _name). */
    Map<String, Object> fields() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("field", field);
        out.put("terms", terms);
        if (!idf) {
            out.put("idf", false);
        }
        return out;
    }

    /** The query to another node's stream, as {@link #readFrom} reads it. */
    void writeTo(NodeStream.Out out) throws IOException {
        out.string().put(field);
        out.strings(terms);
        out.bool().put(idf);
    }

    /** The query another node wrote ({@link #writeTo}). */
    static TermsQuery readFrom(NodeStream.In in) throws IOException {
        String field = in.string().take();
        String[] terms = in.strings().toArray(new String[0]);
        return new TermsQuery(field, terms, in.bool().take());
    }

    /** The Lucene query on the engine's field {@code fieldName}, BM25 read by {@code bm25}. */
    Query toQuery(String fieldName, Function<Similarity, float[]> bm25) {
        return SaturationQuery.of(fieldName, bytes, idf, bm25);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof TermsQuery that && field.equals(that.field)
            && terms.equals(that.terms) && idf == that.idf;
    }

    @Override
    public int hashCode() {
        return Objects.hash(field, terms, idf);
    }
}
