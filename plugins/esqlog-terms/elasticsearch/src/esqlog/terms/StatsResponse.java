package esqlog.terms;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import org.elasticsearch.action.FailedNodeException;
import org.elasticsearch.action.support.nodes.BaseNodesResponse;
import org.elasticsearch.cluster.ClusterName;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.common.io.stream.StreamOutput;
import org.elasticsearch.xcontent.ToXContentObject;
import org.elasticsearch.xcontent.XContentBuilder;

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
            out.add(new NodeStats(in, null));
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
        List<CacheSections.Answer> answered = new ArrayList<>();
        for (NodeStats node : getNodes()) {
            answered.add(new CacheSections.Answer(node.getNode().getId(),
                node.getNode().getName(), node.sections));
        }
        List<CacheSections.Failure> failed = new ArrayList<>();
        for (FailedNodeException failure : failures()) {
            failed.add(CacheSections.Failure.of(failure.nodeId(), failure));
        }
        return body.map(CacheSections.answer(getClusterName().value(), answered, failed));
    }
}
