package esqlog.terms;

import java.io.IOException;

import org.elasticsearch.TransportVersion;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.index.query.LeafQueryBuilder;

/**
 * The base of esqlog's query builders from Elasticsearch 9.4 on: AbstractQueryBuilder asks for
 * {@code doToQuery(context, visitor)}, with a visitor that counts the clauses a query makes
 * (against indices.query.bool.max_clause_count) and charges their bytes to the request breaker
 * as the query is built. LeafQueryBuilder answers it with {@code doToQuery(context)} and walks
 * the query it returns with that visitor, so a group's terms count there as they do in the
 * searcher. Up to 9.3 the base is AbstractQueryBuilder itself (elasticsearch-8.11-9.3/).
 */
abstract class LeafBuilder<QB extends LeafBuilder<QB>> extends LeafQueryBuilder<QB> {
    LeafBuilder() {}

    LeafBuilder(StreamInput in) throws IOException {
        super(in);
    }

    @Override
    public final TransportVersion getMinimalSupportedVersion() {
        return EngineStreams.OLDEST_WIRE;
    }
}
