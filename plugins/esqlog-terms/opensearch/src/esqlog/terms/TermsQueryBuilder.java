package esqlog.terms;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.MatchNoDocsQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.similarities.Similarity;
import org.apache.lucene.util.BytesRef;
import org.opensearch.core.ParseField;
import org.opensearch.core.common.ParsingException;
import org.opensearch.core.common.io.stream.StreamInput;
import org.opensearch.core.common.io.stream.StreamOutput;
import org.opensearch.core.xcontent.XContentBuilder;
import org.opensearch.core.xcontent.XContentParser;
import org.opensearch.index.mapper.MappedFieldType;
import org.opensearch.index.query.AbstractQueryBuilder;
import org.opensearch.index.query.QueryShardContext;

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
public final class TermsQueryBuilder extends AbstractQueryBuilder<TermsQueryBuilder> {
    public static final String NAME = "esqlog_terms";
    private static final ParseField FIELD = new ParseField("field");
    private static final ParseField TERMS = new ParseField("terms");
    private static final ParseField IDF = new ParseField("idf");

    /**
     * OpenSearch 3.x's BM25 is Lucene's BM25Similarity; 2.x's is a LegacyBM25Similarity (its
     * weight times 1 + k1), whose class moved between releases
     * (org.apache.lucene.misc.search.similarity in 2.x, org.opensearch.lucene.similarity in
     * 3.x): read by name, so one source compiles against both.
     */
    static final Function<Similarity, float[]> BM25_PARAMS = TermsQueryBuilder::bm25;

    private static float[] bm25(Similarity similarity) {
        if (similarity != null && similarity.getClass().getSimpleName().equals("LegacyBM25Similarity")) {
            try {
                float k1 = (Float) similarity.getClass().getMethod("getK1").invoke(similarity);
                float b = (Float) similarity.getClass().getMethod("getB").invoke(similarity);
                return new float[] {k1, b, 1f + k1};
            } catch (ReflectiveOperationException e) {
                return null;
            }
        }
        return SaturationQuery.luceneBm25(similarity);
    }

    private final String field;
    private final List<String> terms;
    private final List<BytesRef> bytes;  // the terms encoded once, not on every shard
    private final boolean idf;

    public TermsQueryBuilder(String field, List<String> terms) {
        this(field, terms, true);
    }

    /** {@code idf} false: the score is boost * the BM25 saturation, no idf (SaturationQuery). */
    public TermsQueryBuilder(String field, List<String> terms, boolean idf) {
        if (field == null || field.isEmpty()) {
            throw new IllegalArgumentException("[" + NAME + "] requires a non-empty [field]");
        }
        if (terms == null || terms.isEmpty()) {
            throw new IllegalArgumentException("[" + NAME + "] requires a non-empty [terms] array");
        }
        int limit = IndexSearcher.getMaxClauseCount();
        if (terms.size() > limit) {
            throw new IllegalArgumentException("[" + NAME + "] holds " + terms.size()
                + " terms, more than the engine's max clause count of " + limit);
        }
        this.field = field;
        this.terms = List.copyOf(new LinkedHashSet<>(terms));
        this.bytes = SaturationQuery.encoded(this.terms);
        this.idf = idf;
    }

    public TermsQueryBuilder(StreamInput in) throws IOException {
        super(in);
        this.field = in.readString();
        this.terms = List.of(in.readStringArray());
        this.bytes = SaturationQuery.encoded(this.terms);
        this.idf = in.readBoolean();
    }

    @Override
    protected void doWriteTo(StreamOutput out) throws IOException {
        out.writeString(field);
        out.writeStringArray(terms.toArray(new String[0]));
        out.writeBoolean(idf);
    }

    @Override
    protected void doXContent(XContentBuilder builder, Params params) throws IOException {
        builder.startObject(NAME);
        builder.field(FIELD.getPreferredName(), field);
        builder.array(TERMS.getPreferredName(), terms.toArray(new String[0]));
        if (!idf) {
            builder.field(IDF.getPreferredName(), false);
        }
        printBoostAndQueryName(builder);
        builder.endObject();
    }

    public static TermsQueryBuilder fromXContent(XContentParser parser) throws IOException {
        String field = null;
        List<String> terms = null;
        float boost = DEFAULT_BOOST;
        boolean idf = true;
        String queryName = null;
        String current = null;
        XContentParser.Token token;
        while ((token = parser.nextToken()) != XContentParser.Token.END_OBJECT) {
            if (token == XContentParser.Token.FIELD_NAME) {
                current = parser.currentName();
            } else if (token == XContentParser.Token.START_ARRAY && TERMS.match(current,
                    parser.getDeprecationHandler())) {
                terms = new ArrayList<>();
                while ((token = parser.nextToken()) != XContentParser.Token.END_ARRAY) {
                    if (token != XContentParser.Token.VALUE_STRING) {
                        throw new ParsingException(parser.getTokenLocation(),
                            "[" + NAME + "] [terms] must hold strings only, found " + token);
                    }
                    terms.add(parser.text());
                }
            } else if (token.isValue() && FIELD.match(current, parser.getDeprecationHandler())) {
                field = parser.text();
            } else if (token == XContentParser.Token.VALUE_BOOLEAN && IDF.match(current,
                    parser.getDeprecationHandler())) {
                idf = parser.booleanValue();
            } else if (token.isValue() && BOOST_FIELD.match(current,
                    parser.getDeprecationHandler())) {
                boost = parser.floatValue();
            } else if (token.isValue() && NAME_FIELD.match(current,
                    parser.getDeprecationHandler())) {
                queryName = parser.text();
            } else {
                throw new ParsingException(parser.getTokenLocation(),
                    "[" + NAME + "] does not support [" + current + "] here (" + token
                        + "); it takes field, terms, idf (a boolean), boost and _name");
            }
        }
        if (!(boost >= 0f)) {  // the engine's own message would print the default boost
            throw new ParsingException(parser.getTokenLocation(), "[" + NAME + "] [boost] must "
                + "be 0 or more, got [" + boost + "]; use a value between 0 and 1 to lower a group");
        }
        try {
            return new TermsQueryBuilder(field, terms, idf).boost(boost).queryName(queryName);
        } catch (IllegalArgumentException e) {
            throw new ParsingException(parser.getTokenLocation(), e.getMessage());
        }
    }

    @Override
    protected Query doToQuery(QueryShardContext context) throws IOException {
        MappedFieldType type = context.fieldMapper(field);
        if (type == null) {
            return new MatchNoDocsQuery("unmapped field [" + field + "]");
        }
        return SaturationQuery.of(type.name(), bytes, idf, BM25_PARAMS);
    }

    @Override
    protected boolean doEquals(TermsQueryBuilder other) {
        return field.equals(other.field) && terms.equals(other.terms) && idf == other.idf;
    }

    @Override
    protected int doHashCode() {
        return Objects.hash(field, terms, idf);
    }

    @Override
    public String getWriteableName() {
        return NAME;
    }
}
