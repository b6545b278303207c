package esqlog.terms;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

import org.apache.lucene.search.MatchNoDocsQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.similarities.Similarity;
import org.elasticsearch.common.ParsingException;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.common.io.stream.StreamOutput;
import org.elasticsearch.index.mapper.MappedFieldType;
import org.elasticsearch.lucene.similarity.LegacyBM25Similarity;
import org.elasticsearch.index.query.SearchExecutionContext;
import org.elasticsearch.xcontent.XContentBuilder;
import org.elasticsearch.xcontent.XContentParser;

/**
 * {@code {"esqlog_terms": {"field": "body", "terms": ["read", "readfile"], "boost": 1.3}}}: a
 * Lucene SynonymQuery over the listed terms, taken as they are (no analysis).
 *
 * <p>Why: the terms score as ONE BM25 saturation of their summed term frequency, as a span_or of
 * span_term does, but without reading positions and with impacts, so the engine can skip
 * documents that cannot make the top hits. Its idf is the one of the largest df among the
 * terms the scoring shard holds (the dfs statistics under dfs_query_then_fetch); with
 * {@code "idf": false} there is none (SaturationQuery): the score is boost * saturation, the same
 * on every shard whatever its statistics, scored by the same Lucene queries (lazily read
 * postings, impacts) through a BM25 with a constant idf.
 */
public final class TermsQueryBuilder extends LeafBuilder<TermsQueryBuilder> {
    public static final String NAME = TermsQuery.NAME;

    /** Elasticsearch's BM25 is LegacyBM25Similarity: Lucene's, its weight times (1 + k1). */
    static final Function<Similarity, float[]> BM25_PARAMS = similarity ->
        similarity instanceof LegacyBM25Similarity legacy
            ? new float[] {legacy.getK1(), legacy.getB(), 1f + legacy.getK1()}
            : SaturationQuery.luceneBm25(similarity);

    private final TermsQuery query;

    public TermsQueryBuilder(String field, List<String> terms) {
        this(field, terms, true);
    }

    /** {@code idf} false: the score is boost * the BM25 saturation, no idf (SaturationQuery). */
    public TermsQueryBuilder(String field, List<String> terms, boolean idf) {
        this(new TermsQuery(field, terms, idf));
    }

    private TermsQueryBuilder(TermsQuery query) {
        this.query = Objects.requireNonNull(query);
    }

    public TermsQueryBuilder(StreamInput in) throws IOException {
        super(in);
        this.query = TermsQuery.readFrom(EngineStreams.in(in));
    }

    @Override
    protected void doWriteTo(StreamOutput out) throws IOException {
        query.writeTo(EngineStreams.out(out));
    }

    @Override
    protected void doXContent(XContentBuilder builder, Params params) throws IOException {
        builder.startObject(NAME);
        for (Map.Entry<String, Object> field : query.fields().entrySet()) {
            builder.field(field.getKey(), field.getValue());
        }
        printBoostAndQueryName(builder);
        builder.endObject();
    }

    public static TermsQueryBuilder fromXContent(XContentParser parser) throws IOException {
        try {
            QueryForms.Parsed<TermsQuery> parsed = TermsQuery.parse(parser.map());
            return new TermsQueryBuilder(parsed.query()).boost(parsed.boost())
                .queryName(parsed.queryName());
        } catch (IllegalArgumentException e) {
            throw new ParsingException(parser.getTokenLocation(), e.getMessage());
        }
    }

    @Override
    protected Query doToQuery(SearchExecutionContext context) throws IOException {
        MappedFieldType type = context.getFieldType(query.field());
        if (type == null) {
            return new MatchNoDocsQuery("unmapped field [" + query.field() + "]");
        }
        return query.toQuery(type.name(), BM25_PARAMS);
    }

    @Override
    protected boolean doEquals(TermsQueryBuilder other) {
        return query.equals(other.query);
    }

    @Override
    protected int doHashCode() {
        return query.hashCode();
    }


    @Override
    public String getWriteableName() {
        return NAME;
    }
}
