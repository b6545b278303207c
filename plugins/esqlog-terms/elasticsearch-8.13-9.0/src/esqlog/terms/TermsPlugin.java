package esqlog.terms;

import java.util.Collection;
import java.util.List;
import java.util.function.Predicate;
import java.util.function.Supplier;

import org.elasticsearch.action.ActionRequest;
import org.elasticsearch.action.ActionResponse;
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

/** TermsSearchPlugin on Elasticsearch 8.13 to 9.0, whose getRestHandlers takes these and whose
 * getActions answers a Collection of typed handlers. */
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
    public Collection<ActionHandler<? extends ActionRequest, ? extends ActionResponse>>
            getActions() {
        return List.of(new ActionHandler<>(StatsAction.TYPE, StatsAction.class));
    }
}
