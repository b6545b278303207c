package esqlog.terms;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * An engine's stream between nodes (its StreamOutput and StreamInput), as the shared sources
 * write and read the plugin's queries and node answers on it: the stream's own methods, passed
 * by each engine's glue as method references.
 *
 * <p>Why: the two engines' stream classes are unrelated types in different packages, so code
 * that writes to them would be written once per engine. The order of the values a query or
 * an answer writes is what must agree between the node that writes and the one that reads:
 * written once here ({@link WordsQuery}, {@link TermsQuery}, {@link CacheSections}), it cannot
 * drift between engines.
 */
final class NodeStream {
    private NodeStream() {}

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

    /**
     * An engine's StreamOutput: its writeString, writeVInt, writeDouble, writeBoolean,
     * writeInt, writeLong.
     */
    record Out(Put<String> string, Put<Integer> vint, Put<Double> dbl, Put<Boolean> bool,
               Put<Integer> i32, Put<Long> i64) {
        /** What the engines' writeStringArray writes: the count, then each string. */
        void strings(List<String> values) throws IOException {
            vint.put(values.size());
            for (String value : values) {
                string.put(value);
            }
        }
    }

    /**
     * An engine's StreamInput: its readString, readVInt, readDouble, readBoolean, readInt,
     * readLong.
     */
    record In(Take<String> string, Take<Integer> vint, Take<Double> dbl, Take<Boolean> bool,
              Take<Integer> i32, Take<Long> i64) {
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
}
