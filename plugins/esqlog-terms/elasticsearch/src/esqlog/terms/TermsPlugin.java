package esqlog.terms;

import java.util.List;

import org.elasticsearch.common.settings.Setting;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.common.unit.ByteSizeValue;
import org.elasticsearch.plugins.Plugin;
import org.elasticsearch.plugins.SearchPlugin;

/**
 * Registers the esqlog_terms query (TermsQueryBuilder).
 *
 * <p>{@code esqlog.terms.postings_cache_size} is accepted and ignored: the query
 * once kept rare terms' postings in a node-wide cache (unbounded in practice, filled by
 * anyone); it now reads postings lazily through Lucene's own term and synonym queries, which
 * seek their terms themselves (docs/identifiers.md). The setting stays registered so that a
 * node whose
 * configuration still names it starts (no deprecation warning: the engine would add
 * it to every response).
 */
public final class TermsPlugin extends Plugin implements SearchPlugin {
    public static final Setting<ByteSizeValue> POSTINGS_CACHE_SIZE = Setting.memorySizeSetting(
        "esqlog.terms.postings_cache_size", "0b", Setting.Property.NodeScope);

    public TermsPlugin(Settings settings) {
    }

    @Override
    public List<Setting<?>> getSettings() {
        return List.of(POSTINGS_CACHE_SIZE);
    }

    @Override
    public List<QuerySpec<?>> getQueries() {
        return List.of(new QuerySpec<>(TermsQueryBuilder.NAME, TermsQueryBuilder::new,
            TermsQueryBuilder::fromXContent));
    }
}
