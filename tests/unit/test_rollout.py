"""The label-free rollout report (esqlog.evaluation.rollout) on hand-built runs with known
answers."""

from __future__ import annotations

import pytest

from esqlog.evaluation.overlap import rbo_ext
from esqlog.evaluation.rollout import changes, headline, most_changed, summarize
from esqlog.evaluation.systems import SystemRun


def _run(name: str, rankings: dict[str, str], ms: list[float]) -> SystemRun:
    return SystemRun(
        name,
        {q: [(d, 10.0 - i) for i, d in enumerate(r.split())] for q, r in rankings.items()},
        [m / 1000 for m in ms],
    )


NATIVE = _run("native", {"a": "d1 d2 d3", "b": "d4 d5 d6", "c": "d7 d8"}, [10, 20, 30])
ESQLOG = _run("boost", {"a": "d1 d2 d3", "b": "d6 d5 d4", "c": "d9 d10"}, [12, 22, 60])


def test_per_query_changes() -> None:
    rows = changes(NATIVE, ESQLOG, ["x", "y", "z"], k=3, p=0.9)
    a, b, c = rows
    assert (a.overlap, a.rbo, a.first_changed) == (1.0, pytest.approx(1.0), False)
    assert b.overlap == 1.0 and b.first_changed and (b.native_first, b.esqlog_first) == ("d4", "d6")
    assert b.rbo == pytest.approx(rbo_ext(["d4", "d5", "d6"], ["d6", "d5", "d4"], 0.9))
    assert (c.overlap, c.rbo) == (0.0, 0.0)
    assert (c.native_ms, c.esqlog_ms) == (pytest.approx(30.0), pytest.approx(60.0))


def test_summary_counts_and_latency() -> None:
    rows = changes(NATIVE, ESQLOG, ["x", "y", "z"], k=3, p=0.9)
    s = summarize(rows, 3, 0.9)
    assert (s.queries, s.first_changed, s.no_overlap, s.identical_top) == (3, 2, 1, 1)
    assert s.mean_overlap == pytest.approx(2 / 3)
    assert s.native_ms_median == pytest.approx(20.0) and s.esqlog_ms_median == pytest.approx(22.0)
    assert s.latency_ratio == pytest.approx(1.1)
    assert [r.qid for r in most_changed(rows, 2)] == ["c", "b"]
    text = "\n".join(headline(s))
    assert "2 of 3 queries (67%) would show a different first result." in text
    assert "1.10x" in text
    with pytest.raises(ValueError):
        summarize([], 3, 0.9)
