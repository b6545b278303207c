package esqlog.terms;

import java.io.IOException;

import org.opensearch.action.support.nodes.BaseNodeRequest;
import org.opensearch.core.common.io.stream.StreamInput;

/** StatsAction's request to one node on OpenSearch 2.x, whose nodes actions take a BaseNodeRequest. */
public final class StatsNodeRequest extends BaseNodeRequest {
    StatsNodeRequest() {
    }

    StatsNodeRequest(StreamInput in) throws IOException {
        super(in);
    }
}
