package esqlog.terms;

import java.util.List;
import java.util.Map;

import org.apache.lucene.tests.util.LuceneTestCase;

/**
 * The cluster's figures of {@code GET /_esqlog/terms/stats} are the sums of its nodes': each
 * counter added over the nodes that report it, every section present even when no node
 * answered, and a node's own report naming its three caches.
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
}
