"""The identifiers mode's search flow: one match set whichever way a search is sent.

Why a module of its own: the mode sends a search one of two ways, one request per shard
(esqlog.wrapper.fan_out) or one dfs query, and both must hold the same terms (chosen once:
esqlog.wrapper.identifier_search), the same index and the same statistics. So this flow
also owns noticing that the index behind the name changed: the resolution is trusted for
a minute (esqlog.wrapper.resolve), and an index deleted and recreated meanwhile (another
shard count, another UUID) would otherwise be searched with the old index's per-shard
statistics. An answer that shows it (index_not_found, a shard request answered by no
shard, a search answered by another number of shards than resolved) drops the resolution
and asks the snapshot guard to look at the index at once; the search is then planned
again, once: the fresh resolution's UUID is not the calibrated one, so it goes on in boost
mode with live statistics and one warning saying the calibration is of another index.

A search sent as one query whose answer reads no score (sorted by fields) holds the
constant-score filter of the same match set instead of the scored dfs query: the same
hits, at the cost of a plain terms query.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from esqlog.engine.failures import error_status
from esqlog.engine.search_call import SearchCall
from esqlog.engine.steps import SearchPlan
from esqlog.wrapper.core import WrapperCore
from esqlog.wrapper.decisions import Trace, not_resolved
from esqlog.wrapper.fan_out import (
    aggregating,
    aggregations_read_scores,
    fan_out_plan,
    fans_out,
)
from esqlog.wrapper.identifier_search import STALE
from esqlog.wrapper.resolve import IndexTarget

_DFS = "dfs_query_then_fetch"
#: :func:`identifiers_plan`'s answer for an index without identifiers statistics (boost)
NOT_CODE = "not code"


def identifiers_plan(core: WrapperCore, call: SearchCall, trace: Trace | None = None) -> SearchPlan:
    """The search with match clauses as identifiers queries (esqlog.wrapper.identifier_search);
    None when the statistics they need are stale or of another index, and the search should
    go on in boost mode; NOT_CODE when the index resolved has no identifiers statistics
    (mode="auto" chose boost for it).

    No statistics request: everything comes from the snapshot and its split statistics.
    Resolution, the snapshot check and the clause-limit probe never raise (each falls back).
    """
    assert core.identifiers is not None  # effective_mode checked it
    trace = trace if trace is not None else Trace(call.index, "identifiers")  # unreported
    rewriter = core.identifiers
    original = call.query
    # esqlog_terms without idf scores every shard alike: one plain query, no dfs, no fan-out
    plugin = rewriter.settings.engine_query == "plugin"
    for attempt in (0, 1):
        last = attempt == 1
        target = yield from core.resolver.target_plan(call.index)
        if target is None:
            trace.passed(not_resolved(call.index))
            return (yield call.untouched())
        if not any(index == target.index for index, _ in rewriter.stats):
            return NOT_CODE  # mode="auto" on an alias of an index it chose boost for
        trace.statistics = "snapshot"
        yield from core.snapshots.check_plan(target.index, target.uuid)
        yield from core.clause_limit_plan()
        if rewriter.settings.fan_out and not plugin and target.shards > 1 and fans_out(call):
            queries = rewriter.rewrite_per_shard(target, original, core.snapshots, core.max_clauses)
            if queries == STALE:
                return None
            scored = aggregations_read_scores(call)
            whole = beside_fan_out(core, call, target, original, queries, scored)
            if isinstance(queries, list) and (whole is None or isinstance(whole, dict)):
                answer = yield from fan_out_plan(
                    core.flavor, call, queries, whole, core.options.dfs and scored
                )
                if answer.moved and not last:
                    _forget(core, call, target)
                    continue
                if answer.response is not None:
                    trace.rewritten("identifiers")
                    trace.fan_out = True
                    return answer.response  # else a request failed: the one query answers
                trace.fell_back("a shard's request failed: one query")
        unscored = scores_unread(call)
        build = rewriter.rewrite_matching if unscored else rewriter.rewrite
        query = build(target, original, core.snapshots, core.max_clauses)
        if query == STALE:
            return None
        if not isinstance(query, dict):
            trace.passed("no calibrated match clause")
            return (yield call.untouched())
        if (
            core.options.dfs
            and target.shards > 1
            and call.get("search_type") is None
            and not unscored
            and not plugin
        ):
            call.set("search_type", _DFS)
        call.set("query", query)
        trace.rewritten("identifiers")
        try:
            response = yield call.search()
        except Exception as exc:
            if error_status(exc) == 404:  # the index is gone: resolve it afresh next time
                _forget(core, call, target)
            raise
        if last or not _answered_by_other_shards(response, target, call):
            return response
        _forget(core, call, target)
        call.set("query", original)
    raise AssertionError("unreachable")  # pragma: no cover


def beside_fan_out(
    core: WrapperCore, call: SearchCall, target: IndexTarget, query: Any, queries: Any, scored: bool
) -> Any:
    """The whole-index request that rides beside the per-shard ones when the search
    aggregates (None when it does not, or when the per-shard plan is not a list): the scored
    query if an aggregation reads scores, else the constant-score filter of the same terms."""
    assert core.identifiers is not None
    if not (isinstance(queries, list) and aggregating(call)):
        return None
    rewriter = core.identifiers
    build = rewriter.rewrite if scored else rewriter.rewrite_matching
    return build(target, query, core.snapshots, core.max_clauses)


def scores_unread(call: SearchCall) -> bool:
    """Whether nothing in the answer reads a score: hits sorted by fields other than
    ``_score`` (and no track_scores, rescore or aggregation reading scores). Such a search
    needs only the match set: the constant-score filter of the same terms, without spans or
    a dfs phase (identifier_search.IdentifierRewriter.rewrite_matching)."""
    sort = call.get("sort")
    return (
        sort is not None
        and "_score" not in json.dumps(sort, default=str)
        and not call.get("track_scores")
        and call.get("rescore") is None
        and not aggregations_read_scores(call)
    )


def _answered_by_other_shards(response: Any, target: IndexTarget, call: SearchCall) -> bool:
    """Whether a search of the whole index was answered by another number of shards than
    the index was resolved with (routing and shard preferences read fewer on purpose)."""
    body = getattr(response, "body", response)
    shards = body.get("_shards") if isinstance(body, Mapping) else None
    total = shards.get("total") if isinstance(shards, Mapping) else None
    if not isinstance(total, int) or total == target.shards:
        return False  # the usual answer: the call's options need not be read
    preference = call.get("preference")
    return call.get("routing") is None and not (
        isinstance(preference, str) and preference.startswith("_shards:")
    )


def _forget(core: WrapperCore, call: SearchCall, target: IndexTarget) -> None:
    core.resolver.forget(call.index)
    core.snapshots.recheck(target.index)
