package esqlog.terms;

import java.util.List;
import java.util.Collection;
import java.util.function.Supplier;
import java.util.function.Predicate;

import org.elasticsearch.cluster.metadata.IndexNameExpressionResolver;
import org.elasticsearch.cluster.node.DiscoveryNodes;
import org.elasticsearch.common.io.stream.NamedWriteableRegistry;
import org.elasticsearch.common.settings.ClusterSettings;
import org.elasticsearch.common.settings.IndexScopedSettings;
import org.elasticsearch.common.settings.SettingsFilter;
import org.elasticsearch.features.NodeFeature;
import org.elasticsearch.plugins.ActionPlugin;
import org.elasticsearch.rest.RestController;
import org.elasticsearch.rest.RestHandler;
import org.elasticsearch.common.settings.Setting;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.common.unit.ByteSizeValue;
import org.elasticsearch.plugins.Plugin;
import org.elasticsearch.plugins.SearchPlugin;

/**
 * Registers the esqlog_terms query (TermsQueryBuilder) and installs the node's term-state cache
 * (TermStateCache) at the size of {@code esqlog.terms.postings_cache_size} (bytes or a share
 * of the heap, 1% by default, 0 turns it off): where each segment has or lacks each term a
 * group names, so that repeated terms cost no terms-dictionary seek (docs/identifiers.md).
 * The name is the one the former postings cache used, so a node configured for it keeps
 * starting and now sizes this bounded cache. {@code GET /_esqlog/terms/stats} reports the
 * receiving node's cache (TermsStatsHandler).
 */
public final class TermsPlugin extends Plugin implements SearchPlugin, ActionPlugin {
    public static final Setting<ByteSizeValue> POSTINGS_CACHE_SIZE = Setting.memorySizeSetting(
        TermStateCache.SETTING, TermStateCache.DEFAULT, Setting.Property.NodeScope);

    public TermsPlugin(Settings settings) {
        TermStateCache.install(new TermStateCache(POSTINGS_CACHE_SIZE.get(settings).getBytes()));
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

    @Override
    public Collection<RestHandler> getRestHandlers(Settings settings,
            NamedWriteableRegistry registry, RestController controller,
            ClusterSettings clusterSettings, IndexScopedSettings indexScopedSettings,
            SettingsFilter settingsFilter, IndexNameExpressionResolver resolver,
            Supplier<DiscoveryNodes> nodes, Predicate<NodeFeature> clusterSupportsFeature) {
        return List.of(new TermsStatsHandler());
    }
}
