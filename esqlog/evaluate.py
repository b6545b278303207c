"""Evaluation: per-query metrics, paired bootstrap, TREC run files, plots and regression checks.

Pure functions over rankings other modules produced; nothing here talks to a cluster. The
heavy libraries (ir-measures, scipy, matplotlib, yaml) are imported inside the functions
that need them, so ``import esqlog`` stays light for users who only search.

Metric names used throughout (the keys of every per-query dict):

* ``NDCG@10``, ``MRR@100``, ``Recall@10``, ``Recall@100`` -- computed by ir-measures
  (``nDCG@10``, ``RR@100``, ``R@10``, ``R@100``; trec_eval semantics, linear gains);
* ``Recall@8K-tokens`` -- computed here: how much of the gold set fits into an 8,000-token
  context window filled with hits in rank order (see :func:`recall_at_token_budget`).
"""

from __future__ import annotations

import csv
import io
import math
import re
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from esqlog.atomic import atomic_write

Run = dict[str, list[tuple[str, float]]]
"""qid -> hits in rank order as (doc_id, score); the list order is the ranking."""

Qrels = dict[str, dict[str, int]]
"""qid -> doc_id -> graded relevance; a doc is gold when its grade is > 0."""

PerQuery = dict[str, dict[str, float]]
"""qid -> metric name -> value."""

TOKEN_BUDGET = 8_000
TOKEN_METRIC = "Recall@8K-tokens"

#: Our metric names and the ir-measures measure each one is computed with.
IR_MEASURES: dict[str, str] = {
    "NDCG@10": "nDCG@10",
    "MRR@100": "RR@100",
    "Recall@10": "R@10",
    "Recall@100": "R@100",
}
METRICS: tuple[str, ...] = (*IR_MEASURES, TOKEN_METRIC)

_TOKEN_RE = re.compile(r"[A-Za-z]+|\d+|[^\sA-Za-z\d]")


# --------------------------------------------------------------------------- tokens


def count_tokens(text: str) -> int:
    """Approximate LLM token count of a code snippet, with no tokenizer dependency.

    Counts matches of ``[A-Za-z]+|\\d+|[^\\sA-Za-z\\d]``: each run of letters, each run of
    digits and each punctuation character is one token; whitespace is free. This is a
    stand-in for a BPE tokenizer on code. A real tokenizer splits long identifiers on case
    and digit boundaries (``parseHttpHeader`` is several tokens) and so counts more; the
    approximation is deliberately simple, deterministic and the same for every system
    compared, which is what a budgeted-recall comparison needs.
    """
    return sum(1 for _ in _TOKEN_RE.finditer(text))


def doc_token_counts(docs: Mapping[str, str]) -> dict[str, int]:
    """Token counts for doc_id -> text, ready for :func:`per_query_metrics`."""
    return {doc_id: count_tokens(text) for doc_id, text in docs.items()}


def pack_hits(
    ranked_ids: Iterable[str], doc_tokens: Mapping[str, int], budget: int = TOKEN_BUDGET
) -> list[str]:
    """Doc ids that fit into a context window of ``budget`` tokens, taken in rank order.

    Packing stops at the first hit that does not fit: a retrieval-augmented prompt is
    filled top-down, and skipping a large hit to squeeze in a lower-ranked one would credit
    a system for a ranking it did not produce.
    """
    packed: list[str] = []
    used = 0
    for doc_id in ranked_ids:
        try:
            size = doc_tokens[doc_id]
        except KeyError:
            raise KeyError(f"no token count for retrieved document {doc_id!r}") from None
        if used + size > budget:
            break
        packed.append(doc_id)
        used += size
    return packed


def recall_at_token_budget(
    ranked_ids: Iterable[str],
    gold: Iterable[str],
    doc_tokens: Mapping[str, int],
    budget: int = TOKEN_BUDGET,
) -> float:
    """Fraction of the gold docs that end up inside the token budget (0 with no gold docs)."""
    gold_set = set(gold)
    if not gold_set:
        return 0.0
    packed = set(pack_hits(ranked_ids, doc_tokens, budget))
    return len(gold_set & packed) / len(gold_set)


# --------------------------------------------------------------------------- metrics


def _unique_ranked_ids(hits: Sequence[tuple[str, float]]) -> list[str]:
    """Doc ids in rank order, later duplicates dropped (a doc can only be retrieved once)."""
    seen: set[str] = set()
    out: list[str] = []
    for doc_id, _score in hits:
        if doc_id not in seen:
            seen.add(doc_id)
            out.append(doc_id)
    return out


