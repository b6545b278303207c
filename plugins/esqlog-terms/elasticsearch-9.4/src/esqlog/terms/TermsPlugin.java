package esqlog.terms;

import java.util.Collection;
import java.util.List;
import java.util.function.Predicate;
import java.util.function.Supplier;

import org.elasticsearch.cluster.node.DiscoveryNodes;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.features.NodeFeature;
import org.elasticsearch.rest.RestHandler;

/** TermsSearchPlugin on Elasticsearch 9.4 and later, whose getRestHandlers takes the node's
 * services as one record (RestHandlersServices) instead of nine parameters. */
public final class TermsPlugin extends TermsSearchPlugin {
    public TermsPlugin(Settings settings) {
        super(settings);
    }

    @Override
    public Collection<RestHandler> getRestHandlers(RestHandlersServices services,
            Supplier<DiscoveryNodes> nodes, Predicate<NodeFeature> clusterSupportsFeature) {
        return List.of(new TermsStatsHandler());
    }

    @Override
    public Collection<ActionHandler> getActions() {
        return List.of(new ActionHandler(StatsAction.TYPE, StatsAction.class));
    }
}
