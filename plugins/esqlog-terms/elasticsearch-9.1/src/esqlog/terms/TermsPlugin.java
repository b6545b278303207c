package esqlog.terms;

import java.util.Collection;
import java.util.List;
import java.util.function.Predicate;
import java.util.function.Supplier;

import org.elasticsearch.cluster.metadata.IndexNameExpressionResolver;
import org.elasticsearch.cluster.node.DiscoveryNodes;
import org.elasticsearch.common.io.stream.NamedWriteableRegistry;
import org.elasticsearch.common.settings.ClusterSettings;
import org.elasticsearch.common.settings.IndexScopedSettings;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.common.settings.SettingsFilter;
import org.elasticsearch.features.NodeFeature;
import org.elasticsearch.rest.RestController;
import org.elasticsearch.rest.RestHandler;

/** TermsSearchPlugin on Elasticsearch 9.1 to 9.3, whose getActions answers a Collection of
 * untyped handlers (getRestHandlers as from 8.13). */
public final class TermsPlugin extends TermsSearchPlugin {
    public TermsPlugin(Settings settings) {
        super(settings);
    }

    @Override
    public Collection<RestHandler> getRestHandlers(Settings settings,
            NamedWriteableRegistry registry, RestController controller,
            ClusterSettings clusterSettings, IndexScopedSettings indexScopedSettings,
            SettingsFilter settingsFilter, IndexNameExpressionResolver resolver,
            Supplier<DiscoveryNodes> nodes, Predicate<NodeFeature> clusterSupportsFeature) {
        return List.of(new TermsStatsHandler());
    }

    @Override
    public Collection<ActionHandler> getActions() {
        return List.of(new ActionHandler(StatsAction.TYPE, StatsAction.class));
    }
}
