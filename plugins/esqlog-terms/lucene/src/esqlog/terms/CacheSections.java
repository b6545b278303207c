package esqlog.terms;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A node's caches as {@code GET /_esqlog/terms/stats} reports them: each cache's counters by
 * section ({@code term_state_cache}: TermStateCache, {@code word_lists}: WordLists,
 * {@code word_postings}: WordPostings), and
 * their sums over the nodes that answered.
 *
 * <p>Why engine-neutral: each engine's nodes action (StatsAction) carries these maps from
 * every node to the one that received the request and writes them out there; what a node
 * reports and how the cluster's figures add up is the same on both engines, so it is written
 * once. A counter a node does not report (a node of an older plugin) adds nothing to the sum.
 */
final class CacheSections {
    static final String TERM_STATES = "term_state_cache";
    static final String WORD_LISTS = "word_lists";
    static final String WORD_POSTINGS = "word_postings";

    private CacheSections() {
    }

    /** This node's caches, section by section, each in its counters' order. */
    static Map<String, Map<String, Long>> local() {
        Map<String, Map<String, Long>> out = new LinkedHashMap<>();
        out.put(TERM_STATES, TermStateCache.shared().stats());
        out.put(WORD_LISTS, WordLists.shared().stats());
        out.put(WORD_POSTINGS, WordPostings.shared().stats());
        return out;
    }

    /**
     * The sums of {@code nodes}' counters, section by section (sizes, limits, entries and
     * counts all add up over nodes: each node has caches of its own).
     */
    static Map<String, Map<String, Long>> sum(List<Map<String, Map<String, Long>>> nodes) {
        Map<String, Map<String, Long>> out = new LinkedHashMap<>();
        for (String section : List.of(TERM_STATES, WORD_LISTS, WORD_POSTINGS)) {
            out.put(section, new LinkedHashMap<>());
        }
        for (Map<String, Map<String, Long>> node : nodes) {
            for (Map.Entry<String, Map<String, Long>> section : node.entrySet()) {
                Map<String, Long> into = out.computeIfAbsent(section.getKey(),
                    key -> new LinkedHashMap<>());
                for (Map.Entry<String, Long> stat : section.getValue().entrySet()) {
                    into.merge(stat.getKey(), stat.getValue(), Long::sum);
                }
            }
        }
        return out;
    }

    /**
     * A node's sections to the stream back to the node that asked ({@link #read} reads them):
     * counts and names only, so that a node of a later plugin with more counters still
     * answers one of this release.
     */
    static void write(NodeStream.Out out, Map<String, Map<String, Long>> sections)
            throws IOException {
        out.vint().put(sections.size());
        for (Map.Entry<String, Map<String, Long>> section : sections.entrySet()) {
            out.string().put(section.getKey());
            out.vint().put(section.getValue().size());
            for (Map.Entry<String, Long> stat : section.getValue().entrySet()) {
                out.string().put(stat.getKey());
                out.i64().put(stat.getValue());
            }
        }
    }

    /** A node's sections, as {@link #write} wrote them. */
    static Map<String, Map<String, Long>> read(NodeStream.In in) throws IOException {
        int count = in.vint().take();
        Map<String, Map<String, Long>> out = new LinkedHashMap<>();
        for (int s = 0; s < count; s++) {
            String name = in.string().take();
            int stats = in.vint().take();
            Map<String, Long> section = new LinkedHashMap<>();
            for (int i = 0; i < stats; i++) {
                section.put(in.string().take(), in.i64().take());
            }
            out.put(name, section);
        }
        return out;
    }

    /** A node that answered: its id, its name, its sections. */
    record Answer(String id, String name, Map<String, Map<String, Long>> sections) {}

    /** A node that could not answer, and why. */
    record Failure(String id, String reason) {
        /** The node's failure as the answer names it: its cause's message, else its own. */
        static Failure of(String id, Throwable failure) {
            Throwable cause = failure.getCause() != null ? failure.getCause() : failure;
            return new Failure(id, String.valueOf(cause.getMessage()));
        }
    }

    /**
     * The whole answer of {@code GET /_esqlog/terms/stats} as the engine writes it out: how
     * many nodes answered (those that could not, named), each section summed over them, and
     * each node's own under {@code nodes} by id.
     */
    static Map<String, Object> answer(String cluster, List<Answer> nodes,
                                      List<Failure> failures) {
        Map<String, Object> counts = new LinkedHashMap<>();
        counts.put("total", nodes.size() + failures.size());
        counts.put("successful", nodes.size());
        counts.put("failed", failures.size());
        if (!failures.isEmpty()) {
            List<Map<String, Object>> failed = new ArrayList<>();
            for (Failure failure : failures) {
                Map<String, Object> one = new LinkedHashMap<>();
                one.put("node_id", failure.id());
                one.put("reason", failure.reason());
                failed.add(one);
            }
            counts.put("failures", failed);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("_nodes", counts);
        out.put("cluster_name", cluster);
        List<Map<String, Map<String, Long>>> each = new ArrayList<>();
        Map<String, Object> byId = new LinkedHashMap<>();
        for (Answer node : nodes) {
            each.add(node.sections());
            Map<String, Object> own = new LinkedHashMap<>();
            own.put("name", node.name());
            own.putAll(node.sections());
            byId.put(node.id(), own);
        }
        out.putAll(sum(each));
        out.put("nodes", byId);
        return out;
    }
}
