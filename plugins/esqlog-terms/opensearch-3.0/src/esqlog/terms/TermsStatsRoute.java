package esqlog.terms;

import org.opensearch.rest.RestRequest;
import org.opensearch.rest.action.RestToXContentListener;
import org.opensearch.transport.client.node.NodeClient;

/** TermsStatsHandler on OpenSearch 3.0 and later, where NodeClient lives in org.opensearch.transport.client.node. */
final class TermsStatsRoute extends TermsStatsHandler {
    @Override
    protected RestChannelConsumer prepareRequest(RestRequest request, NodeClient client) {
        StatsAction.Request nodes = request(request);
        return channel -> client.execute(StatsAction.TYPE, nodes,
            new RestToXContentListener<>(channel));
    }
}
