"""Rerank: rescore the engine's native top-N hits with q-log BM25.

For clusters where neither scripts nor per-term boosts fit (or to try q without touching
queries), esqlog runs the query natively and moves each hit's score by the difference
between the q-log and the native BM25 contribution of every analyzed query term. At q = 1
the correction is exactly 0, so the native order is kept. Other clauses of a bool query keep
their native contribution.

* :mod:`esqlog.rerank.scoring`: the two correction formulas (from per-term scores, from
  term vectors) side by side, and the reordering;
* :mod:`esqlog.rerank.requests`: the follow-up requests that fetch those inputs;
* :mod:`esqlog.rerank.strategies`: the four ways a rerank runs and the one that chooses;
* :mod:`esqlog.rerank.responses`: the client's own response type, esqlog's names removed.
"""

from __future__ import annotations

from esqlog.rerank.requests import (
    NAMED_SCORES_SINCE,
    hit_vectors_plan,
    supports_named_scores,
    term_scores_plan,
)
from esqlog.rerank.scoring import (
    NAME_PREFIX,
    DocVector,
    ScoredText,
    named_score_corrections,
    reorder_hits,
    score_corrections,
    term_names,
)

__all__ = [
    "NAMED_SCORES_SINCE",
    "NAME_PREFIX",
    "DocVector",
    "ScoredText",
    "hit_vectors_plan",
    "named_score_corrections",
    "reorder_hits",
    "score_corrections",
    "supports_named_scores",
    "term_names",
    "term_scores_plan",
]
