"""An identifiers search on several shards as one request per shard, merged as the engine would.

Why (esqlog.identifiers.shards): each shard's query lists only the terms it holds, with
boosts from its own statistics, so no dfs phase is needed and every word is one exact
saturation. The requests go in one ``_msearch`` (``preference=_shards:k``); the answer is
built in the shape of a search response: hits merged by score (ties: lower shard first,
then each shard's own order, as the engine's merge), ``hits.total`` summed and capped as
``track_total_hits`` caps it, ``max_score`` the largest, ``_shards`` summed.

Only plain searches fan out: a query with size, from and the options that each shard
answers alone (source filtering, highlighting, ...). Aggregations, sorts, cursors
(search_after, scroll, point in time), collapse, rescore, suggestions, routing and any
option esqlog does not know go the dfs way (esqlog.wrapper.search), so their results stay
the engine's own. When a shard's request fails, the search is sent the dfs way too and
the engine answers it (its error, or its result) as without the fan-out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from esqlog.engine.search_call import SearchCall
from esqlog.engine.steps import ClientSearch, SearchPlan

#: Body options each shard answers as the whole index would (size and from are paged here).
PER_SHARD_BODY = frozenset({
    "query", "size", "from", "_source", "fields", "docvalue_fields", "stored_fields",
    "highlight", "track_total_hits", "timeout", "explain", "version", "seq_no_primary_term",
    "track_scores", "script_fields", "post_filter", "search_type"})
#: The same options as elasticsearch-py keywords, and the transport options of both clients.
_KEYWORDS = frozenset({"index", "body", "params", "headers", "from_", "source",
                       "source_includes", "source_excludes", "request_timeout",
                       "preference"}) | PER_SHARD_BODY
_PARAMS = frozenset({"request_timeout", "preference", "search_type", "timeout"})
#: The engines' default of track_total_hits
TOTAL_HITS_UP_TO = 10_000


def fans_out(call: SearchCall) -> bool:
    """Whether the call is a plain search that one request per shard answers exactly."""
    body = call.body or {}
    params = call.kwargs.get("params") or {}
    return (set(body) <= PER_SHARD_BODY and set(call.kwargs) <= _KEYWORDS
            and isinstance(params, Mapping) and set(params) <= _PARAMS
            and isinstance(call.get("size"), int | None)
            and isinstance(call.get("from"), int | None))


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


def fan_out_plan(flavor: str, call: SearchCall, queries: Sequence[dict[str, Any]]
                 ) -> SearchPlan:
    """The search as one request per shard; None when a shard's request failed."""
    size = call.get("size")
    start = call.get("from") or 0
    size = 10 if size is None else size
    preference = call.get("preference")
    searches: list[dict[str, Any]] = []
    for shard, query in enumerate(queries):
        pinned = f"_shards:{shard}" + (f"|{preference}" if preference else "")
        searches += [{"index": call.index, "preference": pinned},
                     _shard_body(call, query, start + size)]
    extra = {k: v for k, v in call.kwargs.items()
             if k in ("headers", "request_timeout")}
    params = call.kwargs.get("params") or {}
    if "request_timeout" in params:
        extra["params"] = {"request_timeout": params["request_timeout"]}
    key = "searches" if flavor == "elasticsearch" else "body"
    raw = yield ClientSearch((), {key: searches, **extra}, "msearch")
    merged = merge_responses(raw["responses"], raw.get("took"), start, size,
                             call.get("track_total_hits"))
    if merged is None:
        return None
    meta = getattr(raw, "meta", None)
    return merged if meta is None else type(raw)(body=merged, meta=meta)


def merge_responses(responses: Sequence[Mapping[str, Any]], took: Any, start: int, size: int,
                    track_total_hits: Any) -> dict[str, Any] | None:
    """One search response from the shards' answers (in shard order); None on an error."""
    if any("error" in r or "hits" not in r for r in responses):
        return None
    hits = [h for r in responses for h in r["hits"].get("hits", [])]
    hits.sort(key=lambda h: -(h.get("_score") if h.get("_score") is not None
                              else float("-inf")))  # stable: shard order, then its own
    scores = [r["hits"]["max_score"] for r in responses
              if r["hits"].get("max_score") is not None]
    out_hits: dict[str, Any] = {}
    totals = [r["hits"].get("total") for r in responses]
    if all(isinstance(t, Mapping) for t in totals):
        out_hits["total"] = _total(totals, track_total_hits)
    elif all(isinstance(t, int) for t in totals):  # rest_total_hits_as_int
        out_hits["total"] = sum(totals)
    out_hits["max_score"] = max(scores) if scores else None
    out_hits["hits"] = hits[start:start + size]
    shards = [r.get("_shards") or {} for r in responses]
    summed: dict[str, Any] = {k: sum(int(s.get(k, 0)) for s in shards)
                              for k in ("total", "successful", "skipped", "failed")}
    failures = [f for s in shards for f in s.get("failures", [])]
    if failures:
        summed["failures"] = failures
    return {"took": took if took is not None else max(int(r.get("took", 0))
                                                      for r in responses),
            "timed_out": any(bool(r.get("timed_out")) for r in responses),
            "_shards": summed, "hits": out_hits}


def _total(totals: Sequence[Mapping[str, Any]], track_total_hits: Any) -> dict[str, Any]:
    """hits.total as the engine merges it: summed, then capped at track_total_hits."""
    value = sum(int(t.get("value", 0)) for t in totals)
    relation = "gte" if any(t.get("relation") == "gte" for t in totals) else "eq"
    up_to = (None if track_total_hits is True else TOTAL_HITS_UP_TO if track_total_hits
             in (None, False) else int(track_total_hits))
    if up_to is not None and value > up_to:
        value, relation = up_to, "gte"
    return {"value": value, "relation": relation}
