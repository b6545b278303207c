"""One search, as a plan: decide, fetch statistics, then search natively, rewritten, or with
a rerank. Driven by the sync and the async client alike (esqlog.engine.steps).

Which parts of a body are rewritten (query, retrievers; never knn) is esqlog.wrapper.bodies;
which index a point-in-time search reads is esqlog.wrapper.pits. Every search ends in one
:class:`~esqlog.wrapper.decisions.SearchDecision` (logged, and given to ``on_decision``)."""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping
from typing import Any

from esqlog.engine.search_call import SearchCall
from esqlog.engine.steps import SearchPlan, Step
from esqlog.errors import ClusterError
from esqlog.rerank.responses import rerank_window
from esqlog.rerank.strategies import RerankJob, choose_plan
from esqlog.scoring.clauses import filters_on_score
from esqlog.scoring.rewrite import RewriteMode
from esqlog.statistics.terms import TextStats
from esqlog.wrapper.bodies import (
    dfs_allowed,
    has_top_level_knn,
    map_retriever,
    retriever_queries,
)
from esqlog.wrapper.boost_fan_out import boost_fan_out_plan, usable_weights
from esqlog.wrapper.core import WrapperCore
from esqlog.wrapper.decisions import Reason, Trace, not_resolved
from esqlog.wrapper.engine_query import with_span_fallback
from esqlog.wrapper.identifier_plan import NOT_CODE, identifiers_plan
from esqlog.wrapper.options import SearchMode
from esqlog.wrapper.query_terms import TextKey
from esqlog.wrapper.resolve import IndexTarget
from esqlog.wrapper.scripting import rewritten_search_plan

Prepared = tuple[IndexTarget, dict[TextKey, TextStats]]


def search_plan(
    core: WrapperCore, args: tuple[Any, ...], kwargs: dict[str, Any], esqlog_mode: SearchMode | None
) -> SearchPlan:
    """The caller's search with calibrated match clauses scored by q-log BM25, and its
    decision reported once it is over (failed or not). One generator frame, no helper
    around it: the warnings below it name the caller's line by a fixed stack depth."""
    call = SearchCall(core.flavor, args, kwargs)
    trace = Trace(call.index, esqlog_mode or core.options.mode)
    try:
        mode = core.effective_mode(esqlog_mode, call.index)
        knn = has_top_level_knn(call.body, call.kwargs)
        query = call.query
        # retrievers are Elasticsearch's; OpenSearch rejects the key (its own error, untouched)
        retriever = call.get("retriever") if core.flavor == "elasticsearch" else None
        queries = [] if query is None else [query]
        queries += retriever_queries(retriever)
        reason = _untouched_reason(core, call, mode, query, queries, knn)
        if reason is not None:
            trace.passed(reason)
            return (yield call.untouched())
        if mode == "identifiers" and retriever is None and not knn and call.index is not None:
            original = call.query
            done = yield from with_span_fallback(
                core.engine_query,
                core.use_spans,
                lambda: identifiers_plan(core, call, trace),
                lambda: _spans_again(call, original, trace),
            )
            if done is not None and done is not NOT_CODE:
                return done
            mode = "boost"  # its snapshot went stale: boost with live statistics (one warning)
            if done is None:
                trace.fell_back("identifiers snapshot stale: boost")
        elif mode == "identifiers":
            mode = "boost"  # knn, retrievers and PIT searches keep the native match set: boost
            if call.get("pit") is not None and core.identifiers is not None:
                core.identifiers.warn_point_in_time()
            trace.fell_back("identifiers beside knn, a retriever or a point in time: boost")
        index, pit = call.index, None
        if index is None and call.get("pit") is not None:
            pit = yield from core.pits.source_plan(call.get("pit"))
            index = None if pit is None else pit.index
        prepared = yield from _prepare_plan(core, call, index, queries, trace)
        if prepared is None or (pit is not None and prepared[0].shards != pit.shards):
            if prepared is not None:
                trace.passed("point in time spans other shards")
            return (yield call.untouched())
        target, stats = prepared
        weights = None  # boost weighted by the shards' own statistics: one request, no dfs
        if mode == "boost" and retriever is None and not knn and pit is None:
            fanned = yield from boost_fan_out_plan(core, call, target, stats, trace)
            if fanned is not None:  # else one search below
                return fanned
            weights = usable_weights(core, call, target, stats)
            trace.shard_weighted = weights is not None
        # Elasticsearch runs a top-level knn search as dfs_query_then_fetch itself (global
        # statistics for its query too) and refuses an explicit search_type: esqlog.wrapper.bodies
        if (
            core.options.dfs
            and target.shards > 1
            and call.get("search_type") is None
            and weights is None
            and dfs_allowed(knn, retriever)
        ):
            call.set("search_type", "dfs_query_then_fetch")
        if mode == "rerank" and retriever is None and not knn:
            response = yield from _rerank_plan(core, call, target, stats, trace)
        else:  # rerank has no place beside knn or in retrievers: those get the boost rewrite
            forced = (esqlog_mode or core.options.mode) == "script"
            rewrite = _rewriter(core, call, trace, mode, target, stats, weights, query, retriever)
            response = yield from rewritten_search_plan(
                call, rewrite, "script" if mode == "script" else "boost", forced, core.scripts
            )
        if pit is not None:
            core.pits.remember(response, pit)
        return response
    finally:
        trace.emit(core.options.on_decision)