def _rank_scores(run: Run) -> dict[str, dict[str, float]]:
    """The run as ir-measures input, scored by rank rather than by the engine's score.

    trec_eval re-sorts by score and breaks ties by doc id, which would silently reorder
    equal-scored hits; strictly decreasing rank scores make it evaluate our order exactly.
    """
    out: dict[str, dict[str, float]] = {}
    for qid, hits in run.items():
        ids = _unique_ranked_ids(hits)
        out[qid] = {doc_id: float(len(ids) - rank) for rank, doc_id in enumerate(ids)}
    return out


def _ir_measures_metrics(run: Run, qrels: Qrels) -> PerQuery:
    """The four ir-measures metrics for the queries of ``qrels`` that ir-measures reports."""
    import ir_measures

    by_name = {ir_measures.parse_measure(m): name for name, m in IR_MEASURES.items()}
    scored = {qid: hits for qid, hits in _rank_scores(run).items() if qid in qrels and hits}
    out: PerQuery = {}
    if not scored:
        return out
    for metric in ir_measures.iter_calc(list(by_name), qrels, scored):
        name = by_name.get(metric.measure)
        if name is not None and metric.query_id in qrels:
            out.setdefault(metric.query_id, {})[name] = float(metric.value)
    return out


def per_query_metrics(
    run: Run, qrels: Qrels, doc_tokens: Mapping[str, int] | None = None
) -> PerQuery:
    """Per-query NDCG@10, MRR@100, Recall@10, Recall@100 and (given token counts) Recall@8K.

    Every qid of ``qrels`` gets every metric: ir-measures leaves out queries the run has
    no hits for, and dropping them would inflate the mean of a system that fails on hard
    queries, so they score 0. Run queries absent from ``qrels`` are ignored. Without
    ``doc_tokens`` the token-budget metric is not computed.
    """
    computed = _ir_measures_metrics(run, qrels)
    names = list(IR_MEASURES) + ([TOKEN_METRIC] if doc_tokens is not None else [])
    out: PerQuery = {}
    for qid, judged in qrels.items():
        row = {name: computed.get(qid, {}).get(name, 0.0) for name in IR_MEASURES}
        if doc_tokens is not None:
            ranked = _unique_ranked_ids(run.get(qid, []))
            gold = [doc_id for doc_id, rel in judged.items() if rel > 0]
            row[TOKEN_METRIC] = recall_at_token_budget(ranked, gold, doc_tokens)
        out[qid] = {name: row[name] for name in names}
    return out


