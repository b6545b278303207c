package esqlog.terms;

import java.util.List;
import java.util.Map;

import org.opensearch.core.rest.RestStatus;
import org.opensearch.core.xcontent.XContentBuilder;
import org.opensearch.rest.BaseRestHandler;
import org.opensearch.rest.BytesRestResponse;
import org.opensearch.rest.RestRequest;

/**
 * {@code GET /_esqlog/terms/stats}: the receiving node's term-state cache (TermStateCache)
 * and its word lists (WordLists):
 * its size against its limits, entries, segments, hits, misses and evictions, so that an
 * operator can see whether the cache is sized for the traffic.
 *
 * <p>BaseRestHandler's one abstract method names NodeClient, which OpenSearch 3.0 moved to
 * another package; TermsStatsRoute (opensearch-2.11/ and opensearch-3.0/, the one class
 * compiled per release range) overrides it and answers with {@link #answer()}.
 */
abstract class TermsStatsHandler extends BaseRestHandler {
    @Override
    public String getName() {
        return "esqlog_terms_stats";
    }

    @Override
    public List<Route> routes() {
        return List.of(new Route(RestRequest.Method.GET, "/_esqlog/terms/stats"));
    }

    /** The response, whatever the client. */
    protected final RestChannelConsumer answer() {
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
            channel.sendResponse(new BytesRestResponse(RestStatus.OK, body));
        };
    }
}
