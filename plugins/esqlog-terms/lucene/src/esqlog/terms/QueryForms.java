package esqlog.terms;

import java.util.List;
import java.util.Map;

/**
 * What the plugin's queries share in the JSON object of a request, read as a map: the
 * parsed query with the boost and name every engine query takes, and the checks of a value.
 *
 * <p>Why: Elasticsearch and OpenSearch each have their own XContent classes (in different
 * packages, unrelated types), so a query builder must be written once per engine. What each
 * query does with its object (its keys, their checks) is written once, here and in {@link
 * WordsQuery} and {@link TermsQuery}; each engine's builder reads the object as a map and
 * writes the query's map back ({@code fields()}). Its stream between nodes is {@link
 * NodeStream}.
 */
final class QueryForms {
    private QueryForms() {}

    /**
     * A query read from its JSON object, with the two keys every engine query takes beside
     * its own ({@code boost}, {@code _name}).
     */
    record Parsed<Q>(Q query, float boost, String queryName) {}

    /** {@code boost} as the engines read it (a number, or a string of one), 0 or more. */
    static float boost(String query, Object value) {
        double boost = number(query, "boost", value);
        if (!(boost >= 0)) {  // the engine's own message would print the default boost
            throw new IllegalArgumentException("[" + query + "] [boost] must be 0 or more, got ["
                + value + "]; use a value between 0 and 1 to lower a group");
        }
        return (float) boost;
    }

    /** A number, or a string of one (as the engines' parsers coerce it). */
    static double number(String query, String key, Object value) {
        try {
            return value instanceof Number number ? number.doubleValue()
                : Double.parseDouble(String.valueOf(value));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("[" + query + "] [" + key + "] must be a number, "
                + "got [" + value + "]");
        }
    }

    /** A value that must be one (not an object or an array), as text. */
    static String text(String query, String key, Object value, String takes) {
        if (value instanceof Map<?, ?> || value instanceof List<?>) {
            throw new IllegalArgumentException("[" + query + "] does not support [" + key
                + "] here (an object or array); " + takes);
        }
        return String.valueOf(value);
    }
}
