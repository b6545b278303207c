package esqlog.terms;

import java.io.IOException;

import org.elasticsearch.TransportVersion;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.index.query.AbstractQueryBuilder;

/**
 * The base of esqlog's query builders on Elasticsearch 8.11 to 9.3, whose AbstractQueryBuilder
 * asks every query for {@code doToQuery(context)}. From 9.4 on it passes a clause-counting
 * visitor instead, which leaf queries take through LeafQueryBuilder (elasticsearch-9.4/).
 */
abstract class LeafBuilder<QB extends LeafBuilder<QB>> extends AbstractQueryBuilder<QB> {
    LeafBuilder() {}

    LeafBuilder(StreamInput in) throws IOException {
        super(in);
    }

    @Override
    public final TransportVersion getMinimalSupportedVersion() {
        return EngineStreams.OLDEST_WIRE;
    }
}
