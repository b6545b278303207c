package esqlog.terms;

import java.util.List;
import java.util.function.Supplier;

import org.opensearch.cluster.metadata.IndexNameExpressionResolver;
import org.opensearch.cluster.node.DiscoveryNodes;
import org.opensearch.common.settings.ClusterSettings;
import org.opensearch.common.settings.IndexScopedSettings;
import org.opensearch.common.settings.SettingsFilter;
import org.opensearch.plugins.ActionPlugin;
import org.opensearch.plugins.CircuitBreakerPlugin;
import org.opensearch.indices.breaker.BreakerSettings;
import org.opensearch.core.common.breaker.CircuitBreaker;
import org.opensearch.action.ActionRequest;
import org.opensearch.core.action.ActionResponse;
import org.opensearch.rest.RestController;
import org.opensearch.rest.RestHandler;
import org.opensearch.common.settings.Setting;
import org.opensearch.common.settings.Settings;
import org.opensearch.core.common.unit.ByteSizeValue;
import org.opensearch.plugins.Plugin;
import org.opensearch.plugins.SearchPlugin;

/**
 * Registers the esqlog_terms query (TermsQueryBuilder) and installs the node's term-state cache
 * (TermStateCache) at the size of {@code esqlog.terms.postings_cache_size} (bytes or a share
 * of the heap, 1% by default, 0 turns it off): where each segment has or lacks each term a
 * group names, so that repeated terms cost no terms-dictionary seek (docs/identifiers.md).
 * The name is the one the former postings cache used, so a node configured for it keeps
 * starting and now sizes this bounded cache. {@code GET /_esqlog/terms/stats} reports every
 * node's caches (TermsStatsHandler, through the nodes action StatsAction); its bytes are counted in the circuit breaker
 * {@code esqlog_terms} (BreakerAccounting). It also registers esqlog_identifiers
 * (WordsQueryBuilder), whose word lists the node keeps in WordLists, sized by
 * {@code esqlog.terms.word_lists_cache_size} (4% of the heap by default) and counted in the
 * same breaker, and the whole-word groups of its {@code select: "all"} queries in
 * WordPostings, sized by {@code esqlog.terms.word_postings_cache_size} (5% of the heap by
 * default), in that breaker too.
 */
public final class TermsPlugin extends Plugin
        implements SearchPlugin, ActionPlugin, CircuitBreakerPlugin {
    public static final Setting<ByteSizeValue> POSTINGS_CACHE_SIZE = Setting.memorySizeSetting(
        TermStateCache.SETTING, TermStateCache.DEFAULT, Setting.Property.NodeScope);

    public static final Setting<ByteSizeValue> WORD_LISTS_CACHE_SIZE = Setting.memorySizeSetting(
        WordLists.SETTING, WordLists.DEFAULT, Setting.Property.NodeScope);

    public static final Setting<ByteSizeValue> WORD_POSTINGS_CACHE_SIZE = Setting.memorySizeSetting(
        WordPostings.SETTING, WordPostings.DEFAULT, Setting.Property.NodeScope);

    public TermsPlugin(Settings settings) {
        TermStateCache.install(new TermStateCache(POSTINGS_CACHE_SIZE.get(settings).getBytes()));
        WordLists.install(new WordLists(WORD_LISTS_CACHE_SIZE.get(settings).getBytes()));
        WordPostings.install(new WordPostings(WORD_POSTINGS_CACHE_SIZE.get(settings).getBytes()));
    }

    /** The caches' breaker (BreakerAccounting), sized from the three settings. */
    @Override
    public BreakerSettings getCircuitBreaker(Settings settings) {
        return BreakerAccounting.settings(POSTINGS_CACHE_SIZE.get(settings).getBytes()
            + WORD_LISTS_CACHE_SIZE.get(settings).getBytes()
            + WORD_POSTINGS_CACHE_SIZE.get(settings).getBytes());
    }

    @Override
    public void setCircuitBreaker(CircuitBreaker breaker) {
        BreakerAccounting accounting = new BreakerAccounting(breaker);
        TermStateCache.shared().account(accounting);
        WordLists.shared().account(accounting);
        WordPostings.shared().account(accounting);
    }

    @Override
    public List<Setting<?>> getSettings() {
        return List.of(POSTINGS_CACHE_SIZE, WORD_LISTS_CACHE_SIZE, WORD_POSTINGS_CACHE_SIZE);
    }

    @Override
    public List<QuerySpec<?>> getQueries() {
        return List.of(
            new QuerySpec<>(TermsQueryBuilder.NAME, TermsQueryBuilder::new,
                TermsQueryBuilder::fromXContent),
            new QuerySpec<>(WordsQueryBuilder.NAME, WordsQueryBuilder::new,
                WordsQueryBuilder::fromXContent));
    }

    @Override
    public List<RestHandler> getRestHandlers(Settings settings, RestController controller,
            ClusterSettings clusterSettings, IndexScopedSettings indexScopedSettings,
            SettingsFilter settingsFilter, IndexNameExpressionResolver resolver,
            Supplier<DiscoveryNodes> nodes) {
        return List.of(new TermsStatsRoute());
    }

    @Override
    public List<ActionHandler<? extends ActionRequest, ? extends ActionResponse>> getActions() {
        return List.of(new ActionHandler<>(StatsAction.TYPE, StatsAction.class));
    }
}
