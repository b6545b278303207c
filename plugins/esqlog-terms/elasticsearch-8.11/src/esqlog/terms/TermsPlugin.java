package esqlog.terms;

import java.util.List;
import java.util.function.Supplier;

import org.elasticsearch.action.ActionRequest;
import org.elasticsearch.action.ActionResponse;
import org.elasticsearch.cluster.metadata.IndexNameExpressionResolver;
import org.elasticsearch.cluster.node.DiscoveryNodes;
import org.elasticsearch.common.settings.ClusterSettings;
import org.elasticsearch.common.settings.IndexScopedSettings;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.common.settings.SettingsFilter;
import org.elasticsearch.rest.RestController;
import org.elasticsearch.rest.RestHandler;

/** TermsSearchPlugin on Elasticsearch 8.11 and 8.12, whose getRestHandlers takes these and whose
 * getActions answers a List. */
public final class TermsPlugin extends TermsSearchPlugin {
    public TermsPlugin(Settings settings) {
        super(settings);
    }

    @Override
    public List<RestHandler> getRestHandlers(Settings settings, RestController controller,
            ClusterSettings clusterSettings, IndexScopedSettings indexScopedSettings,
            SettingsFilter settingsFilter, IndexNameExpressionResolver resolver,
            Supplier<DiscoveryNodes> nodes) {
        return List.of(new TermsStatsHandler());
    }

    @Override
    public List<ActionHandler<? extends ActionRequest, ? extends ActionResponse>> getActions() {
        return List.of(new ActionHandler<>(StatsAction.TYPE, StatsAction.class));
    }
}
