"""An identifiers search on several shards as one request per shard, merged as the engine would.

Why (esqlog.identifiers.shards): each shard's query lists only the terms it holds, with
boosts from its own statistics, so no dfs phase is needed and every word is one exact
saturation. The requests go in one ``_msearch`` (``preference=_shards:k``); the answer is
built in the shape of a search response: hits merged by score (ties: lower shard first,
then each shard's own order, as the engine's merge), ``hits.total`` summed and capped as
``track_total_hits`` caps it, ``max_score`` the largest, ``_shards`` summed.

What fans out is every search whose answer the merge rebuilds exactly, so that adding an
option changes neither the match set nor the ranking: size, from, source filtering,
highlighting and the other per-hit options; ``rescore``, which the engine runs on each
shard's own top window anyway; ``collapse`` without inner_hits (each shard collapses its
own hits, the merge keeps a key's best one, as the engine's merge does); ``profile``
(the shards' profiles, of the queries that ran); ``routing`` (each request reads shard k
when the routing reaches it, else answers from no shard); ``request_cache``; and a
``preference`` (joined to ``_shards:k``; OpenSearch refuses a custom string there, and
since such a string only picks among a shard's copies it is left out on OpenSearch).
Aggregations and suggestions cannot be merged exactly from per-shard answers: they ride
in the same ``_msearch`` as one more request, ``size: 0``, holding the same match set, so
they count exactly the documents the merged hits come from: as a constant-score filter of
the listed terms (esqlog.identifiers.shards.matching_query), or, when an aggregation may
read scores (top_hits, a sampler, a script ...), the one dfs query built from the same
plan (esqlog.identifiers.shards.one_query). What is left goes the dfs way (esqlog.wrapper.search)
with that same query: sorts, cursors (search_after, scroll, point in time), collapse with
inner_hits, a preference that names shards, profile beside aggregations, and any option
esqlog does not know: the same match set, the ranking up to the length norm's average.

When a request fails, the search is sent the dfs way too and the engine answers it (its
error, or its result) as without the fan-out. An answer that shows the index is no longer
the one resolved (index_not_found, or a shard request answered by no shard when no
routing was given) is reported as ``moved``, so the caller can resolve the index again.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from esqlog.engine.search_call import SearchCall
from esqlog.engine.steps import ClientSearch, Step

#: Body options each shard answers as the whole index would (size and from are paged here).
PER_SHARD_BODY = frozenset(
    {
        "query",
        "size",
        "from",
        "_source",
        "fields",
        "docvalue_fields",
        "stored_fields",
        "highlight",
        "track_total_hits",
        "timeout",
        "explain",
        "version",
        "seq_no_primary_term",
        "track_scores",
        "script_fields",
        "post_filter",
        "search_type",
        "rescore",
        "collapse",
        "profile",
    }
)
#: Body options answered by one more request of the whole index (see the module docstring)
WHOLE_INDEX_BODY = frozenset({"aggs", "aggregations", "suggest"})
#: URL options each request carries in its msearch header
HEADER = ("routing", "request_cache")
#: The same options as elasticsearch-py keywords, and the transport options of both clients.
_KEYWORDS = (
    frozenset(
        {
            "index",
            "body",
            "params",
            "headers",
            "from_",
            "source",
            "source_includes",
            "source_excludes",
            "request_timeout",
            "preference",
            *HEADER,
        }
    )
    | PER_SHARD_BODY
    | WHOLE_INDEX_BODY
)
_PARAMS = frozenset({"request_timeout", "preference", "search_type", "timeout", *HEADER})
#: The engines' default of track_total_hits
TOTAL_HITS_UP_TO = 10_000
_DFS = "dfs_query_then_fetch"


def fans_out(call: SearchCall) -> bool:
    """Whether the call is a search that one request per shard (and one for its
    aggregations) answers exactly.

    The one test for ``search`` and for each body of an ``msearch`` (esqlog.wrapper.
    identifier_plan, esqlog.wrapper.identifier_msearch): a body sent one way through one API
    and the other way through the other would be paged, counted and ranked differently.
    """
    if not _pages_as_given(call):
        return False
    body = call.body or {}
    params = call.kwargs.get("params") or {}
    collapse = call.get("collapse")
    preference = call.get("preference")
    return (
        set(body) <= PER_SHARD_BODY | WHOLE_INDEX_BODY
        and set(call.kwargs) <= _KEYWORDS
        and isinstance(params, Mapping)
        and set(params) <= _PARAMS
        and (
            collapse is None
            or (
                isinstance(collapse, Mapping)
                and set(collapse) == {"field"}
                and isinstance(collapse["field"], str)
            )
        )
        and not (call.get("profile") and aggregating(call))
        and (
            preference is None
            or (isinstance(preference, str) and not preference.startswith("_shards:"))
        )
    )


def _pages_as_given(call: SearchCall) -> bool:
    """Whether the fan-out's own paging and hit count would answer as the engine does.

    The fan-out pages and caps ``hits.total`` itself, so values the engine refuses
    (``from: -1`` answered 200 with no hits) or reads in its own way must not reach it:
    such a search goes as one query, and the engine answers (its 400 included).
    ``track_total_hits: "true"`` / ``"false"`` (both engines accept the strings) are set
    as the booleans they mean.
    """
    for key in ("from", "size"):
        value = call.get(key)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 0
        ):
            return False
    total = call.get("track_total_hits")
    if isinstance(total, str) and total.lower() in ("true", "false"):
        total = total.lower() == "true"
        call.set("track_total_hits", total)
    return total is None or isinstance(total, bool) or (isinstance(total, int) and total >= 0)


def aggregating(call: SearchCall) -> bool:
    """Whether the call asks for aggregations or suggestions (one more request)."""
    return any(call.get(key) is not None for key in WHOLE_INDEX_BODY)


#: aggregations that read scores (or may, through a script): they get the scored query
_SCORED_AGGREGATIONS = ("top_hits", "top_metrics", "sampler", "script", "_score")


def aggregations_read_scores(call: SearchCall) -> bool:
    """Whether the aggregations may read scores. If not, the request for them holds the
    constant-score filter of the same match set (cheaper: no spans, no dfs)."""
    aggs = [call.get(key) for key in ("aggs", "aggregations")]
    text = json.dumps(aggs, default=str)
    return any(name in text for name in _SCORED_AGGREGATIONS)


def _shard_body(call: SearchCall, query: dict[str, Any], window: int) -> dict[str, Any]:
    body = {k: v for k, v in (call.body or {}).items() if k in PER_SHARD_BODY}
    for key in PER_SHARD_BODY:  # options given as keywords or params, by their REST name
        value = call.get(key)
        if value is not None:
            body[key] = value
    source = call.kwargs.get("source")
    if source is not None:
        body["_source"] = source
    for key in ("source_includes", "source_excludes"):
        if call.kwargs.get(key) is not None:
            spec = body.get("_source")
            spec = dict(spec) if isinstance(spec, Mapping) else {}
            spec[key.split("_")[1]] = call.kwargs[key]
            body["_source"] = spec
    body.pop("search_type", None)
    body.pop("preference", None)
    body.update(query=query, size=window)
    body["from"] = 0
    return body


def _pinned(flavor: str, shard: int, preference: Any) -> str:
    """``_shards:k`` joined to the caller's preference where the engine takes it."""
    if not preference or (flavor == "opensearch" and not str(preference).startswith("_")):
        return f"_shards:{shard}"
    return f"_shards:{shard}|{preference}"


