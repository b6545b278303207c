"""``msearch`` in the identifiers mode: each body answered as ``search`` would answer it.

Why: a body of a multi-search is an ordinary search, and the identifiers mode gives one
query one match set and one ranking whichever API carries it. So each calibrated body is
planned as esqlog.wrapper.identifier_plan plans a search: one request per shard (plus one
for its aggregations) when the search can go per shard, laid out in the same msearch and
merged back into that body's answer (esqlog.wrapper.fan_out), else the one dfs query
holding the same terms in that body's own header. Bodies the mode leaves alone (knn,
retrievers, min_score, no index esqlog knows) are what the other modes make of them
(``boost``, as ``search`` does), and the order of the answers is the caller's.

A body whose per-shard requests fail answers with the first of their error entries (the
engine's error for that body, as it would be without esqlog); its per-shard answers
showing that the index moved (esqlog.wrapper.fan_out.index_moved) drop the index's
resolution, so the next search resolves it afresh.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping
from typing import Any

from esqlog.engine.search_call import SearchCall
from esqlog.engine.steps import ClientSearch, SearchPlan, Step
from esqlog.errors import ClusterError
from esqlog.scoring.clauses import filters_on_score
from esqlog.wrapper.bodies import has_top_level_knn
from esqlog.wrapper.core import WrapperCore
from esqlog.wrapper.fan_out import (
    aggregating,
    aggregations_read_scores,
    fan_out_searches,
    fans_out,
    index_moved,
    merge_call,
)
from esqlog.wrapper.identifier_plan import beside_fan_out, scores_unread
from esqlog.wrapper.identifier_search import STALE

_DFS = "dfs_query_then_fetch"
#: (header, body, the call's arguments) -> the lines of a body in boost mode
Boost = Callable[[Any, Any, Mapping[str, Any]], Generator[Step, Any, list[Any]]]
#: what one body became: its msearch lines, and the call to merge per-shard answers by
Planned = tuple[list[Any], SearchCall | None]
#: (header, body, the call's arguments) -> what that body became
PlanOne = Callable[[Any, Any, Mapping[str, Any]], Generator[Step, Any, Planned]]


def identifiers_msearch_plan(
    core: WrapperCore, key: str, searches: list[Any], given: dict[str, Any], boost: Boost
) -> SearchPlan:
    """The caller's msearch with every calibrated body planned as its search would be."""
    return (
        yield from fanned_msearch_plan(
            core,
            key,
            searches,
            given,
            lambda header, body, given: _one_plan(core, header, body, given, boost),
        )
    )


def fanned_msearch_plan(
    core: WrapperCore, key: str, searches: list[Any], given: dict[str, Any], plan_one: PlanOne
) -> SearchPlan:
    """The caller's msearch with each body laid out by ``plan_one``: its own lines, or one
    request per shard (with the call to merge their answers by) when it fans out. Shared
    by the identifiers mode and boost mode's fan-out (esqlog.wrapper.boost_fan_out)."""
    out: list[Any] = []
    slots: list[tuple[int, int, SearchCall | None]] = []
    for header, body in zip(searches[::2], searches[1::2], strict=True):
        lines, call = yield from plan_one(header, body, given)
        slots.append((len(out) // 2, len(lines) // 2, call))
        out += lines
    raw = yield ClientSearch((), {**given, key: out}, "msearch")
    responses = raw["responses"]
    answers = []
    for start, count, call in slots:
        part = responses[start : start + count]
        if call is None:
            answers.append(part[0])
            continue
        shards = count - (1 if aggregating(call) else 0)
        if index_moved(part[:shards], call.get("routing") is not None):
            core.resolver.forget(call.index)
            core.snapshots.recheck(call.index)
        merged = merge_call(call, part, None, shards)
        answers.append(
            merged if merged is not None else next((r for r in part if "error" in r), part[0])
        )
    given_body: Any = getattr(raw, "body", raw)
    body = {**dict(given_body), "responses": answers}
    meta = getattr(raw, "meta", None)
    return body if meta is None else type(raw)(body=body, meta=meta)


def _one_plan(
    core: WrapperCore, header: Any, body: Any, given: Mapping[str, Any], boost: Boost
) -> Generator[Step, Any, Planned]:
    if not isinstance(header, Mapping) or not isinstance(body, Mapping):
        return [header, body], None
    query = body.get("query")
    if query is None or filters_on_score(body.get("min_score"), query):
        return [header, body], None
    index = header.get("index", given.get("index"))
    if isinstance(index, list | tuple) and len(index) == 1:
        index = index[0]
    retriever = body.get("retriever") if core.flavor == "elasticsearch" else None
    if retriever is not None or has_top_level_knn(body, {}) or not isinstance(index, str):
        return (yield from boost(header, body, given)), None
    call = SearchCall(
        core.flavor,
        (),
        {**{k: v for k, v in header.items() if k != "index"}, "index": index, "body": dict(body)},
    )
    rewriter = core.identifiers
    assert rewriter is not None  # the wrapper is built for the mode
    try:
        target = yield from core.resolver.target_plan(index)
    except ClusterError:
        return [header, body], None
    if target is None:
        return [header, body], None
    yield from core.snapshots.check_plan(target.index, target.uuid)
    yield from core.clause_limit_plan()
    # esqlog_terms without idf scores every shard alike: one plain query, no dfs, no fan-out
    plugin = rewriter.settings.engine_query == "plugin"
    if rewriter.settings.fan_out and not plugin and target.shards > 1 and fans_out(call):
        queries = rewriter.rewrite_per_shard(target, query, core.snapshots, core.max_clauses)
        if queries == STALE:
            return (yield from boost(header, body, given)), None
        scored = aggregations_read_scores(call)
        whole = beside_fan_out(core, call, target, query, queries, scored)
        if isinstance(queries, list) and (whole is None or isinstance(whole, dict)):
            return fan_out_searches(
                core.flavor, call, queries, whole, core.options.dfs and scored
            ), call
    unscored = scores_unread(call)
    build = rewriter.rewrite_matching if unscored else rewriter.rewrite
    rewritten = build(target, query, core.snapshots, core.max_clauses)
    if rewritten == STALE:
        return (yield from boost(header, body, given)), None
    if not isinstance(rewritten, dict):
        return [header, body], None
    if (
        core.options.dfs
        and target.shards > 1
        and "search_type" not in header
        and not unscored
        and not plugin
        and given.get("search_type") is None
        and (given.get("params") or {}).get("search_type") is None
    ):
        header = {**header, "search_type": _DFS}
    return [header, {**body, "query": rewritten}], None


def identifiers_body_plan(
    core: WrapperCore, header: Any, body: Any, given: Mapping[str, Any], boost: Boost
) -> Generator[Step, Any, Planned]:
    """One body as the identifiers mode plans it: mode="auto" routes the bodies on code
    indices here, the others to boost (esqlog.wrapper.multi)."""
    return (yield from _one_plan(core, header, body, given, boost))