def mean_metrics(per_query: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """Macro average of each metric over the queries that have it (empty input -> {})."""
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    for row in per_query.values():
        for name, value in row.items():
            sums[name] = sums.get(name, 0.0) + float(value)
            counts[name] = counts.get(name, 0) + 1
    return {name: sums[name] / counts[name] for name in sums}


# --------------------------------------------------------------------------- bootstrap


@dataclass(frozen=True)
class BootstrapResult:
    """Mean paired difference (system - baseline) with a bootstrap confidence interval.

    ``p_value_like`` is the two-sided share of resampled mean differences on the far side
    of 0 (an achieved-significance level, not a test's exact p-value); it is there to rank
    and flag differences, the interval is the result.
    """

    mean_diff: float
    low: float
    high: float
    p_value_like: float
    n: int
    confidence: float

    @property
    def significant(self) -> bool:
        """True when the interval excludes 0."""
        return self.low > 0.0 or self.high < 0.0


def _mean_paired_diff(a: Any, b: Any, axis: int = -1) -> Any:
    """Statistic for scipy: mean of b - a along ``axis`` (vectorised over resamples)."""
    import numpy as np

    return np.mean(b - a, axis=axis)


def paired_bootstrap(
    a: Sequence[float],
    b: Sequence[float],
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> BootstrapResult:
    """Paired bootstrap CI of mean(b - a) over queries, resampling queries jointly.

    Pairing matters: query difficulty varies far more than systems do, and resampling the
    two systems' scores independently would bury a consistent gain in that variance. Uses
    BCa and falls back to the percentile interval where BCa is undefined. When every
    difference is the same up to rounding (identical systems, or one query) there is
    nothing to resample and the interval is the point (d, d).
    """
    import numpy as np
    from scipy import stats

    a_arr = np.asarray(a, dtype=np.float64)
    b_arr = np.asarray(b, dtype=np.float64)
    if a_arr.shape != b_arr.shape or a_arr.ndim != 1:
        raise ValueError(
            f"paired samples must be 1-D and equally long: {a_arr.shape} vs {b_arr.shape}"
        )
    if a_arr.size == 0:
        raise ValueError("paired bootstrap needs at least one query")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    diffs = b_arr - a_arr
    mean_diff = float(diffs.mean())
    # Differences equal up to rounding (0.3 - 0.1 vs 0.5 - 0.3) count as all equal.
    spread_tol = 1e-12 * max(1.0, float(np.max(np.abs(diffs))))
    if a_arr.size < 2 or float(np.ptp(diffs)) <= spread_tol:
        p = 1.0 if mean_diff == 0.0 else 0.0
        return BootstrapResult(mean_diff, mean_diff, mean_diff, p, int(a_arr.size), confidence)

    def run(method: str) -> Any:
        return stats.bootstrap(
            (a_arr, b_arr),
            _mean_paired_diff,
            paired=True,
            vectorized=True,
            n_resamples=n_resamples,
            confidence_level=confidence,
            method=method,
            rng=np.random.default_rng(seed),
        )

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns before returning NaN for degenerate BCa
        res = run("BCa")
        low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
        if not (math.isfinite(low) and math.isfinite(high)):
            res = run("percentile")
            low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    dist = np.asarray(res.bootstrap_distribution, dtype=np.float64)
    below, above = float(np.mean(dist <= 0.0)), float(np.mean(dist >= 0.0))
    p_value_like = min(1.0, 2.0 * min(below, above))
    return BootstrapResult(mean_diff, low, high, p_value_like, int(a_arr.size), confidence)


def compare(
    per_query_native: Mapping[str, Mapping[str, float]],
    per_query_system: Mapping[str, Mapping[str, float]],
    metrics: Sequence[str] | None = None,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, BootstrapResult]:
    """Paired bootstrap of system - native for each metric, over the same queries.

    The two sides must cover the same qids: comparing on different query sets would mix
    a ranking difference with a sampling difference, so a mismatch is an error rather than
    a silent intersection. ``metrics`` defaults to those every query of both sides has.
    """
    if set(per_query_native) != set(per_query_system):
        missing = sorted(set(per_query_native) ^ set(per_query_system))
        raise ValueError(f"per-query results cover different queries, e.g. {missing[:5]}")
    qids = sorted(per_query_native)
    if metrics is None:
        metrics = _common_metrics([*per_query_native.values(), *per_query_system.values()])
    out: dict[str, BootstrapResult] = {}
    for name in metrics:
        a = [per_query_native[qid][name] for qid in qids]
        b = [per_query_system[qid][name] for qid in qids]
        out[name] = paired_bootstrap(a, b, n_resamples, confidence, seed)
    return out


def _common_metrics(rows: Sequence[Mapping[str, float]]) -> list[str]:
    """Metric names present in every row, in the order of the first row."""
    if not rows:
        return []
    return [name for name in rows[0] if all(name in row for row in rows)]


# --------------------------------------------------------------------------- TREC files


def _check_trec_field(value: str, what: str) -> None:
    """TREC files are whitespace-separated: an id with whitespace would corrupt the file."""
    if not value or any(ch.isspace() for ch in value):
        raise ValueError(
            f"{what} {value!r} is empty or contains whitespace; TREC files cannot hold it"
        )


def write_trec_run(run: Run, path: str | Path, tag: str) -> Path:
    """Write ``qid Q0 doc_id rank score tag`` lines, rank from 1 in list order.

    The list order is kept even where scores tie, so the file reproduces the ranking the
    system returned (readers should sort by rank, not score; :func:`read_trec_run` does).
    """
    _check_trec_field(tag, "run tag")
    buf = io.StringIO()
    for qid, hits in run.items():
        _check_trec_field(qid, "query id")
        for rank, (doc_id, score) in enumerate(hits, start=1):
            _check_trec_field(doc_id, "doc id")
            buf.write(f"{qid} Q0 {doc_id} {rank} {float(score)!r} {tag}\n")
    out = Path(path)
    out.write_text(buf.getvalue(), encoding="utf-8")
    return out


def read_trec_run(path: str | Path) -> Run:
    """Read a TREC run file back into a :data:`Run`, each query's hits sorted by rank."""
    ranked: dict[str, list[tuple[int, str, float]]] = {}
    for lineno, parts in _trec_lines(path):
        if len(parts) != 6:
            raise ValueError(f"{path}:{lineno}: expected 6 fields in a run line, got {len(parts)}")
        qid, _q0, doc_id, rank, score, _tag = parts
        try:
            ranked.setdefault(qid, []).append((int(rank), doc_id, float(score)))
        except ValueError:
            raise ValueError(f"{path}:{lineno}: rank or score is not a number") from None
    return {
        qid: [(doc_id, score) for _rank, doc_id, score in sorted(hits, key=lambda h: h[0])]
        for qid, hits in ranked.items()
    }


def write_trec_qrels(qrels: Qrels, path: str | Path) -> Path:
    """Write ``qid 0 doc_id relevance`` lines (the trec_eval qrels format)."""
    buf = io.StringIO()
    for qid, judged in qrels.items():
        _check_trec_field(qid, "query id")
        for doc_id, rel in judged.items():
            _check_trec_field(doc_id, "doc id")
            buf.write(f"{qid} 0 {doc_id} {int(rel)}\n")
    out = Path(path)
    out.write_text(buf.getvalue(), encoding="utf-8")
    return out


def read_trec_qrels(path: str | Path) -> Qrels:
    """Read a trec_eval qrels file (``qid iteration doc_id relevance``)."""
    qrels: Qrels = {}
    for lineno, parts in _trec_lines(path):
        if len(parts) != 4:
            raise ValueError(
                f"{path}:{lineno}: expected 4 fields in a qrels line, got {len(parts)}"
            )
        qid, _iteration, doc_id, rel = parts
        try:
            qrels.setdefault(qid, {})[doc_id] = int(rel)
        except ValueError:
            raise ValueError(f"{path}:{lineno}: relevance {rel!r} is not an integer") from None
    return qrels


def _trec_lines(path: str | Path) -> Iterable[tuple[int, list[str]]]:
    """Non-blank lines of a TREC file split on whitespace, with 1-based line numbers."""
    text = Path(path).read_text(encoding="utf-8")
    for lineno, line in enumerate(text.splitlines(), start=1):
        parts = line.split()
        if parts:
            yield lineno, parts


# --------------------------------------------------------------------------- plots


def plot_q_sweep(
    curves: Mapping[str, Sequence[tuple[float, float]]],
    predicted: Mapping[str, float],
    path: str | Path,
    metric: str = "NDCG@10",
) -> Path:
    """PNG of ``metric`` against q, one line per corpus, the predicted q marked on each.

    The marker sits on the curve (linear interpolation at the predicted q), so the gap
    between it and the curve's peak is the cost of trusting the label-free predictor.
    Uses the Agg canvas directly, never pyplot, so no display or global state is touched.
    """
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.0, 4.5), dpi=120)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    for corpus, points in curves.items():
        if not points:
            continue
        qs, values = zip(*sorted(points), strict=True)
        (line,) = ax.plot(qs, values, label=corpus, linewidth=1.5)
        if corpus in predicted:
            q_hat = float(predicted[corpus])
            y_hat = float(np.interp(q_hat, qs, values))
            ax.plot(
                [q_hat],
                [y_hat],
                marker="*",
                markersize=13,
                color=line.get_color(),
                markeredgecolor="black",
                linestyle="none",
            )
    ax.set_xlabel("q")
    ax.set_ylabel(metric)
    ax.set_title(f"{metric} against q (star: predicted q)")
    ax.grid(True, alpha=0.3)
    if curves:
        ax.legend(loc="best", fontsize="small")
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return atomic_write(path, buffer.getvalue(), "plot file")  # one line if unwritable


