package esqlog.terms;

import java.util.List;

import org.opensearch.rest.BaseRestHandler;
import org.opensearch.rest.RestRequest;

/**
 * {@code GET /_esqlog/terms/stats[/{node_id}]}: the term-state cache (TermStateCache) and the
 * word lists (WordLists) of every node, or of those named (ids, names, {@code _local} and the
 * engine's other node filters, comma-separated): each node's size against its limits,
 * entries, segments, hits, misses and evictions, and their sums (StatsResponse), so that an
 * operator can see whether every node's caches are sized for its traffic.
 *
 * <p>BaseRestHandler's one abstract method names NodeClient, which OpenSearch 3.0 moved to
 * another package; TermsStatsRoute (opensearch-2.11/ and opensearch-3.0/, the one class
 * compiled per release range) overrides it and sends {@link #request} through it.
 */
abstract class TermsStatsHandler extends BaseRestHandler {
    @Override
    public String getName() {
        return "esqlog_terms_stats";
    }

    @Override
    public List<Route> routes() {
        return List.of(new Route(RestRequest.Method.GET, "/_esqlog/terms/stats"),
            new Route(RestRequest.Method.GET, "/_esqlog/terms/stats/{node_id}"));
    }

    /** The nodes action's request for the nodes the path names (none: all). */
    protected static StatsAction.Request request(RestRequest rest) {
        String nodes = rest.param("node_id");
        return new StatsAction.Request(nodes == null || nodes.isEmpty() ? new String[0]
            : nodes.split(","));
    }
}
