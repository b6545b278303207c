"""Client-side rerank: rescore the engine's top-N hits with q-log BM25 (numpy).

For engines or clusters where neither scripts nor per-term boosts fit (or to try q without
touching queries), esqlog runs the query natively, fetches the hits' term vectors (generated
on the fly: no stored vectors needed) and moves each hit's score by the difference between
the q-log and the native BM25 contribution of every analyzed query term:

    new = native + scale * sum_t (idf_q(n_t, N) - idf(n_t, N)) * tfnorm(tf_t, dl)

At q = 1 the correction is exactly 0, so the native order is kept. For a plain match query
the new score is q-log BM25 up to Lucene's one-byte length-norm rounding (term vectors give
the exact length). Other clauses of a bool query keep their native contribution.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from esqlog.engine import Plan, Request
from esqlog.qlog import bm25_tf_norm, idf
from esqlog.stats import TextStats

DEFAULT_TOP_N = 100
#: prefix of the query names esqlog gives term clauses (removed from responses again)
NAME_PREFIX = "esqlog#"
#: Engines that report each named query's score (include_named_queries_score).
NAMED_SCORES_SINCE = {"elasticsearch": (8, 8), "opensearch": (2, 13)}


def supports_named_scores(flavor: str, version: tuple[int, ...]) -> bool:
    """True where one search can return every term's own BM25 score per hit."""
    return version[:2] >= NAMED_SCORES_SINCE.get(flavor, (99,))


def term_scores_plan(
    index: str, hits: Sequence[Mapping[str, Any]], texts: Sequence[ScoredText],
    search_type: str | None,
) -> Plan[dict[tuple[str, str], dict[str, float]]]:
    """Each hit's engine-computed BM25 score of every query term, in one search.

    A bool of one named ``term`` clause per distinct (field, term), filtered to the hits'
    ids, with include_named_queries_score: the engine reports idf * tfnorm with its own
    norms, so the rerank is exact q-log BM25, not an approximation from term vectors.
    """
    clauses = []
    for name, (field_name, term) in _named_terms(texts).items():
        clauses.append({"term": {field_name: {"value": term, "_name": name}}})
    ids = list(dict.fromkeys(str(h["_id"]) for h in hits))
    if not clauses or not ids:
        return {}
    params: dict[str, Any] = {"include_named_queries_score": True}
    if search_type:
        params["search_type"] = search_type
    body = yield Request("POST", f"/{index}/_search", params, {
        "query": {"bool": {"filter": [{"ids": {"values": ids}}], "should": clauses}},
        "size": len(ids), "_source": False, "track_total_hits": False,
    })
    out: dict[tuple[str, str], dict[str, float]] = {}
    for hit in body.get("hits", {}).get("hits", []):
        matched = hit.get("matched_queries") or {}
        if isinstance(matched, Mapping):
            out[(hit["_index"], hit["_id"])] = {k: float(v) for k, v in matched.items()}
    return out


def _named_terms(texts: Sequence[ScoredText]) -> dict[str, tuple[str, str]]:
    """A short, unique query name for every distinct (field, term) of the texts and joins."""
    pairs = dict.fromkeys((t.field, term) for t in texts
                          for term in (*t.stats.terms, *(j for j, _ in t.joins)))
    return {f"{NAME_PREFIX}{i}": pair for i, pair in enumerate(pairs)}


def term_names(texts: Sequence[ScoredText]) -> dict[tuple[str, str], str]:
    """(field, term) -> the query name its clause carries (see _named_terms)."""
    return {pair: name for name, pair in _named_terms(texts).items()}


def named_score_corrections(
    hits: Sequence[Mapping[str, Any]], scores: Mapping[tuple[str, str], Mapping[str, float]],
    texts: Sequence[ScoredText],
) -> np.ndarray:
    """Per hit: sum over query terms of (idf_q/idf - 1) * the engine's term score, plus the
    joins' w * idf_q/idf * score (the native query has no join clauses)."""
    from esqlog.qlog import boost_weight

    names = {pair: name for name, pair in _named_terms(texts).items()}
    corrections = np.zeros(len(hits))
    for text in texts:
        N = float(text.stats.field.doc_count)
        factors = [(names[(text.field, t)],
                    float(boost_weight(text.stats.df[t], N, text.q, text.form)) - 1.0)
                   for t in text.stats.terms]
        factors += [(names[(text.field, j)],
                     text.join_weight * float(boost_weight(df, N, text.q, text.form)))
                    for j, df in text.joins if text.join_weight]
        for i, hit in enumerate(hits):
            got = scores.get((hit["_index"], hit["_id"]), {})
            corrections[i] += sum(factor * got.get(name, 0.0) for name, factor in factors)
    return corrections


