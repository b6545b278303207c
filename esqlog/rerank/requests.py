"""The requests a client-side rerank makes after the native search: per-term scores or
term vectors of the hits."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from esqlog.engine.paths import index_path
from esqlog.engine.steps import Plan, Request
from esqlog.engine.termvectors import stored_vectors_request
from esqlog.rerank.scoring import DocVector, ScoredText, named_terms

#: Engines that report each named query's score (include_named_queries_score).
NAMED_SCORES_SINCE = {"elasticsearch": (8, 8), "opensearch": (2, 13)}


def supports_named_scores(flavor: str, version: tuple[int, ...]) -> bool:
    """True where one search can return every term's own BM25 score per hit."""
    return version[:2] >= NAMED_SCORES_SINCE.get(flavor, (99,))


def term_scores_plan(
    index: str,
    hits: Sequence[Mapping[str, Any]],
    texts: Sequence[ScoredText],
    search_type: str | None,
) -> Plan[dict[tuple[str, str], dict[str, float]]]:
    """Each hit's engine-computed BM25 score of every query term, in one search.

    A bool of one named ``term`` clause per distinct (field, term), filtered to the hits'
    ids, with include_named_queries_score: the engine reports idf * tfnorm with its own
    norms, so the rerank is exact q-log BM25, not an approximation from term vectors.
    """
    clauses = []
    for name, (field_name, term) in named_terms(texts).items():
        clauses.append({"term": {field_name: {"value": term, "_name": name}}})
    ids = list(dict.fromkeys(str(h["_id"]) for h in hits))
    if not clauses or not ids:
        return {}
    params: dict[str, Any] = {"include_named_queries_score": True}
    if search_type:
        params["search_type"] = search_type
    body = yield Request(
        "POST",
        index_path(index, "_search", patterns=True),
        params,
        {
            "query": {"bool": {"filter": [{"ids": {"values": ids}}], "should": clauses}},
            "size": len(ids),
            "_source": False,
            "track_total_hits": False,
        },
    )
    out: dict[tuple[str, str], dict[str, float]] = {}
    for hit in body.get("hits", {}).get("hits", []):
        matched = hit.get("matched_queries") or {}
        if isinstance(matched, Mapping):
            out[(hit["_index"], hit["_id"])] = {k: float(v) for k, v in matched.items()}
    return out


def hit_vectors_plan(
    hits: Sequence[Mapping[str, Any]], fields: Sequence[str]
) -> Plan[dict[tuple[str, str], dict[str, DocVector]]]:
    """Term vectors of the hits' fields: {(index, id): {field: DocVector}} in one request."""
    if not hits or not fields:
        return {}
    body = yield stored_vectors_request(hits, fields)
    out: dict[tuple[str, str], dict[str, DocVector]] = {}
    for doc in body.get("docs", []):
        per_field: dict[str, DocVector] = {}
        for field_name, vectors in (doc.get("term_vectors") or {}).items():
            tf = {t: int(v.get("term_freq", 0)) for t, v in (vectors.get("terms") or {}).items()}
            per_field[field_name] = DocVector(tf, sum(tf.values()))
        out[(doc["_index"], doc["_id"])] = per_field
    return out
