package esqlog.terms;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.List;
import java.util.Map;

import org.apache.lucene.tests.util.LuceneTestCase;

/**
 * The cluster's figures of {@code GET /_esqlog/terms/stats} are the sums of its nodes': each
 * counter added over the nodes that report it, every section present even when no node
 * answered, and a node's own report naming its three caches; a node's report reads back from
 * its stream, and the answer counts and names the nodes.
 */
public class CacheSectionsTest extends LuceneTestCase {
    public void testCountersAddUpOverNodesSectionBySection() {
        Map<String, Map<String, Long>> one = Map.of(
            CacheSections.TERM_STATES, Map.of("hits", 3L, "misses", 1L),
            CacheSections.WORD_LISTS, Map.of("hits", 5L));
        Map<String, Map<String, Long>> two = Map.of(
            CacheSections.TERM_STATES, Map.of("hits", 4L, "evictions", 2L),
            CacheSections.WORD_LISTS, Map.of("hits", 6L, "misses", 7L));
        Map<String, Map<String, Long>> sum = CacheSections.sum(List.of(one, two));
        assertEquals(Map.of("hits", 7L, "misses", 1L, "evictions", 2L),
            sum.get(CacheSections.TERM_STATES));
        assertEquals(Map.of("hits", 11L, "misses", 7L), sum.get(CacheSections.WORD_LISTS));
        assertEquals(List.of(CacheSections.TERM_STATES, CacheSections.WORD_LISTS,
            CacheSections.WORD_POSTINGS),
            List.copyOf(sum.keySet()));
    }

    public void testNoNodeGivesBothSectionsEmpty() {
        Map<String, Map<String, Long>> sum = CacheSections.sum(List.of());
        assertEquals(List.of(CacheSections.TERM_STATES, CacheSections.WORD_LISTS,
            CacheSections.WORD_POSTINGS),
            List.copyOf(sum.keySet()));
        assertTrue(sum.get(CacheSections.TERM_STATES).isEmpty());
        assertTrue(sum.get(CacheSections.WORD_LISTS).isEmpty());
    }

    public void testALocalReportNamesBothCachesWithTheirLimits() {
        Map<String, Map<String, Long>> local = CacheSections.local();
        assertEquals(List.of(CacheSections.TERM_STATES, CacheSections.WORD_LISTS,
            CacheSections.WORD_POSTINGS),
            List.copyOf(local.keySet()));
        assertTrue(local.get(CacheSections.TERM_STATES).containsKey("limit_in_bytes"));
        assertTrue(local.get(CacheSections.WORD_LISTS).containsKey("hits"));
        assertTrue(local.get(CacheSections.WORD_POSTINGS).containsKey("refused"));
    }

    public void testANodesReportReadsBackFromItsStream() throws IOException {
        Map<String, Map<String, Long>> local = CacheSections.local();
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        CacheSections.write(QueryFormsTest.out(new DataOutputStream(bytes)), local);
        Map<String, Map<String, Long>> read = CacheSections.read(
            QueryFormsTest.in(bytes.toByteArray()));
        assertEquals(local, read);
        assertEquals(List.copyOf(local.keySet()), List.copyOf(read.keySet()));
        for (String section : local.keySet()) {  // each section's counters in their order
            assertEquals(List.copyOf(local.get(section).keySet()),
                List.copyOf(read.get(section).keySet()));
        }
    }

    public void testTheAnswerCountsNamesAndSumsTheNodes() {
        Map<String, Map<String, Long>> one = Map.of(CacheSections.WORD_LISTS, Map.of("hits", 5L));
        Map<String, Map<String, Long>> two = Map.of(CacheSections.WORD_LISTS, Map.of("hits", 6L));
        Map<String, Object> answer = CacheSections.answer("c",
            List.of(new CacheSections.Answer("a1", "node-a", one),
                new CacheSections.Answer("b2", "node-b", two)),
            List.of(new CacheSections.Failure("c3", "no plugin")));
        assertEquals(List.of("_nodes", "cluster_name", CacheSections.TERM_STATES,
            CacheSections.WORD_LISTS, CacheSections.WORD_POSTINGS, "nodes"),
            List.copyOf(answer.keySet()));
        @SuppressWarnings("unchecked")
        Map<String, Object> counts = (Map<String, Object>) answer.get("_nodes");
        assertEquals(3, counts.get("total"));
        assertEquals(2, counts.get("successful"));
        assertEquals(1, counts.get("failed"));
        assertEquals(List.of(Map.of("node_id", "c3", "reason", "no plugin")),
            counts.get("failures"));
        assertEquals(Map.of("hits", 11L), answer.get(CacheSections.WORD_LISTS));
        @SuppressWarnings("unchecked")
        Map<String, Object> nodes = (Map<String, Object>) answer.get("nodes");
        assertEquals(Map.of("name", "node-a", CacheSections.WORD_LISTS, Map.of("hits", 5L)),
            nodes.get("a1"));
        assertEquals(List.of("a1", "b2"), List.copyOf(nodes.keySet()));
        Map<String, Object> none = CacheSections.answer("c", List.of(), List.of());
        @SuppressWarnings("unchecked")
        Map<String, Object> noCounts = (Map<String, Object>) none.get("_nodes");
        assertFalse(noCounts.containsKey("failures"));
        // a node's failure is named by its cause's message (the transport wraps it), else its own
        assertEquals("no plugin", CacheSections.Failure.of("c3",
            new RuntimeException("[c3] failed", new IllegalStateException("no plugin"))).reason());
        assertEquals("down", CacheSections.Failure.of("c3", new RuntimeException("down")).reason());
    }
}
