package esqlog.terms;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

import org.apache.lucene.search.MatchNoDocsQuery;
import org.apache.lucene.search.Query;
import org.apache.lucene.util.SetOnce;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.action.get.GetResponse;
import org.elasticsearch.action.get.MultiGetItemResponse;
import org.elasticsearch.action.get.MultiGetRequest;
import org.elasticsearch.common.ParsingException;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.common.io.stream.StreamOutput;
import org.elasticsearch.xcontent.XContentBuilder;
import org.elasticsearch.xcontent.XContentParser;
import org.elasticsearch.index.mapper.MappedFieldType;
import org.elasticsearch.index.query.BoolQueryBuilder;
import org.elasticsearch.index.query.MatchNoneQueryBuilder;
import org.elasticsearch.index.query.QueryBuilder;
import org.elasticsearch.index.query.QueryRewriteContext;
import org.elasticsearch.index.query.SearchExecutionContext;

/**
 * {@code {"esqlog_identifiers": {"field": "body", "lists": "esqlog-words-…", "budget": 300,
 * "select": "cover", "words": [{"word": "read", "weight": 2.1, "first": false, "tier": 1,
 * "own": true, "apart": false}, …]}}}: an identifiers query whose compounds the node chooses
 * ({@link WordPlan}) from the word lists esqlog calibrate wrote ({@link WordLists}), rewritten
 * on the coordinating node into the {@code esqlog_terms} groups esqlog's client would have sent
 * (a bool of {@link TermsQueryBuilder} without idf, one per group).
 *
 * <p>Why a rewrite: the lists live in an index, read by a multi-get, which only a rewrite may
 * wait for (an async action); the shards then receive the plain groups, as before. Lists this
 * node fetched before are read from memory, with no request at all.
 */
public final class WordsQueryBuilder extends LeafBuilder<WordsQueryBuilder> {
    public static final String NAME = WordsQuery.NAME;

    private final WordsQuery query;
    private final Supplier<List<WordList>> fetched;
    /**
     * select "all": the words' lists, once this node has them (never serialized: a node that
     * receives the query reads them from its own cache, or fetches them, in its rewrite).
     */
    private final List<WordList> resolved;

    public WordsQueryBuilder(WordsQuery query) {
        this(query, null, null);
    }

    private WordsQueryBuilder(WordsQuery query, Supplier<List<WordList>> fetched,
                              List<WordList> resolved) {
        this.query = Objects.requireNonNull(query);
        this.fetched = fetched;
        this.resolved = resolved;
    }

    public WordsQueryBuilder(StreamInput in) throws IOException {
        super(in);
        this.query = WordsQuery.readFrom(EngineStreams.in(in));
        this.fetched = null;
        this.resolved = null;
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

    public static WordsQueryBuilder fromXContent(XContentParser parser) throws IOException {
        try {
            QueryForms.Parsed<WordsQuery> parsed = WordsQuery.parse(parser.map());
            return new WordsQueryBuilder(parsed.query()).boost(parsed.boost())
                .queryName(parsed.queryName());
        } catch (IllegalArgumentException e) {
            throw new ParsingException(parser.getTokenLocation(), e.getMessage());
        }
    }

    @Override
    protected QueryBuilder doRewrite(QueryRewriteContext context) throws IOException {
        if (resolved != null) {
            return this;
        }
        if (fetched != null) {
            List<WordList> got = fetched.get();
            return got == null ? this : expanded(got);
        }
        List<WordList> lists = query.cached(WordLists.shared());
        List<Integer> missing = WordsQuery.missing(lists);
        if (missing.isEmpty()) {
            return expanded(lists);
        }
        SetOnce<List<WordList>> holder = new SetOnce<>();
        context.registerAsyncAction((client, listener) -> {
            MultiGetRequest request = new MultiGetRequest();
            for (int i : missing) {
                request.add(query.lists(), query.words().get(i).word());
            }
            client.multiGet(request, ActionListener.wrap(response -> {
                MultiGetItemResponse[] items = response.getResponses();
                List<WordList> all = new ArrayList<>(lists);
                for (int j = 0; j < items.length; j++) {
                    if (items[j].isFailed()) {
                        listener.onFailure(query.unreadable(items[j].getFailure().getMessage()));
                        return;
                    }
                    GetResponse got = items[j].getResponse();
                    all.set(missing.get(j), query.kept(WordLists.shared(), missing.get(j),
                        got.isExists() ? got.getSourceAsMap() : null));
                }
                holder.set(all);
                listener.onResponse(null);
            }, listener::onFailure));
        });
        return new WordsQueryBuilder(query, holder::get, null).boost(boost())
            .queryName(queryName());
    }

    /**
     * The groups as the bool of esqlog_terms clauses the client would have sent; under select
     * "all" this query again, holding its lists, which it turns into Lucene queries itself
     * (a word's whole group has no esqlog_terms form: thousands of terms).
     */
    private QueryBuilder expanded(List<WordList> lists) {
        if (query.everyCompound()) {
            return new WordsQueryBuilder(query, null, lists).boost(boost()).queryName(queryName());
        }
        List<WordPlan.Group> groups = query.groups(lists);
        if (groups.isEmpty()) {
            return new MatchNoneQueryBuilder().boost(boost()).queryName(queryName());
        }
        BoolQueryBuilder bool = new BoolQueryBuilder();
        for (WordPlan.Group group : groups) {
            bool.should(new TermsQueryBuilder(query.field(), group.terms(), false)
                .boost((float) group.boost()));
        }
        return bool.boost(boost()).queryName(queryName());
    }

    @Override
    protected Query doToQuery(SearchExecutionContext context) throws IOException {
        List<WordList> lists = resolved;
        if (lists == null && query.everyCompound()) {  // a path that skipped the shard's rewrite
            lists = query.cached(WordLists.shared());
            lists = WordsQuery.missing(lists).isEmpty() ? lists : null;
        }
        if (lists == null) {
            throw new IllegalStateException("[" + NAME + "] must be rewritten before it is run");
        }
        MappedFieldType type = context.getFieldType(query.field());
        if (type == null) {
            return new MatchNoDocsQuery("unmapped field [" + query.field() + "]");
        }
        return query.everyCompoundQuery(type.name(), lists, TermsQueryBuilder.BM25_PARAMS);
    }

    @Override
    protected boolean doEquals(WordsQueryBuilder other) {
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
