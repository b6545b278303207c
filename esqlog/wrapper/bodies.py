"""Where a search body keeps the queries esqlog rewrites, and what the engine allows around them.

A body scores with its top-level ``query`` and, on Elasticsearch, with the queries inside
``retriever`` trees (``standard`` retrievers, also nested in ``rrf`` / ``linear`` and in
retrievers that wrap one other retriever). Each of those is an ordinary query: the rewrite of
each keeps its match set, so the tree keeps its own. A ``standard`` retriever with
``min_score`` thresholds native scores and stays native (as a top-level ``min_score`` does).

``knn`` (top-level, Elasticsearch) and ``knn`` retrievers are never touched. Elasticsearch
refuses an explicit ``search_type`` beside a top-level ``knn`` ("cannot set [search_type]
when using [knn] search") because it already runs such searches as
``dfs_query_then_fetch``: measured on a 3-shard index, the query part of a knn search is
scored with the index-wide N and df (scripts/bench/hybrid_dfs.py), which is what the q-log
weights were computed from. So esqlog leaves ``search_type`` unset there, and the scores
stay global. OpenSearch has no top-level ``knn`` (its k-NN plugin is a ``knn`` query clause,
left as it is): it rejects the key, so such a body goes to it untouched and the caller gets
the engine's own error.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from esqlog.scoring.clauses import filters_on_score

QueryFn = Callable[[Any], Any]

#: retrievers holding a list of child retrievers, and how each child is stored
_LIST_RETRIEVERS = {"rrf": None, "linear": "retriever"}
#: retrievers wrapping exactly one retriever under this key
_WRAPPING_RETRIEVERS = frozenset({"text_similarity_reranker", "rule", "pinned"})


def map_retriever(retriever: Any, fn: QueryFn) -> Any:
    """The retriever tree with ``fn`` applied to each standard retriever's query."""
    if not isinstance(retriever, Mapping) or len(retriever) != 1:
        return retriever
    kind, spec = next(iter(retriever.items()))
    if not isinstance(spec, Mapping):
        return retriever
    if kind == "standard":
        query = spec.get("query")
        if query is None or filters_on_score(spec.get("min_score"), query):
            return retriever
        return {kind: {**spec, "query": fn(query)}}
    if kind in _LIST_RETRIEVERS and isinstance(spec.get("retrievers"), list):
        key = _LIST_RETRIEVERS[kind]
        children = [
            (
                {**child, key: map_retriever(child[key], fn)}
                if key is not None and isinstance(child, Mapping) and key in child
                else map_retriever(child, fn)
            )
            for child in spec["retrievers"]
        ]
        return {kind: {**spec, "retrievers": children}}
    if kind in _WRAPPING_RETRIEVERS and "retriever" in spec:
        return {kind: {**spec, "retriever": map_retriever(spec["retriever"], fn)}}
    return retriever


def retriever_queries(retriever: Any) -> list[Any]:
    """Every query of the tree that :func:`map_retriever` would rewrite, in order."""
    found: list[Any] = []

    def record(query: Any) -> Any:
        found.append(query)
        return query

    map_retriever(retriever, record)
    return found


def dfs_allowed(knn: bool, retriever: Any) -> bool:
    """Whether esqlog may add ``search_type: dfs_query_then_fetch`` to this body.

    Not beside a top-level knn (refused; Elasticsearch runs dfs itself). With a retriever only
    when it is a plain ``standard`` one (verified on Elasticsearch 8.19): compound retrievers
    (``rrf``, ``linear``, ...) run their children as searches of their own, which the test
    node cannot show (no rank-rrf module), so esqlog sets nothing there rather than risk
    turning a working search into a refused one.
    """
    if knn:
        return False
    return retriever is None or (isinstance(retriever, Mapping) and set(retriever) == {"standard"})


def has_top_level_knn(body: Mapping[str, Any] | None, kwargs: Mapping[str, Any]) -> bool:
    """A top-level ``knn`` section, in the body or as elasticsearch-py's keyword."""
    return bool((body is not None and body.get("knn") is not None) or kwargs.get("knn") is not None)
