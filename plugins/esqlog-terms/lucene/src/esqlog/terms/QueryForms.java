package esqlog.terms;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The two forms a query of the plugin takes outside Lucene, in terms both engines have:
 * between nodes, a stream of primitive values; in a request, a JSON object read as a map.
 *
 * <p>Why: Elasticsearch and OpenSearch each have their own StreamInput, StreamOutput and
 * XContent classes (in different packages, unrelated types), so a query builder must be
 * written once per engine. What each query does with those forms (the order of its values,
 * its JSON keys, their checks) is written once, here and in {@link WordsQuery} and {@link
 * TermsQuery}; each engine's builder passes its stream's own methods as references, and reads
 * and writes the JSON object as a map.
 */
final class QueryForms {
    private QueryForms() {}

    /** One value written to the engine's stream (a method reference of its StreamOutput). */
    @FunctionalInterface
    interface Put<T> {
        void put(T value) throws IOException;
    }

    /** One value read from the engine's stream (a method reference of its StreamInput). */
    @FunctionalInterface
    interface Take<T> {
        T take() throws IOException;
    }

    /** An engine's StreamOutput: its writeString, writeVInt, writeDouble, writeBoolean, writeInt. */
    record Out(Put<String> string, Put<Integer> vint, Put<Double> dbl, Put<Boolean> bool,
               Put<Integer> i32) {
        /** What the engines' writeStringArray writes: the count, then each string. */
        void strings(List<String> values) throws IOException {
            vint.put(values.size());
            for (String value : values) {
                string.put(value);
            }
        }
    }

    /** An engine's StreamInput: its readString, readVInt, readDouble, readBoolean, readInt. */
    record In(Take<String> string, Take<Integer> vint, Take<Double> dbl, Take<Boolean> bool,
              Take<Integer> i32) {
        /** What the engines' readStringArray reads. */
        List<String> strings() throws IOException {
            int n = vint.take();
            List<String> out = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                out.add(string.take());
            }
            return out;
        }
    }

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
