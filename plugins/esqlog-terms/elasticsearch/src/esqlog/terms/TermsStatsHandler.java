package esqlog.terms;

import java.util.List;

import org.elasticsearch.client.internal.node.NodeClient;
import org.elasticsearch.rest.BaseRestHandler;
import org.elasticsearch.rest.RestRequest;
import org.elasticsearch.rest.action.RestToXContentListener;

/**
 * {@code GET /_esqlog/terms/stats[/{node_id}]}: the term-state cache (TermStateCache) and the
 * word lists (WordLists) of every node, or of those named (ids, names, {@code _local} and the
 * engine's other node filters, comma-separated): each node's size against its limits,
 * entries, segments, hits, misses and evictions, and their sums (StatsResponse), so that an
 * operator can see whether every node's caches are sized for its traffic. The nodes action
 * (StatsAction) is the one class compiled per release range of its API.
 */
final class TermsStatsHandler extends BaseRestHandler {
    @Override
    public String getName() {
        return "esqlog_terms_stats";
    }

    @Override
    public List<Route> routes() {
        return List.of(new Route(RestRequest.Method.GET, "/_esqlog/terms/stats"),
            new Route(RestRequest.Method.GET, "/_esqlog/terms/stats/{node_id}"));
    }

    @Override
    protected RestChannelConsumer prepareRequest(RestRequest request, NodeClient client) {
        String named = request.param("node_id");
        StatsAction.Request nodes = new StatsAction.Request(named == null || named.isEmpty()
            ? new String[0] : named.split(","));
        return channel -> client.execute(StatsAction.TYPE, nodes,
            new RestToXContentListener<>(channel));
    }
}
