package esqlog.terms;

import java.io.IOException;

import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.transport.TransportRequest;

/** StatsAction's request to one node on OpenSearch 3.0 and later, which removed BaseNodeRequest. */
public final class StatsNodeRequest extends TransportRequest {
    StatsNodeRequest() {
    }

    StatsNodeRequest(StreamInput in) throws IOException {
        super(in);
    }
}