def _untouched_reason(
    core: WrapperCore, call: SearchCall, mode: str, query: Any, queries: list[Any], knn: bool
) -> Reason | None:
    """Why the search goes to the engine as given, or None when esqlog scores it.

    In this order, the one the decision reports: native mode, no query to score, a top-level
    knn on OpenSearch (which rejects it: its own error, untouched), a min_score (it
    thresholds native scores, so nothing may move)."""
    if mode == "native":
        return "native mode"
    if not queries:
        return "no query"
    on_score = filters_on_score(call.get("min_score"), query)
    if knn and core.flavor == "opensearch":
        return "knn on opensearch"
    return "min_score" if on_score else None


def _rewriter(
    core: WrapperCore,
    call: SearchCall,
    trace: Trace,
    mode: str,
    target: IndexTarget,
    stats: dict[TextKey, TextStats],
    weights: Mapping[tuple[str, str], float] | None,
    query: Any,
    retriever: Any,
) -> Callable[[RewriteMode], None]:
    """The rewrite rewritten_search_plan applies once it knows the mode the cluster can run
    (script, or boost when the stored script is unavailable): the query and every retriever's
    query get q-log clauses, and the decision records the mode."""

    def rewrite(rewrite_mode: RewriteMode) -> None:
        if rewrite_mode == "boost" and mode == "script":
            trace.fell_back("stored script unavailable: boost")
        trace.rewritten(rewrite_mode)

        def one(original: Any) -> Any:
            return core.rewritten(target, original, stats, rewrite_mode, weights)

        if query is not None:
            call.set("query", one(query))
        if retriever is not None:
            call.set("retriever", map_retriever(retriever, one))

    return rewrite


def _spans_again(call: SearchCall, original: Any, trace: Trace) -> None:
    """The caller's query back in place, for the identifiers flow to build it with spans."""
    call.set("query", original)
    trace.fell_back("esqlog_terms refused by a node: spans")


def _prepare_plan(
    core: WrapperCore, call: SearchCall, index: Any, queries: list[Any], trace: Trace
) -> Generator[Step, Any, Prepared | None]:
    """(target, statistics) of a calibrated search, or None to pass it through.

    A failure of esqlog's own requests (the index was deleted, closed or recreated since it
    was resolved) drops the resolution and tries once more with a fresh one. If that fails
    too, the caller's search goes to the engine as given: where native fails, the caller
    gets the client's own exception (NotFoundError, BadRequestError ...), exactly as
    without esqlog; where native would answer, esqlog's failure stands.
    """
    # One statistics round trip serves every query of the body (query, retrievers)
    combined = queries[0] if len(queries) == 1 else {"bool": {"should": queries}}
    failure: ClusterError | None = None
    for _ in range(2):
        try:
            target = yield from core.resolver.target_plan(index)
            if target is None:
                trace.passed(not_resolved(index))
                return None
            yield from core.snapshots.check_plan(target.index)
            yield from core.clause_limit_plan()
            stats = yield from trace.watch(
                core.statistics.resolve_plan(target, combined, core.fields[target.index])
            )
        except ClusterError as exc:
            core.resolver.forget(index)
            failure = exc
            trace.fell_back(f"esqlog's request failed ({type(exc).__name__}): resolved again")
            continue
        if not stats:
            trace.passed("no calibrated match clause")
            return None
        if trace.statistics is None:  # no request: the snapshot, or the cache for some
            trace.statistics = (
                "snapshot"
                if all(core.snapshot_for(target.index, f) is not None for f, _ in stats)
                else "cache"
            )
        return target, stats
    assert failure is not None
    trace.passed("esqlog request failed")
    trace.fell_back("the search went as given")
    if call.get("scroll") is None:  # a scroll would leave the caller a context to clear
        yield call.untouched()
    raise failure


def _rerank_plan(
    core: WrapperCore,
    call: SearchCall,
    target: IndexTarget,
    stats: Mapping[TextKey, TextStats],
    trace: Trace,
) -> SearchPlan:
    window = rerank_window(call)
    if window is None:
        trace.passed("rerank needs a plain page")
        return (yield call.search())
    trace.rewritten("rerank")
    texts = core.scored_texts(target, stats)
    strategy, version = yield from choose_plan(
        core.options.rerank_in, call, texts, core.flavor, core.version_plan
    )
    original = call.query
    job = RerankJob(
        call,
        target.index,
        texts,
        window[0],
        window[1],
        core.options.top_n,
        core.flavor,
        version,
        qlog_query=lambda: core.rewritten(target, original, stats, "boost"),
        named_query=lambda names: core.named_native(target, original, stats, names),
    )
    return (yield from strategy.plan(job))
