"""``msearch``: each search of the batch rewritten as ``search`` would rewrite it.

A multi-search is a list of (header, body) pairs; each body is an ordinary search of the
header's index (or the call's ``index``). Each calibrated body gets its q-log rewrite and, on
a multi-shard index, ``search_type: dfs_query_then_fetch`` in its own header (unless the
header or the call sets one, or the body has a top-level knn); everything else in the
batch, its order and the call's other arguments go to the engine as given, in one msearch.
In ``identifiers`` mode each body is planned as its search would be, per shard where that
search goes per shard (esqlog.wrapper.identifier_msearch).

What stays as given: a batch sent as an NDJSON string or bytes (esqlog does not re-parse
it), bodies with ``min_score``, bodies whose index is not calibrated or not one concrete
index, and point-in-time bodies (no index in the header). ``rerank`` mode rewrites msearch
bodies with boosts (the same match set; every hit ranked by q-log, not only the top-N):
a rerank needs a second round trip per body. An item the engine fails is its own error
entry in the response, as without esqlog; esqlog's own failure to fetch statistics for one
body leaves that body native.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from typing import Any

from esqlog.engine.search_call import SearchCall
from esqlog.engine.steps import ClientSearch, SearchPlan, Step
from esqlog.errors import ClusterError
from esqlog.scoring.clauses import filters_on_score
from esqlog.scoring.rewrite import RewriteMode
from esqlog.wrapper.bodies import (
    dfs_allowed,
    has_top_level_knn,
    map_retriever,
    retriever_queries,
)
from esqlog.wrapper.boost_fan_out import usable_scales, usable_weights
from esqlog.wrapper.core import WrapperCore
from esqlog.wrapper.engine_query import with_span_fallback
from esqlog.wrapper.fan_out import (
    aggregating,
    aggregations_read_scores,
    fan_out_searches,
    fans_out,
)
from esqlog.wrapper.identifier_msearch import (
    Planned,
    fanned_msearch_plan,
    identifiers_body_plan,
    identifiers_msearch_plan,
)
from esqlog.wrapper.options import SearchMode
from esqlog.wrapper.scripting import SCRIPT_FIX, ScriptingUnavailable

_DFS = "dfs_query_then_fetch"


def _batch(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[str, list[Any]] | None:
    """(keyword, searches) of the call when it is a list esqlog can read, else None.

    Positional arguments go to the client as given: both clients take keywords only (so the
    caller gets the client's own TypeError), and an older client that took them is served
    as it always was.
    """
    if args:
        return None
    key = "searches" if "searches" in kwargs else "body"
    searches = kwargs.get(key)
    if not isinstance(searches, list | tuple) or len(searches) % 2:
        return None
    return key, list(searches)


def msearch_plan(
    core: WrapperCore, args: tuple[Any, ...], kwargs: dict[str, Any], esqlog_mode: SearchMode | None
) -> SearchPlan:
    """The caller's msearch with every calibrated body rewritten (see the module doc)."""
    given = dict(kwargs)
    batch = _batch(args, given)
    # mode="auto": the identifiers flow where some index is code (a body on another index
    # finds no identifiers statistics there and is sent as boost, below)
    mode = core.effective_mode(esqlog_mode)
    if (
        (esqlog_mode or core.options.mode) == "auto"
        and core.modes is not None
        and (core.identifiers is not None and core.modes.code_indices)
    ):
        mode = "identifiers"
    if batch is None or mode == "native":
        return (yield ClientSearch(args, kwargs, "msearch"))
    key, searches = batch
    if mode == "identifiers":  # each body as its search: esqlog.wrapper.identifier_msearch
        return (
            yield from with_span_fallback(
                core.engine_query,
                core.use_spans,
                lambda: _identifiers_msearch(
                    core, key, searches, given, (esqlog_mode or core.options.mode) == "auto"
                ),
                lambda: None,
            )
        )
    rewrite_mode = yield from _rewrite_mode(core, esqlog_mode, mode)
    if core.options.boost_shards == "fan_out" and core.shard_stats and mode == "boost":
        return (
            yield from fanned_msearch_plan(
                core,
                key,
                searches,
                given,
                lambda header, body, given: _one_plan(core, header, body, given, "boost", True),
            )
        )
    out: list[Any] = []
    for header, body in zip(searches[::2], searches[1::2], strict=True):
        lines, _ = yield from _one_plan(core, header, body, given, rewrite_mode)
        out.extend(lines)
    given[key] = out
    return (yield ClientSearch((), given, "msearch"))


def _identifiers_msearch(
    core: WrapperCore, key: str, searches: list[Any], given: dict[str, Any], auto: bool
) -> SearchPlan:
    """The identifiers mode's msearch; with mode="auto", a body on an index it chose boost
    for is sent as boost (the identifiers flow would leave it as given)."""

    def boost(header: Any, body: Any, given: Mapping[str, Any]) -> Any:
        return _boost_lines(core, header, body, given)

    if not auto or core.modes is None:
        return (yield from identifiers_msearch_plan(core, key, searches, given, boost))

    def one(header: Any, body: Any, given: Mapping[str, Any]) -> Any:
        index = header.get("index", given.get("index")) if isinstance(header, Mapping) else None
        if isinstance(index, list | tuple) and len(index) == 1:
            index = index[0]
        assert core.modes is not None
        if core.modes.code(index, core.by_index):
            return (yield from identifiers_body_plan(core, header, body, given, boost))
        return (yield from _one_plan(core, header, body, given, "boost"))

    return (yield from fanned_msearch_plan(core, key, searches, given, one))


def _rewrite_mode(core: WrapperCore, esqlog_mode: SearchMode | None, mode: SearchMode) -> Any:
    """script when the cluster runs esqlog's script, else boost (script forced: an error)."""
    if mode != "script":
        return "boost"
    if (yield from core.scripts.probe_plan()):
        return "script"
    if (esqlog_mode or core.options.mode) == "script":
        raise ScriptingUnavailable(
            "script mode is not available on this cluster (stored script not found)", SCRIPT_FIX
        ) from core.scripts.failure
    core.scripts.fall_back(core.scripts.failure)
    return "boost"


def _boost_lines(
    core: WrapperCore, header: Any, body: Any, given: Mapping[str, Any]
) -> Generator[Step, Any, list[Any]]:
    """The lines of a body the identifiers mode leaves to boost (its own dfs search)."""
    lines, _ = yield from _one_plan(core, header, body, given, "boost")
    return lines


def _one_plan(
    core: WrapperCore,
    header: Any,
    body: Any,
    given: Mapping[str, Any],
    mode: RewriteMode,
    fan_out: bool = False,
) -> Generator[Step, Any, Planned]:
    """[header, body] of one search of the batch, rewritten when it is calibrated; with
    ``fan_out``, a boost body that can go per shard becomes one request per shard (and the
    call to merge their answers by), as ``search`` sends it."""
    if not isinstance(header, Mapping) or not isinstance(body, Mapping):
        return [header, body], None
    query = body.get("query")
    retriever = body.get("retriever") if core.flavor == "elasticsearch" else None
    queries = ([] if query is None else [query]) + retriever_queries(retriever)
    knn = has_top_level_knn(body, {})
    if (
        not queries
        or filters_on_score(body.get("min_score"), query)
        or (knn and core.flavor == "opensearch")
    ):
        return [header, body], None
    index = header.get("index", given.get("index"))
    if isinstance(index, list | tuple) and len(index) == 1:
        index = index[0]
    combined = queries[0] if len(queries) == 1 else {"bool": {"should": queries}}
    try:
        target = yield from core.resolver.target_plan(index)
        if target is None:
            return [header, body], None
        yield from core.snapshots.check_plan(target.index)
        yield from core.clause_limit_plan()
        stats = yield from core.statistics.resolve_plan(target, combined, core.fields[target.index])
    except ClusterError:  # this body stays native; the engine answers it in the batch
        core.resolver.forget(index)
        return [header, body], None
    if not stats:
        return [header, body], None
    weights = None  # boost weighted by the shards' own statistics: no dfs (shard_stats)
    if mode == "boost" and query is not None and retriever is None and not knn:
        asked = given.get("search_type") or (given.get("params") or {}).get("search_type")
        call = SearchCall(
            core.flavor,
            (),
            {
                **{k: v for k, v in header.items() if k != "index"},
                "index": index,
                "body": dict(body),
                **({"search_type": asked} if asked else {}),
            },
        )
        scales = usable_scales(core, call, target, stats) if fan_out else None
        if scales is not None and fans_out(call):
            per_shard = [core.rewritten(target, query, stats, "boost", s) for s in scales]
            whole = core.rewritten(target, query, stats, "boost") if aggregating(call) else None
            return fan_out_searches(
                core.flavor, call, per_shard, whole, aggregations_read_scores(call)
            ), call
        weights = usable_weights(core, call, target, stats)

    def one(original: Any) -> Any:
        return core.rewritten(target, original, stats, mode, weights)

    rewritten = dict(body)
    if query is not None:
        rewritten["query"] = one(query)
    if retriever is not None:
        rewritten["retriever"] = map_retriever(retriever, one)
    if (
        core.options.dfs
        and target.shards > 1
        and weights is None
        and dfs_allowed(knn, retriever)
        and "search_type" not in header
        and given.get("search_type") is None
        and (given.get("params") or {}).get("search_type") is None
    ):
        header = {**header, "search_type": _DFS}
    return [header, rewritten], None
