package esqlog.terms;

import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.common.io.stream.StreamOutput;

/** This engine's node streams as the shared sources read and write them ({@link NodeStream}). */
final class EngineStreams {
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
