"""Native BM25 against every esqlog mode on one query set with judgments: the numbers
``esqlog bench-beir`` prints, plots and writes (runs, per-query metrics, intervals).

Why every system through esqlog.evaluation.systems (one search per query, the wrapper's own path):
the benchmark is how a user reproduces the paper's table on CoIR, and each row must be what
an application would get from that mode, latency included.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from esqlog.evaluation.metrics import BootstrapResult, compare, mean_metrics, per_query_metrics
from esqlog.evaluation.plots import SystemPoint
from esqlog.evaluation.sweeps import QuerySet
from esqlog.evaluation.systems import SystemRun, Target, run_system, searcher
from esqlog.evaluation.trec import Qrels

#: Metrics when the user names none (ir-measures syntax; the paper's headline is nDCG@10).
DEFAULT_METRICS = ("nDCG@10", "RR@100", "R@10", "R@100")


@dataclass
class BenchResult:
    """Each system's run, per-query metrics, means, interval against native and latency."""

    runs: dict[str, SystemRun] = field(default_factory=dict)
    per_query: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    means: dict[str, dict[str, float]] = field(default_factory=dict)
    diffs: dict[str, dict[str, BootstrapResult]] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)  # system -> why it did not run

    def rows(self, metrics: Sequence[str]) -> list[dict[str, Any]]:
        """One table row per system: means, the first metric's gain with its interval, and
        the median latency."""
        head = metrics[0]
        out = []
        for name, run in self.runs.items():
            row: dict[str, Any] = {"system": name, **self.means[name]}
            diff = self.diffs.get(name, {}).get(head)
            row[f"d{head} [95% CI]"] = (
                f"{diff.mean_diff:+.4f} [{diff.low:+.4f}, {diff.high:+.4f}]" if diff else ""
            )
            row["median ms"] = run.latency_ms(0.5)
            out.append(row)
        return out

    def plot_points(self, metrics: Sequence[str]) -> dict[str, list[SystemPoint]]:
        """Per metric, each system's mean and native's mean + the gain's interval."""
        panels: dict[str, list[SystemPoint]] = {}
        for metric in metrics:
            base = self.means["native"][metric]
            points: list[SystemPoint] = []
            for name in self.runs:
                mean = self.means[name][metric]
                diff = self.diffs.get(name, {}).get(metric)
                low, high = (base + diff.low, base + diff.high) if diff else (mean, mean)
                points.append((name, mean, low, high))
            panels[metric] = points
        return panels

    def to_json(self) -> dict[str, Any]:
        return {
            "means": self.means,
            "skipped": self.skipped,
            "diffs": {s: {m: r.__dict__ for m, r in d.items()} for s, d in self.diffs.items()},
            "latency_ms": {
                s: {"median": r.latency_ms(0.5), "p95": r.latency_ms(0.95)}
                for s, r in self.runs.items()
            },
        }


def benchmark(
    target: Target,
    queries: QuerySet,
    measures: Mapping[str, str],
    systems: Sequence[str],
    resamples: int = 10_000,
    progress: Callable[[str], Callable[[int], None] | None] | None = None,
) -> BenchResult:
    """Run ``systems`` (native first) over ``queries`` and compare each with native."""
    result = BenchResult()
    qrels: Qrels = queries.qrels
    for name in systems:
        bar = progress(name) if progress is not None else None
        run = run_system(name, searcher(target, name), queries.ids, queries.texts, bar)
        result.runs[name] = run
        result.per_query[name] = per_query_metrics(run.run, qrels, None, measures)
        result.means[name] = mean_metrics(result.per_query[name])
    native = result.per_query["native"]
    for name in systems:
        if name != "native":
            result.diffs[name] = compare(
                native, result.per_query[name], list(measures), n_resamples=resamples
            )
    return result
