package esqlog.terms;

import org.elasticsearch.TransportVersion;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.common.io.stream.StreamOutput;

/** This engine's node streams as the shared sources read and write them ({@link NodeStream}). */
final class EngineStreams {
    /**
     * The oldest node the queries may be sent to: every node of an 8.x or 9.x cluster reads
     * them. The wire version of 8.0.0, by its id (its constant, TransportVersions.V_8_0_0, is
     * gone from 9.3); each release range's LeafBuilder answers it.
     */
    static final TransportVersion OLDEST_WIRE = TransportVersion.fromId(8_00_00_99);

    private EngineStreams() {}

    static NodeStream.In in(StreamInput in) {
        return new NodeStream.In(in::readString, in::readVInt, in::readDouble, in::readBoolean,
            in::readInt, in::readLong);
    }

    static NodeStream.Out out(StreamOutput out) {
        return new NodeStream.Out(out::writeString, out::writeVInt, out::writeDouble,
            out::writeBoolean, out::writeInt, out::writeLong);
    }
}
