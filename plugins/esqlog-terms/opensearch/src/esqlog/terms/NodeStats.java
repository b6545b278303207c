package esqlog.terms;

import java.io.IOException;
import java.util.Map;

import org.opensearch.action.support.nodes.BaseNodeResponse;
import org.opensearch.cluster.node.DiscoveryNode;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;

/**
 * One node's caches (CacheSections.local), as its answer to the stats nodes action
 * (StatsAction) travels back to the node that received {@code GET /_esqlog/terms/stats}.
 * Written as CacheSections writes them to the node's stream.
 */
final class NodeStats extends BaseNodeResponse {
    final Map<String, Map<String, Long>> sections;

    NodeStats(DiscoveryNode node) {
        super(node);
        sections = CacheSections.local();
    }

    NodeStats(StreamInput in) throws IOException {
        super(in);
        sections = CacheSections.read(EngineStreams.in(in));
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        super.writeTo(out);
        CacheSections.write(EngineStreams.out(out), sections);
    }
}
