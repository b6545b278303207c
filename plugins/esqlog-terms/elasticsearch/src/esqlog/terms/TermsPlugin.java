package esqlog.terms;

import java.util.List;

import org.elasticsearch.common.settings.Setting;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.common.unit.ByteSizeValue;
import org.elasticsearch.plugins.Plugin;
import org.elasticsearch.plugins.SearchPlugin;

/**
 * Registers the esqlog_terms query (TermsQueryBuilder) and the node setting that bounds its
 * postings cache (PostingsCache): {@code esqlog.terms.postings_cache_size}, a size or a share
 * of the heap (20% of a 1 GB heap measured, docs/benchmarks/identifiers.md); off unless set.
 */
public final class TermsPlugin extends Plugin implements SearchPlugin {
    public static final Setting<ByteSizeValue> POSTINGS_CACHE_SIZE = Setting.memorySizeSetting(
        PostingsCache.SETTING, PostingsCache.DEFAULT, Setting.Property.NodeScope);

    public TermsPlugin(Settings settings) {
        PostingsCache.configure(POSTINGS_CACHE_SIZE.get(settings).getBytes());
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
