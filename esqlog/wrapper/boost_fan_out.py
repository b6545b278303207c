"""Boost mode on several shards as one request per shard, without the dfs phase.

Why: a boost is w_q(t) / idf(t), and the engine multiplies it by its own idf(t). On a
multi-shard index that idf is the shard's unless the search runs ``dfs_query_then_fetch``,
whose extra phase asks every shard for every term's statistics before scoring (measured on
Go 153K / 3 shards: boost 1.29x the plain match, docs/benchmarks/latency.md). Calibrate
records each shard's own document count and the per-shard df of every term held by two or
more shards (esqlog.identifiers.split_stats, ``--identifiers``), so the boost for shard k
can be divided by that shard's idf instead: sent to shard k alone, with
boost_k(t) = w_q(t) * idf(t) / idf_k(t), the engine scores idf_q(t) x tf-norm there, the
global q-log weight, with no dfs. A term absent from ``local_df`` lies on one shard, where
its df is the global one; elsewhere it matches nothing and its boost there is never used.

What differs from the dfs search: the length norm's average document length is each
shard's own, as in every search without dfs (the engine's default), and as the identifiers
fan-out has it. The match set is the native match's: each shard's query is the same
boolean of the same term clauses, only the boosts differ.

Which searches go this way is decided as for the identifiers fan-out (the same guards:
esqlog.wrapper.fan_out.fans_out, its paging guard included), and only when every
field the query scores has its per-shard statistics for the index as resolved (same UUID,
same shard count) and its vocabulary snapshot is in use (the statistics come from the same
scan: a snapshot the guard found stale means they are stale too). Anything else, a failed
shard request, or an answer showing the index moved, goes the dfs way as before.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from typing import TYPE_CHECKING, Any

from esqlog.engine.search_call import SearchCall
from esqlog.engine.steps import Step
from esqlog.identifiers.shard_counts import ShardCounts
from esqlog.statistics.terms import TextStats
from esqlog.wrapper.decisions import Trace
from esqlog.wrapper.fan_out import (
    aggregating,
    aggregations_read_scores,
    fan_out_plan,
    fans_out,
)
from esqlog.wrapper.query_terms import TextKey
from esqlog.wrapper.resolve import IndexTarget
from esqlog.wrapper.shard_stats import Scales, shard_scales, weighted_scale

if TYPE_CHECKING:
    from esqlog.wrapper.core import WrapperCore


def boost_fan_out_plan(
    core: WrapperCore,
    call: SearchCall,
    target: IndexTarget,
    stats: Mapping[TextKey, TextStats],
    trace: Trace,
) -> Generator[Step, Any, Any | None]:
    """The boost search as one request per shard, merged; None when it must go the dfs way."""
    scales = usable_scales(core, call, target, stats)
    if scales is None or not fans_out(call):
        return None
    original = call.query
    queries = [core.rewritten(target, original, stats, "boost", scale) for scale in scales]
    whole = core.rewritten(target, original, stats, "boost") if aggregating(call) else None
    answer = yield from fan_out_plan(
        core.flavor, call, queries, whole, aggregations_read_scores(call)
    )
    if answer.moved:
        core.resolver.forget(call.index)
        core.snapshots.recheck(target.index)
        trace.fell_back("the index moved: one dfs search")
        return None
    if answer.response is None:
        trace.fell_back("a shard's request failed: one dfs search")
        return None
    trace.rewritten("boost")
    trace.fan_out = True
    return answer.response


def usable_scales(
    core: WrapperCore, call: SearchCall, target: IndexTarget, stats: Mapping[TextKey, TextStats]
) -> Scales | None:
    """The per-shard scales when the search may go one request per shard (see the module
    docstring), else None. Shared by search and msearch."""
    if core.options.boost_shards != "fan_out":
        return None
    mine = usable_shard_counts(core, call, target, stats)
    return None if mine is None else shard_scales(stats, mine, target.shards)


def usable_weights(
    core: WrapperCore, call: SearchCall, target: IndexTarget, stats: Mapping[TextKey, TextStats]
) -> dict[tuple[str, str], float] | None:
    """Boost mode's weighted idf scale for one request without dfs (boost_shards
    "weighted": esqlog.wrapper.shard_stats), else None (the dfs search). Shared by search
    and msearch."""
    if core.options.boost_shards != "weighted":
        return None
    mine = usable_shard_counts(core, call, target, stats)
    return None if mine is None else weighted_scale(stats, mine, target.shards)


def usable_shard_counts(
    core: WrapperCore, call: SearchCall, target: IndexTarget, stats: Mapping[TextKey, TextStats]
) -> dict[str, ShardCounts] | None:
    """field -> its per-shard statistics for the index as resolved, when this search may
    score with them (several shards, no search_type of the caller's, every field's
    snapshot in use: the statistics come from the same scan), else None."""
    if (
        not core.shard_stats
        or target.shards < 2
        or call.get("search_type") is not None
        or call.index is None
    ):
        return None
    fields = {field for field, _ in stats}
    if any(core.snapshot_for(target.index, f) is None for f in fields):
        return None
    return {
        f: s
        for (index, f), s in core.shard_stats.items()
        if index == target.index and s.index_uuid == target.uuid
    }
