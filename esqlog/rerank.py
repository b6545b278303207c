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
