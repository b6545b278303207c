package esqlog.terms;

import java.util.List;
import java.util.Map;

import org.elasticsearch.rest.RestStatus;
import org.elasticsearch.xcontent.XContentBuilder;
import org.elasticsearch.rest.BaseRestHandler;
import org.elasticsearch.rest.RestResponse;
import org.elasticsearch.rest.RestRequest;
import org.elasticsearch.client.internal.node.NodeClient;

/**
 * {@code GET /_esqlog/terms/stats}: the receiving node's term-state cache (TermStateCache):
 * its size against its limits, entries, segments, hits, misses and evictions, so that an
 * operator can see whether the cache is sized for the traffic.
 */
final class TermsStatsHandler extends BaseRestHandler {
    @Override
    public String getName() {
        return "esqlog_terms_stats";
    }

    @Override
    public List<Route> routes() {
        return List.of(new Route(RestRequest.Method.GET, "/_esqlog/terms/stats"));
    }

    @Override
    protected RestChannelConsumer prepareRequest(RestRequest request, NodeClient client) {
        return channel -> {
            XContentBuilder body = channel.newBuilder();
            body.startObject().startObject("term_state_cache");
            for (Map.Entry<String, Long> stat : TermStateCache.shared().stats().entrySet()) {
                body.field(stat.getKey(), stat.getValue());
            }
            body.endObject().startObject("word_lists");
            for (Map.Entry<String, Long> stat : WordLists.shared().stats().entrySet()) {
                body.field(stat.getKey(), stat.getValue());
            }
            body.endObject().endObject();
            channel.sendResponse(new RestResponse(RestStatus.OK, body));
        };
    }
}
