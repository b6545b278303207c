package esqlog.terms;

import java.util.List;

import org.elasticsearch.common.settings.Setting;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.common.unit.ByteSizeValue;
import org.elasticsearch.plugins.ActionPlugin;
import org.elasticsearch.plugins.CircuitBreakerPlugin;
import org.elasticsearch.indices.breaker.BreakerSettings;
import org.elasticsearch.common.breaker.CircuitBreaker;
import org.elasticsearch.plugins.Plugin;
import org.elasticsearch.plugins.SearchPlugin;

/**
 * Registers the esqlog_terms query (TermsQueryBuilder) and installs the node's term-state cache
 * (TermStateCache) at the size of {@code esqlog.terms.postings_cache_size} (bytes or a share
 * of the heap, 1% by default, 0 turns it off): where each segment has or lacks each term a
 * group names, so that repeated terms cost no terms-dictionary seek (docs/identifiers.md).
 * The name is the one the former postings cache used, so a node configured for it keeps
 * starting and now sizes this bounded cache. The node's plugin class, TermsPlugin, adds
 * {@code GET /_esqlog/terms/stats} (TermsStatsHandler, answered by every node through the
 * nodes action StatsAction): ActionPlugin.getRestHandlers and getActions changed their
 * parameters and types between releases, so TermsPlugin is compiled per release range
 * (elasticsearch-8.11/, -8.13-9.0/, -9.1/, -9.4/). The cache's bytes are counted in the
 * circuit breaker {@code esqlog_terms} (BreakerAccounting). It also registers
 * esqlog_identifiers (WordsQueryBuilder), whose word lists the node keeps in WordLists, sized
 * by {@code esqlog.terms.word_lists_cache_size} (4% of the heap by default) and counted in the
 * same breaker, and the whole-word groups of its {@code select: "all"} queries in
 * WordPostings, sized by {@code esqlog.terms.word_postings_cache_size} (5% of the heap by
 * default), in that breaker too.
 */
abstract class TermsSearchPlugin extends Plugin
        implements SearchPlugin, ActionPlugin, CircuitBreakerPlugin {
    static final Setting<ByteSizeValue> POSTINGS_CACHE_SIZE = Setting.memorySizeSetting(
        TermStateCache.SETTING, TermStateCache.DEFAULT, Setting.Property.NodeScope);

    static final Setting<ByteSizeValue> WORD_LISTS_CACHE_SIZE = Setting.memorySizeSetting(
        WordLists.SETTING, WordLists.DEFAULT, Setting.Property.NodeScope);

    static final Setting<ByteSizeValue> WORD_POSTINGS_CACHE_SIZE = Setting.memorySizeSetting(
        WordPostings.SETTING, WordPostings.DEFAULT, Setting.Property.NodeScope);

    TermsSearchPlugin(Settings settings) {
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
}
