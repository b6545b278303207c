"""The two rerank corrections, side by side: how far a hit's native score moves.

Both add, per query term, the difference between the q-log and the native BM25 contribution:

* from the engine's own per-term scores (``named_score_corrections``): a term scored ``s``
  natively (idf * tfnorm, with the engine's norms) contributes ``boost_weight * s``, so the
  correction is ``(boost_weight - 1) * s``; exact;
* from term vectors (``score_corrections``): ``scale * (idf_q - idf) * tfnorm(tf, dl)``,
  with the hit's token count rounded as Lucene's norms round it (esqlog.scoring.norms), so
  the length is the one the engine scored with; exact too.

``boost_weight = idf_q / idf`` (esqlog.scoring.qlog), so both are the same formula written for two
inputs. Identifier joins have no native clause: they add ``w * boost_weight * s`` (or
``w * idf_q * tfnorm``) in full. At q = 1 every correction is 0 and the native order stays.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from esqlog.scoring.norms import lucene_length
from esqlog.scoring.qlog import bm25_tf_norm, boost_weight, idf
from esqlog.statistics.terms import TextStats

#: prefix of the query names esqlog gives term clauses (removed from responses again)
NAME_PREFIX = "esqlog#"


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


def named_terms(texts: Sequence[ScoredText]) -> dict[str, tuple[str, str]]:
    """A short, unique query name for every distinct (field, term) of the texts and joins."""
    pairs = dict.fromkeys(
        (t.field, term) for t in texts for term in (*t.stats.terms, *(j for j, _ in t.joins))
    )
    return {f"{NAME_PREFIX}{i}": pair for i, pair in enumerate(pairs)}


def term_names(texts: Sequence[ScoredText]) -> dict[tuple[str, str], str]:
    """(field, term) -> the query name its clause carries (see _named_terms)."""
    return {pair: name for name, pair in named_terms(texts).items()}


def named_score_corrections(
    hits: Sequence[Mapping[str, Any]],
    scores: Mapping[tuple[str, str], Mapping[str, float]],
    texts: Sequence[ScoredText],
) -> np.ndarray:
    """Per hit: sum over query terms of (idf_q/idf - 1) * the engine's term score, plus the
    joins' w * idf_q/idf * score (the native query has no join clauses)."""
    names = {pair: name for name, pair in named_terms(texts).items()}
    corrections = np.zeros(len(hits))
    for text in texts:
        N = float(text.stats.field.doc_count)
        factors = [
            (
                names[(text.field, t)],
                float(boost_weight(text.stats.df[t], N, text.q, text.form)) - 1.0,
            )
            for t in text.stats.terms
        ]
        factors += [
            (
                names[(text.field, j)],
                text.join_weight * float(boost_weight(df, N, text.q, text.form)),
            )
            for j, df in text.joins
            if text.join_weight
        ]
        for i, hit in enumerate(hits):
            got = scores.get((hit["_index"], hit["_id"]), {})
            corrections[i] += sum(factor * got.get(name, 0.0) for name, factor in factors)
    return corrections


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
            dl = lucene_length(vector.length)  # the length the engine scored the hit with
            tf = np.array([vector.tf.get(t, 0) for t in terms], dtype=np.float64)
            tfn = bm25_tf_norm(tf, dl, avgdl, k1, b)
            corrections[i] += scale * float(np.dot(delta_idf, tfn))
            corrections[i] += scale * _join_score(text, vector.tf, dl, N, avgdl, k1, b)
    return corrections


def _join_score(
    text: ScoredText,
    tfs: Mapping[str, int],
    dl: int,
    N: float,
    avgdl: float,
    k1: float,
    b: float,
) -> float:
    """Full q-log BM25 of the join terms (the native score has none), times their weight,
    in a hit of term frequencies ``tfs`` and engine length ``dl``."""
    if not text.joins or not text.join_weight:
        return 0.0
    n = np.array([df for _, df in text.joins], dtype=np.float64)
    tf = np.array([tfs.get(t, 0) for t, _ in text.joins], dtype=np.float64)
    contribution = idf(n, N, text.q, text.form) * bm25_tf_norm(tf, dl, avgdl, k1, b)
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
