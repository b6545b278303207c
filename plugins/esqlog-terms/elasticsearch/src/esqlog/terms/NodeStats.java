package esqlog.terms;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;

import org.elasticsearch.action.support.nodes.BaseNodeResponse;
import org.elasticsearch.cluster.node.DiscoveryNode;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.common.io.stream.StreamOutput;

/**
 * One node's caches (CacheSections.local), as its answer to the stats nodes action
 * (StatsAction) travels back to the node that received {@code GET /_esqlog/terms/stats}.
 * Written as counts and names only, so that a node of a later plugin with more counters
 * still answers one of this release.
 */
final class NodeStats extends BaseNodeResponse {
    final Map<String, Map<String, Long>> sections;

    NodeStats(DiscoveryNode node) {
        super(node);
        sections = CacheSections.local();
    }

    /** As {@code node} (the node that sent it) answered. */
    NodeStats(StreamInput in, DiscoveryNode node) throws IOException {
        super(in, node);
        int count = in.readVInt();
        sections = new LinkedHashMap<>();
        for (int s = 0; s < count; s++) {
            String name = in.readString();
            int stats = in.readVInt();
            Map<String, Long> section = new LinkedHashMap<>();
            for (int i = 0; i < stats; i++) {
                section.put(in.readString(), in.readLong());
            }
            sections.put(name, section);
        }
    }

    @Override
    public void writeTo(StreamOutput out) throws IOException {
        super.writeTo(out);
        out.writeVInt(sections.size());
        for (Map.Entry<String, Map<String, Long>> section : sections.entrySet()) {
            out.writeString(section.getKey());
            out.writeVInt(section.getValue().size());
            for (Map.Entry<String, Long> stat : section.getValue().entrySet()) {
                out.writeString(stat.getKey());
                out.writeLong(stat.getValue());
            }
        }
    }
}