def fan_out_searches(
    flavor: str,
    call: SearchCall,
    queries: Sequence[dict[str, Any]],
    whole: dict[str, Any] | None = None,
    dfs: bool = True,
) -> list[dict[str, Any]]:
    """The msearch lines of the search: one (header, body) per shard, then, for
    aggregations or suggestions, one of the whole index holding ``whole`` (the one query)."""
    size = call.get("size")
    start = call.get("from") or 0
    size = 10 if size is None else size
    preference = call.get("preference")
    shared = {k: call.get(k) for k in HEADER if call.get(k) is not None}
    searches: list[dict[str, Any]] = []
    for shard, query in enumerate(queries):
        searches += [
            {"index": call.index, "preference": _pinned(flavor, shard, preference), **shared},
            _shard_body(call, query, start + size),
        ]
    if whole is not None:
        header = {"index": call.index, **shared}
        if preference is not None:
            header["preference"] = preference
        if dfs and len(queries) > 1:
            header["search_type"] = _DFS
        body = {k: call.get(k) for k in (*WHOLE_INDEX_BODY, "timeout") if call.get(k) is not None}
        searches += [header, {**body, "query": whole, "size": 0}]
    return searches


@dataclass(frozen=True)
class FanOutAnswer:
    """The merged response (None: a request failed), and whether the answers show that
    the index is no longer the one the requests were planned for."""

    response: Any
    moved: bool


def fan_out_plan(
    flavor: str,
    call: SearchCall,
    queries: Sequence[dict[str, Any]],
    whole: dict[str, Any] | None = None,
    dfs: bool = True,
) -> Generator[Step, Any, FanOutAnswer]:
    """The search as one request per shard (+ one for aggregations), merged."""
    searches = fan_out_searches(flavor, call, queries, whole, dfs)
    extra = {k: v for k, v in call.kwargs.items() if k in ("headers", "request_timeout")}
    params = call.kwargs.get("params") or {}
    if "request_timeout" in params:
        extra["params"] = {"request_timeout": params["request_timeout"]}
    key = "searches" if flavor == "elasticsearch" else "body"
    raw = yield ClientSearch((), {key: searches, **extra}, "msearch")
    responses = raw["responses"]
    moved = index_moved(responses[: len(queries)], call.get("routing") is not None)
    merged = merge_call(call, responses, raw.get("took"), len(queries))
    if merged is None:
        return FanOutAnswer(None, moved)
    meta = getattr(raw, "meta", None)
    return FanOutAnswer(merged if meta is None else type(raw)(body=merged, meta=meta), moved)


