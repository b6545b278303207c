"""What turning esqlog on would change, from a query log alone (no judgments needed).

Per query: how much of the first page both rankings share (overlap@k), how similar the
rankings are with the top weighted most (rank-biased overlap), whether the first result
changes, and what each search cost. The summary is what a team lead reads before a rollout:
how many users would see a different first result, which queries move most, what it costs.
Pure functions over rankings esqlog.evaluation.systems produced.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from esqlog.evaluation.overlap import DEFAULT_P, overlap_at, rbo_ext
from esqlog.evaluation.systems import SystemRun


@dataclass(frozen=True)
class QueryChange:
    """One query: native vs esqlog."""

    qid: str
    text: str
    overlap: float
    rbo: float
    first_changed: bool
    native_first: str | None
    esqlog_first: str | None
    native_ms: float
    esqlog_ms: float


@dataclass(frozen=True)
class Summary:
    """The whole log: means, counts and latency quantiles (milliseconds)."""

    queries: int
    k: int
    p: float
    mean_overlap: float
    mean_rbo: float
    median_rbo: float
    first_changed: int
    no_overlap: int
    identical_top: int
    native_ms_median: float
    native_ms_p95: float
    esqlog_ms_median: float
    esqlog_ms_p95: float

    @property
    def latency_ratio(self) -> float:
        """esqlog's median latency over native's (1.12 = 12% slower)."""
        if self.native_ms_median <= 0:
            return float("nan")
        return self.esqlog_ms_median / self.native_ms_median


def changes(
    native: SystemRun, esqlog: SystemRun, texts: Sequence[str], k: int = 10, p: float = DEFAULT_P
) -> list[QueryChange]:
    """Per-query comparison of two runs over the same queries, in query order.

    RBO is computed over the depth both systems were asked for (the runs' full lists), so
    the top ``k`` weigh most but a page-2 reshuffle still counts a little.
    """
    out: list[QueryChange] = []
    qids = list(native.run)
    for i, qid in enumerate(qids):
        a = [d for d, _s in native.run[qid]]
        b = [d for d, _s in esqlog.run.get(qid, [])]
        out.append(
            QueryChange(
                qid,
                texts[i],
                overlap_at(a, b, k),
                rbo_ext(a, b, p),
                (a[:1] != b[:1]),
                a[0] if a else None,
                b[0] if b else None,
                native.seconds[i] * 1000,
                esqlog.seconds[i] * 1000,
            )
        )
    return out


def _p95(values: Sequence[float]) -> float:
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=20, method="inclusive")[-1]


def summarize(rows: Sequence[QueryChange], k: int, p: float) -> Summary:
    """Means, counts and latency quantiles of :func:`changes` rows (at least one)."""
    if not rows:
        raise ValueError("no queries to summarize")
    native_ms = [r.native_ms for r in rows]
    esqlog_ms = [r.esqlog_ms for r in rows]
    return Summary(
        queries=len(rows),
        k=k,
        p=p,
        mean_overlap=statistics.fmean(r.overlap for r in rows),
        mean_rbo=statistics.fmean(r.rbo for r in rows),
        median_rbo=statistics.median(r.rbo for r in rows),
        first_changed=sum(r.first_changed for r in rows),
        no_overlap=sum(r.overlap == 0.0 for r in rows),
        identical_top=sum(r.overlap == 1.0 and not r.first_changed for r in rows),
        native_ms_median=statistics.median(native_ms),
        native_ms_p95=_p95(native_ms),
        esqlog_ms_median=statistics.median(esqlog_ms),
        esqlog_ms_p95=_p95(esqlog_ms),
    )


def most_changed(rows: Sequence[QueryChange], count: int = 10) -> list[QueryChange]:
    """The queries whose rankings changed most: lowest RBO first, then lowest overlap."""
    return sorted(rows, key=lambda r: (r.rbo, r.overlap, r.qid))[:count]


def as_json(summary: Summary, rows: Sequence[QueryChange], shown: int) -> dict[str, Any]:
    """The report as one JSON-ready object (every query, and the most changed)."""
    return {
        "summary": {**asdict(summary), "latency_ratio": summary.latency_ratio},
        "most_changed": [r.qid for r in most_changed(rows, shown)],
        "queries": [asdict(r) for r in rows],
    }


def headline(s: Summary) -> list[str]:
    """The summary as sentences (the first lines a reader sees)."""
    share = s.first_changed / s.queries
    return [
        f"{s.first_changed:,} of {s.queries:,} queries ({share:.0%}) would show a different "
        "first result.",
        f"On average {s.mean_overlap:.0%} of the top {s.k} stay the same (overlap@{s.k}); "
        f"{s.no_overlap:,} queries share none of their top {s.k}, "
        f"{s.identical_top:,} keep the same top {s.k} set and first result.",
        f"Rank-biased overlap (p = {s.p:g}): mean {s.mean_rbo:.3f}, median "
        f"{s.median_rbo:.3f} (1 = identical rankings).",
        f"Latency per search: native median {s.native_ms_median:.1f} ms (p95 "
        f"{s.native_ms_p95:.1f}), esqlog median {s.esqlog_ms_median:.1f} ms (p95 "
        f"{s.esqlog_ms_p95:.1f}): {s.latency_ratio:.2f}x.",
    ]