# --------------------------------------------------------------------------- tables


def _cell(value: Any) -> str:
    """Text of one table cell: floats to 4 decimals, missing values as '-'."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.4f}"
    return str(value)


def format_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """Aligned plain-text table for the CLI: numbers right-aligned, text left-aligned.

    Plain text (not rich) so the output is the same in a terminal, a log and a CI diff.
    """
    cells = [[_cell(row.get(col)) for col in columns] for row in rows]
    numeric = [
        all(isinstance(row.get(col), int | float) or row.get(col) is None for row in rows)
        and any(row.get(col) is not None for row in rows)
        for col in columns
    ]
    widths = [max([len(col), *(len(r[i]) for r in cells)]) for i, col in enumerate(columns)]

    def line(values: Sequence[str]) -> str:
        parts = [
            v.rjust(w) if num else v.ljust(w)
            for v, w, num in zip(values, widths, numeric, strict=True)
        ]
        return "  ".join(parts).rstrip()

    out = [line(list(columns)), "  ".join("-" * w for w in widths)]
    out.extend(line(r) for r in cells)
    return "\n".join(out)


def format_csv(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """The same rows as CSV, for spreadsheets (floats at full precision)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow(["" if row.get(col) is None else row.get(col) for col in columns])
    return buf.getvalue()