def index_moved(responses: Sequence[Mapping[str, Any]], routed: bool) -> bool:
    """Whether per-shard answers show another index than planned: it is gone, or a shard
    request was answered by no shard (unless routing left that shard out)."""
    for r in responses:
        error = r.get("error")
        if isinstance(error, Mapping) and error.get("type") == "index_not_found_exception":
            return True
        if not routed and "error" not in r and int((r.get("_shards") or {}).get("total", 1)) != 1:
            return True
    return False


def merge_call(
    call: SearchCall, responses: Sequence[Mapping[str, Any]], took: Any, shards: int
) -> dict[str, Any] | None:
    """The call's response from its msearch answers (``shards`` per-shard ones, then the
    aggregations' one when there is one); None when one of them is an error."""
    collapse = call.get("collapse")
    merged = merge_responses(
        responses[:shards],
        took,
        call.get("from") or 0,
        10 if call.get("size") is None else call.get("size"),
        call.get("track_total_hits"),
        collapse=collapse["field"] if isinstance(collapse, Mapping) else None,
        profile=bool(call.get("profile")),
    )
    if merged is None or len(responses) == shards:
        return merged
    whole = responses[shards]
    if "error" in whole:
        return None
    for key in ("aggregations", "suggest"):
        if key in whole:
            merged[key] = whole[key]
    return merged


def merge_responses(
    responses: Sequence[Mapping[str, Any]],
    took: Any,
    start: int,
    size: int,
    track_total_hits: Any,
    *,
    collapse: str | None = None,
    profile: bool = False,
) -> dict[str, Any] | None:
    """One search response from the shards' answers (in shard order); None on an error.

    ``collapse``: the field hits were collapsed on (a key's best hit is kept, as the
    engine's merge keeps it); ``profile``: the shards' profiles are listed together."""
    if any("error" in r or "hits" not in r for r in responses):
        return None
    hits = [h for r in responses for h in r["hits"].get("hits", [])]
    hits.sort(
        key=lambda h: -(h.get("_score") if h.get("_score") is not None else float("-inf"))
    )  # stable: shard order, then its own
    if collapse is not None:
        hits = _collapsed(hits, collapse)
    scores = [r["hits"]["max_score"] for r in responses if r["hits"].get("max_score") is not None]
    out_hits: dict[str, Any] = {}
    totals = [r["hits"].get("total") for r in responses]
    if all(isinstance(t, Mapping) for t in totals):
        out_hits["total"] = _total(totals, track_total_hits)
    elif all(isinstance(t, int) for t in totals):  # rest_total_hits_as_int
        out_hits["total"] = sum(totals)
    out_hits["max_score"] = max(scores) if scores else None
    out_hits["hits"] = hits[start : start + size]
    shards = [r.get("_shards") or {} for r in responses]
    summed: dict[str, Any] = {
        k: sum(int(s.get(k, 0)) for s in shards)
        for k in ("total", "successful", "skipped", "failed")
    }
    failures = [f for s in shards for f in s.get("failures", [])]
    if failures:
        summed["failures"] = failures
    out = {
        "took": took if took is not None else max(int(r.get("took", 0)) for r in responses),
        "timed_out": any(bool(r.get("timed_out")) for r in responses),
        "_shards": summed,
        "hits": out_hits,
    }
    if profile:
        out["profile"] = {
            "shards": [s for r in responses for s in (r.get("profile") or {}).get("shards", [])]
        }
    return out


def _collapsed(hits: list[dict[str, Any]], field: str) -> list[dict[str, Any]]:
    """The first (best) hit of each collapse key, in order; a hit without the key's value
    is its own group of missing values, as in the engine."""
    seen: set[Any] = set()
    out = []
    for hit in hits:
        values = (hit.get("fields") or {}).get(field) or [None]
        key = values[0] if not isinstance(values[0], list | dict) else repr(values[0])
        if key not in seen:
            seen.add(key)
            out.append(hit)
    return out


def _total(totals: Sequence[Mapping[str, Any]], track_total_hits: Any) -> dict[str, Any]:
    """hits.total as the engine merges it: summed, then capped at track_total_hits."""
    value = sum(int(t.get("value", 0)) for t in totals)
    relation = "gte" if any(t.get("relation") == "gte" for t in totals) else "eq"
    up_to = (
        None
        if track_total_hits is True
        else TOTAL_HITS_UP_TO
        if track_total_hits in (None, False)
        else int(track_total_hits)
    )
    if up_to is not None and value > up_to:
        value, relation = up_to, "gte"
    return {"value": value, "relation": relation}
