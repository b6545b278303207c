"""Shared by several test modules (from tests/test_modes_engine.py):
no test module imports another."""

from __future__ import annotations

from typing import Any

from tests.support.oracle import (
    Corpus,
    hits_of,
    rel_close,
    total_of,
)

Q_LOW = 0.6


def check_against_oracle(
    corpus: Corpus, got: Any, oracle: dict[str, float], size: int, context: Any
) -> None:
    hits = hits_of(got)
    assert total_of(got) == len(oracle), context  # the same matching documents
    best = sorted(oracle.values(), reverse=True)[:size]
    assert len(hits) == len(best), context
    for (doc_id, score), want in zip(hits, best, strict=True):
        assert rel_close(score, oracle[doc_id], 1e-4), (context, doc_id, score, oracle[doc_id])
        assert rel_close(score, want, 1e-4), (context, hits, best)
