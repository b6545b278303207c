package esqlog.terms;

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
}
