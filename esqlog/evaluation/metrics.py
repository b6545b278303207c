"""Evaluation: per-query metrics, paired bootstrap and plots (TREC files: esqlog.evaluation.trec;
tables and regression checks: esqlog.evaluation.reports).

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

import contextlib
import math
import re
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from esqlog.evaluation.trec import (
    Qrels,
    Run,
)

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
    """Doc ids in trec_eval's order: score descending, equal scores by doc id descending.

    Used where esqlog itself walks a ranking (the token budget). Equal scores are true
    ties (Lucene orders them by its internal doc number, an accident of indexing), and
    trec_eval re-sorts every run this way. A doc retrieved twice counts once, at its best
    score.
    """
    return list(_scores(hits))


def _scores(hits: Sequence[tuple[str, float]]) -> dict[str, float]:
    """doc id -> score, each doc once (its first, best-ranked score), in trec_eval order."""
    first: dict[str, float] = {}
    for doc_id, score in hits:
        first.setdefault(doc_id, float(score))
    return dict(sorted(first.items(), key=lambda item: (item[1], item[0]), reverse=True))


def _run_scores(run: Run) -> dict[str, dict[str, float]]:
    """The run as ir-measures input: the engine's own scores, unchanged.

    Why the scores and not the list order: every metric is then exactly what ir-measures
    computes from the TREC run file esqlog writes (``--trec-dir``), ties included. Ties are
    broken by the tool that computes each measure: trec_eval's (nDCG, R, P, AP) orders
    equal scores by doc id descending, ir-measures' msmarco provider (RR@k) ascending.
    """
    return {qid: _scores(hits) for qid, hits in run.items()}


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """File descriptor 2 to /dev/null: some ir-measures providers run external programs
    (gdeval is perl) whose complaints would otherwise reach the user's terminal raw."""
    import os

    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def metric_measures(names: Sequence[str], sample: Qrels | None = None) -> dict[str, str]:
    """Metric names as the user wrote them -> the ir-measures measure each is computed with.

    Accepts ir-measures syntax (``nDCG@10``, ``R@100``, ``RR@10``, ``P@5``, ``AP``,
    ``nDCG(gains={0:0,1:1,2:3})@10``), esqlog's own names (``NDCG@10``, ``MRR@100``,
    ``Recall@10``) and ``Recall@8K-tokens`` (mapped to itself: computed here). Raises
    ValueError naming the first name ir-measures cannot parse, or cannot compute on
    ``sample`` (one query's judgments of the user's own, so a provider's limits on ids show
    before any search: gdeval's ERR wants numeric query ids).
    """
    import ir_measures

    out: dict[str, str] = {}
    for raw in names:
        name = raw.strip()
        if name == TOKEN_METRIC:
            out[name] = name
            continue
        measure = IR_MEASURES.get(name, name)
        try:
            parsed = ir_measures.parse_measure(measure)
        except (ValueError, TypeError, SyntaxError, KeyError, NameError, AttributeError):
            raise ValueError(f"unknown metric {raw!r}") from None
        probe = sample or {"1": {"d1": 1, "d2": 0}}
        run = {
            qid: {d: float(i + 1) for i, d in enumerate(judged)} for qid, judged in probe.items()
        }
        try:  # a name ir-measures parses may have no installed provider, or one with limits
            with _quiet_stderr():
                ir_measures.calc_aggregate([parsed], probe, run)
        except Exception as exc:
            raise ValueError(
                f"metric {raw!r} cannot be computed by the installed "
                f"ir-measures providers on these ids ({type(exc).__name__})"
            ) from None
        out[name] = measure
    return out


def _ir_measures_metrics(run: Run, qrels: Qrels, measures: Mapping[str, str]) -> PerQuery:
    """The ir-measures metrics for the queries of ``qrels`` that ir-measures reports."""
    import ir_measures

    by_measure: dict[Any, list[str]] = {}
    for name, m in measures.items():
        if m != TOKEN_METRIC:
            by_measure.setdefault(ir_measures.parse_measure(m), []).append(name)
    scored = {qid: hits for qid, hits in _run_scores(run).items() if qid in qrels and hits}
    out: PerQuery = {}
    if not scored or not by_measure:
        return out
    try:
        for metric in ir_measures.iter_calc(list(by_measure), qrels, scored):
            if metric.query_id in qrels:
                for name in by_measure.get(metric.measure, []):
                    out.setdefault(metric.query_id, {})[name] = float(metric.value)
    except Exception as exc:  # a provider's own limits (gdeval wants numeric query ids)
        from esqlog.errors import UsageError

        names = ", ".join(n for ns in by_measure.values() for n in ns)
        raise UsageError(
            f"ir-measures could not compute {names} on these judgments ({type(exc).__name__})",
            "pick other metrics: nDCG@k, R@k, P@k, AP and RR@k work on any ids",
        ) from None
    return out


def per_query_metrics(
    run: Run,
    qrels: Qrels,
    doc_tokens: Mapping[str, int] | None = None,
    measures: Mapping[str, str] | None = None,
) -> PerQuery:
    """Per-query metrics: by default NDCG@10, MRR@100, Recall@10, Recall@100 and (given
    token counts) Recall@8K-tokens; else ``measures`` (see :func:`metric_measures`).

    Every qid of ``qrels`` gets every metric: ir-measures leaves out queries the run has
    no hits for, and dropping them would inflate the mean of a system that fails on hard
    queries, so they score 0 (trec_eval's ``-c``). Run queries absent from ``qrels`` are
    ignored. Without ``doc_tokens`` the token-budget metric is not computed.
    """
    if measures is None:
        token = {TOKEN_METRIC: TOKEN_METRIC} if doc_tokens is not None else {}
        measures = {**IR_MEASURES, **token}
    computed = _ir_measures_metrics(run, qrels, measures)
    names = [n for n in measures if measures[n] != TOKEN_METRIC or doc_tokens is not None]
    out: PerQuery = {}
    for qid, judged in qrels.items():
        row = {name: computed.get(qid, {}).get(name, 0.0) for name in names}
        if doc_tokens is not None and TOKEN_METRIC in measures.values():
            ranked = _unique_ranked_ids(run.get(qid, []))
            gold = [doc_id for doc_id, rel in judged.items() if rel > 0]
            value = recall_at_token_budget(ranked, gold, doc_tokens)
            row.update({n: value for n in names if measures[n] == TOKEN_METRIC})
        out[qid] = row
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
