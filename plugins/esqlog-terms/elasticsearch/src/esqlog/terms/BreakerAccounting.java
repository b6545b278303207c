package esqlog.terms;

import org.elasticsearch.common.breaker.CircuitBreaker;
import org.elasticsearch.common.breaker.CircuitBreakingException;
import org.elasticsearch.indices.breaker.BreakerSettings;

/**
 * The term-state cache's bytes counted in a circuit breaker of its own, {@code esqlog_terms}
 * (in {@code GET _nodes/stats/breaker}): a child of the engine's parent breaker, so an entry
 * is cached only while the parent (the node's real heap use, or the sum of its children) has
 * room, and a node short of memory stops filling the cache instead of failing requests. The
 * child's own limit is the cache's size plus an eighth (entries added while another thread
 * evicts); the cache keeps to its size itself.
 */
final class BreakerAccounting implements TermStateCache.Accounting {
    static final String NAME = "esqlog_terms";

    private final CircuitBreaker breaker;

    BreakerAccounting(CircuitBreaker breaker) {
        this.breaker = breaker;
    }

    /** The breaker for a cache of {@code cacheBytes}. */
    static BreakerSettings settings(long cacheBytes) {
        return new BreakerSettings(NAME, cacheBytes + cacheBytes / 8, 1.0,
            CircuitBreaker.Type.MEMORY, CircuitBreaker.Durability.PERMANENT);
    }

    @Override
    public boolean reserve(long bytes) {
        try {
            breaker.addEstimateBytesAndMaybeBreak(bytes, NAME);
            return true;
        } catch (CircuitBreakingException refused) {
            return false;
        }
    }

    @Override
    public void release(long bytes) {
        breaker.addWithoutBreaking(-bytes);
    }

    @Override
    public long limit() {
        return breaker.getLimit();
    }
}
