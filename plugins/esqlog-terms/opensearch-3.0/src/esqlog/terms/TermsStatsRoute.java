package esqlog.terms;

import org.opensearch.rest.RestRequest;
import org.opensearch.transport.client.node.NodeClient;

/** TermsStatsHandler on OpenSearch 3.0 and later, where NodeClient lives in org.opensearch.transport.client.node. */
final class TermsStatsRoute extends TermsStatsHandler {
    @Override
    protected RestChannelConsumer prepareRequest(RestRequest request, NodeClient client) {
        return answer();
    }
}