# --------------------------------------------------------------------------- expectations

_SPEC_KEYS = frozenset({"min", "max", "value", "tol"})
Expectations = dict[str, dict[str, float]]


def load_expectations(path: str | Path) -> Expectations:
    """Read a YAML regression file: ``metric: {min: x}``, ``{max: x}`` or ``{value: x, tol: y}``.

    Validated on load, so a typo in the file fails loudly instead of silently checking
    nothing.
    """
    import yaml

    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping of metric names to checks")
    return {str(name): _parse_spec(path, str(name), spec) for name, spec in data.items()}


def _parse_spec(path: str | Path, name: str, spec: Any) -> dict[str, float]:
    """One metric's check, with every bound a finite number and a known key."""
    if not isinstance(spec, dict) or not spec:
        raise ValueError(f"{path}: {name}: expected a mapping like {{min: 0.3}}")
    unknown = set(map(str, spec)) - _SPEC_KEYS
    if unknown:
        raise ValueError(
            f"{path}: {name}: unknown keys {sorted(unknown)}; use min, max, value, tol"
        )
    if "tol" in spec and "value" not in spec:
        raise ValueError(f"{path}: {name}: tol needs a value")
    out: dict[str, float] = {}
    for key, raw in spec.items():
        if isinstance(raw, bool) or not isinstance(raw, int | float) or not math.isfinite(raw):
            raise ValueError(f"{path}: {name}: {key} must be a finite number, got {raw!r}")
        out[str(key)] = float(raw)
    if out.get("tol", 0.0) < 0:
        raise ValueError(f"{path}: {name}: tol must not be negative")
    return out


def check_expectations(
    measured: Mapping[str, float],
    expected: Mapping[str, Mapping[str, float]] | str | Path,
) -> list[str]:
    """Human-readable failures of ``measured`` against ``expected`` (empty list = pass).

    ``expected`` is what :func:`load_expectations` returns, or the YAML file's path. A
    metric the file names but the run did not produce is a failure: a regression check
    that silently skips is worse than none.
    """
    if isinstance(expected, str | Path):
        expected = load_expectations(expected)
    failures: list[str] = []
    for name, spec in expected.items():
        if name not in measured:
            failures.append(f"{name}: not measured (expected {_describe(spec)})")
            continue
        value = float(measured[name])
        if math.isnan(value):
            failures.append(f"{name}: measured NaN (expected {_describe(spec)})")
            continue
        failures.extend(f"{name}: {msg}" for msg in _violations(value, spec))
    return failures


def _violations(value: float, spec: Mapping[str, float]) -> list[str]:
    """Which bounds of one spec ``value`` breaks."""
    out: list[str] = []
    if "min" in spec and value < spec["min"]:
        out.append(f"{value:.4f} < min {spec['min']:.4f} (short by {spec['min'] - value:.4f})")
    if "max" in spec and value > spec["max"]:
        out.append(f"{value:.4f} > max {spec['max']:.4f} (over by {value - spec['max']:.4f})")
    if "value" in spec:
        target, tol = spec["value"], spec.get("tol", 0.0)
        if abs(value - target) > tol + 1e-12:
            off = value - target
            out.append(f"{value:.4f} is not {target:.4f} ± {tol:.4f} (off by {off:+.4f})")
    return out


def _describe(spec: Mapping[str, float]) -> str:
    """A spec as text for failure messages."""
    parts = []
    if "min" in spec:
        parts.append(f">= {spec['min']:.4f}")
    if "max" in spec:
        parts.append(f"<= {spec['max']:.4f}")
    if "value" in spec:
        parts.append(f"{spec['value']:.4f} ± {spec.get('tol', 0.0):.4f}")
    return ", ".join(parts)
