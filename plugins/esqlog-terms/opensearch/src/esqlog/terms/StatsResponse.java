package esqlog.terms;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.opensearch.action.FailedNodeException;
import org.opensearch.action.support.nodes.BaseNodesResponse;
import org.opensearch.cluster.ClusterName;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;
import org.opensearch.core.xcontent.ToXContentObject;
import org.opensearch.core.xcontent.XContentBuilder;

/**
 * The answer of {@code GET /_esqlog/terms/stats}: how many nodes answered, each cache's
 * counters summed over them (the top-level {@code term_state_cache} and {@code word_lists},
 * where a single node's stood before 1.10.0), and each node's own under {@code nodes}, by
 * node id; a node that could not answer (one without the plugin, or down) is named under
 * {@code _nodes.failures}.
 */
final class StatsResponse extends BaseNodesResponse<NodeStats> implements ToXContentObject {
    StatsResponse(ClusterName cluster, List<NodeStats> nodes, List<FailedNodeException> failed) {
        super(cluster, nodes, failed);
    }

    StatsResponse(StreamInput in) throws IOException {
        super(in);
    }

    @Override
    protected List<NodeStats> readNodesFrom(StreamInput in) throws IOException {
        int count = in.readVInt();
        List<NodeStats> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            out.add(new NodeStats(in));
        }
        return out;
    }

    @Override
    protected void writeNodesTo(StreamOutput out, List<NodeStats> nodes) throws IOException {
        out.writeVInt(nodes.size());
        for (NodeStats node : nodes) {
            node.writeTo(out);
        }
    }

    @Override
    public XContentBuilder toXContent(XContentBuilder body, Params params) throws IOException {
        body.startObject().startObject("_nodes");
        body.field("total", getNodes().size() + failures().size());
        body.field("successful", getNodes().size());
        body.field("failed", failures().size());
        if (!failures().isEmpty()) {
            body.startArray("failures");
            for (FailedNodeException failure : failures()) {
                Throwable cause = failure.getCause() != null ? failure.getCause() : failure;
                body.startObject().field("node_id", failure.nodeId())
                    .field("reason", String.valueOf(cause.getMessage())).endObject();
            }
            body.endArray();
        }
        body.endObject();
        body.field("cluster_name", getClusterName().value());
        List<Map<String, Map<String, Long>>> each = new ArrayList<>();
        for (NodeStats node : getNodes()) {
            each.add(node.sections);
        }
        sections(body, CacheSections.sum(each));
        body.startObject("nodes");
        for (NodeStats node : getNodes()) {
            body.startObject(node.getNode().getId()).field("name", node.getNode().getName());
            sections(body, node.sections);
            body.endObject();
        }
        return body.endObject().endObject();
    }

    private static void sections(XContentBuilder body, Map<String, Map<String, Long>> sections)
            throws IOException {
        for (Map.Entry<String, Map<String, Long>> section : sections.entrySet()) {
            body.startObject(section.getKey());
            for (Map.Entry<String, Long> stat : section.getValue().entrySet()) {
                body.field(stat.getKey(), stat.getValue());
            }
            body.endObject();
        }
    }
}