@dataclass(frozen=True)
class DocVector:
    """Term frequencies of one hit's field and its length in tokens."""

    tf: Mapping[str, int]
    length: int


@dataclass(frozen=True)
class ScoredText:
    """One analyzed (field, text) of the query with the field's q."""

    field: str
    stats: TextStats
    q: float
    form: str = "lucene"
    joins: tuple[tuple[str, int], ...] = ()  # identifier joins (term, df), scored fully
    join_weight: float = 0.0


def hit_vectors_plan(
    hits: Sequence[Mapping[str, Any]], fields: Sequence[str]
) -> Plan[dict[tuple[str, str], dict[str, DocVector]]]:
    """Term vectors of the hits' fields: {(index, id): {field: DocVector}} in one request."""
    if not hits or not fields:
        return {}
    docs = []
    for hit in hits:
        doc: dict[str, Any] = {"_index": hit["_index"], "_id": hit["_id"], "fields": list(fields),
                               "positions": False, "offsets": False, "payloads": False,
                               "term_statistics": False, "field_statistics": False}
        if hit.get("_routing") is not None:
            doc["routing"] = hit["_routing"]
        docs.append(doc)
    body = yield Request("POST", "/_mtermvectors", body={"docs": docs})
    out: dict[tuple[str, str], dict[str, DocVector]] = {}
    for doc in body.get("docs", []):
        per_field: dict[str, DocVector] = {}
        for field_name, vectors in (doc.get("term_vectors") or {}).items():
            tf = {t: int(v.get("term_freq", 0)) for t, v in (vectors.get("terms") or {}).items()}
            per_field[field_name] = DocVector(tf, sum(tf.values()))
        out[(doc["_index"], doc["_id"])] = per_field
    return out


def score_corrections(
    hits: Sequence[Mapping[str, Any]],
    vectors: Mapping[tuple[str, str], Mapping[str, DocVector]],
    texts: Sequence[ScoredText],
    scale: float,
    k1: float = 1.2,
    b: float = 0.75,
) -> np.ndarray:
    """Per hit, the q-log minus native BM25 contribution of all analyzed query terms."""
    corrections = np.zeros(len(hits))
    for text in texts:
        terms = list(text.stats.terms)
        if not terms:
            continue
        n = np.array([text.stats.df[t] for t in terms], dtype=np.float64)
        N = float(text.stats.field.doc_count)
        delta_idf = idf(n, N, text.q, text.form) - idf(n, N, 1.0, "lucene")
        avgdl = text.stats.field.avgdl or 1.0
        for i, hit in enumerate(hits):
            vector = vectors.get((hit["_index"], hit["_id"]), {}).get(text.field)
            if vector is None:
                continue
            tf = np.array([vector.tf.get(t, 0) for t in terms], dtype=np.float64)
            tfn = bm25_tf_norm(tf, vector.length, avgdl, k1, b)
            corrections[i] += scale * float(np.dot(delta_idf, tfn))
            corrections[i] += scale * _join_score(text, vector, N, avgdl, k1, b)
    return corrections


def _join_score(text: ScoredText, vector: DocVector, N: float, avgdl: float, k1: float,
                b: float) -> float:
    """Full q-log BM25 of the join terms (the native score has none), times their weight."""
    if not text.joins or not text.join_weight:
        return 0.0
    n = np.array([df for _, df in text.joins], dtype=np.float64)
    tf = np.array([vector.tf.get(t, 0) for t, _ in text.joins], dtype=np.float64)
    contribution = idf(n, N, text.q, text.form) * bm25_tf_norm(tf, vector.length, avgdl, k1, b)
    return text.join_weight * float(contribution.sum())


def reorder_hits(
    hits: Sequence[Mapping[str, Any]], corrections: np.ndarray
) -> list[dict[str, Any]]:
    """Hits with corrected scores, best first; ties keep the engine's order (stable sort)."""
    rescored = []
    for hit, delta in zip(hits, corrections, strict=True):
        new = dict(hit)
        base = hit.get("_score")
        new["_score"] = float(base) + float(delta) if base is not None else float(delta)
        rescored.append(new)
    order = sorted(range(len(rescored)), key=lambda i: -rescored[i]["_score"])
    return [rescored[i] for i in order]
