"""Recall at token budgets: does the gold chunk reach the agent within B tokens?

The paper behind esqlog reports "Recall@K-tokens": the share of queries whose gold document
appears within a K-token context budget filled with hits in rank order (CSN Go, 8K tokens:
48.1% -> 68.8%). Here the budget is filled by the very packer ``esqlog mcp``'s search_code
uses (esqlog.agent.code_search.pack_ranks) with the same token counter, so Recall@B is the
share of queries for which ``search_code(query, max_tokens=B)`` shows the gold chunk; costs
include each chunk's header line and the answer's summary line, as the agent pays them.

Two more numbers per query come from the same costs:

* ``tokens_to_gold``: the smallest budget at which the packer keeps EVERY hit down to the
  gold (cost of ranks 1..r plus the summary reserve): the context an agent reads before it
  sees the gold. It is also the paper's stricter "prefix" reading: stop at the first hit
  that does not fit. search_code skips a hit that does not fit and tries later ones, so its
  recall is never below the prefix recall ``tokens_to_gold <= B``; both are reported.
* whether the gold was retrieved at all within the search's ``limit``.

Ties: hits with equal scores are put in trec_eval's order (score descending, then doc id
descending) before packing, as esqlog's other metrics do; Lucene's own order among equal
scores is an accident of indexing, and a metric must not depend on it. Everything here is
I/O-free except :func:`search_chunks` (one read-only search).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from esqlog.agent.chunks import Chunk, chunk_of
from esqlog.agent.code_search import search_kwargs
from esqlog.agent.packing import SUMMARY_RESERVE, chunk_cost, pack_ranks
from esqlog.agent.queries import agent_query, named_symbols
from esqlog.agent.scope import Scope
from esqlog.agent.tokens import TokenCounter

#: the budgets an agent asks for, from a short answer to a large context (tokens)
BUDGETS: tuple[int, ...] = (1_000, 2_000, 4_000, 8_000, 16_000, 32_000)


@dataclass(frozen=True)
class BudgetOutcome:
    """One query's result under one system: where the gold came, what reaching it costs."""

    qid: str
    gold_rank: int | None  # 1-based, None when not among the retrieved hits
    tokens_to_gold: float  # math.inf when not retrieved
    shown: Mapping[int, bool]  # budget -> gold in search_code's answer at that budget

    def prefix(self, budget: int) -> bool:
        """The paper's reading: every hit down to the gold fits within ``budget``."""
        return self.tokens_to_gold <= budget


def ordered(hits: Iterable[tuple[Chunk, float]]) -> list[Chunk]:
    """Chunks by score, ties in trec_eval's order (doc id descending), each id once."""
    best: dict[str, tuple[Chunk, float]] = {}
    for chunk, score in hits:
        if chunk.id not in best:
            best[chunk.id] = (chunk, float(score))
    ranked = sorted(best.values(), key=lambda pair: (pair[1], pair[0].id), reverse=True)
    return [chunk for chunk, _ in ranked]


def cached(counter: TokenCounter) -> TokenCounter:
    """The same counter, memoised: every budget re-counts the same chunk blocks."""
    return TokenCounter(counter.name, functools.lru_cache(maxsize=8192)(counter.count))


def budget_outcome(
    qid: str,
    chunks: Sequence[Chunk],
    gold: str,
    counter: TokenCounter,
    budgets: Sequence[int] = BUDGETS,
) -> BudgetOutcome:
    """Where ``gold`` lands in ``chunks`` (already ranked) and whether each budget shows it.

    The packer is run for every budget (not inferred from a prefix sum): its skip-and-retry
    selection and its final re-count make the shown set non-monotone in the budget, and the
    point is to score exactly what search_code answers.
    """
    rank = next((i for i, c in enumerate(chunks, start=1) if c.id == gold), None)
    if rank is None:
        return BudgetOutcome(qid, None, math.inf, {b: False for b in budgets})
    cost = sum(chunk_cost(chunks[i - 1], i, counter) for i in range(1, rank + 1))
    shown = {b: rank in pack_ranks(chunks, b, counter)[1] for b in budgets}
    return BudgetOutcome(qid, rank, cost + SUMMARY_RESERVE, shown)


def evaluate_budgets(
    search: Callable[[str], Sequence[Chunk]],
    queries: Sequence[tuple[str, str, str]],
    counter: TokenCounter,
    budgets: Sequence[int] = BUDGETS,
    progress: Callable[[int], None] | None = None,
) -> list[BudgetOutcome]:
    """One outcome per (qid, text, gold) query; ``search(text)`` returns ranked chunks."""
    counted = cached(counter)
    out = []
    for done, (qid, text, gold) in enumerate(queries, start=1):
        out.append(budget_outcome(qid, search(text), gold, counted, budgets))
        if progress is not None:
            progress(done)
    return out


def search_chunks(
    client: Any, flavor: str, index: str, field: str, text: str, limit: int
) -> list[Chunk]:
    """search_code's own request (a match on ``field`` of the text as search_code prepares
    it, esqlog.agent.queries, the definitions of the names it spells first; ``limit`` hits,
    the default scope), ranked by :func:`ordered`;
    ``client`` is a wrapped (esqlog) or plain client."""
    response = client.search(
        **search_kwargs(
            flavor, index, field, agent_query(text) or text, limit, Scope(), named_symbols(text)
        )
    )
    hits = response["hits"]["hits"]
    return ordered((chunk_of(h, field), h.get("_score") or 0.0) for h in hits)


# --------------------------------------------------------------------------- summaries


def bootstrap_interval(
    values: Sequence[float],
    statistic: Callable[..., Any],
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile interval of ``statistic`` over queries resampled with replacement.

    Percentile rather than BCa (esqlog.evaluation.metrics.paired_bootstrap's choice) because the
    token medians hold ``inf`` (gold never retrieved), where BCa's jackknife is undefined;
    the interval ends are taken as order statistics, never interpolated, so ``inf`` stays
    ``inf`` instead of turning into NaN.
    """
    import numpy as np

    arr = np.asarray(values, dtype=np.float64)
    if arr.size == 0:
        raise ValueError("a bootstrap interval needs at least one query")
    rng = np.random.default_rng(seed)
    stats = np.asarray(
        [statistic(arr[rng.integers(0, arr.size, arr.size)]) for _ in range(n_resamples)]
    )
    tail = (1.0 - confidence) / 2.0 * 100.0
    return (
        float(np.percentile(stats, tail, method="lower")),
        float(np.percentile(stats, 100.0 - tail, method="higher")),
    )


def lower_median(values: Any) -> float:
    """The lower median: an observed value (a budget an agent could set), inf-safe."""
    import numpy as np

    arr = np.sort(np.asarray(values, dtype=np.float64))
    return float(arr[(arr.size - 1) // 2])


def summarize(
    outcomes: Mapping[str, Sequence[BudgetOutcome]],
    baseline: str | None = None,
    budgets: Sequence[int] = BUDGETS,
    n_resamples: int = 2000,
    seed: int = 0,
) -> dict[str, dict[str, Any]]:
    """Per system: Recall@B (search_code) and prefix recall with 95% intervals, the gain
    over ``baseline`` (paired bootstrap, esqlog.evaluation.metrics), the median tokens to the gold.

    Every system must cover the same queries in the same order (pairing needs it).
    """
    from esqlog.evaluation.metrics import paired_bootstrap

    qids = {name: [o.qid for o in rows] for name, rows in outcomes.items()}
    if len({tuple(v) for v in qids.values()}) > 1:
        raise ValueError("systems cover different queries; evaluate them on one query list")
    out: dict[str, dict[str, Any]] = {}
    for name, rows in outcomes.items():
        entry: dict[str, Any] = {"n": len(rows), "recall": {}, "prefix": {}, "gain": {}}
        for b in budgets:
            shown = [float(o.shown[b]) for o in rows]
            entry["recall"][b] = _mean_ci(shown, n_resamples, seed)
            entry["prefix"][b] = _mean_ci([float(o.prefix(b)) for o in rows], n_resamples, seed)
            if baseline is not None and baseline != name and baseline in outcomes:
                base = [float(o.shown[b]) for o in outcomes[baseline]]
                diff = paired_bootstrap(base, shown, n_resamples=n_resamples, seed=seed)
                entry["gain"][b] = [diff.mean_diff, diff.low, diff.high]
        tokens = [o.tokens_to_gold for o in rows]
        entry["median_tokens"] = [
            lower_median(tokens),
            *bootstrap_interval(tokens, lower_median, n_resamples, seed=seed),
        ]
        entry["retrieved"] = sum(o.gold_rank is not None for o in rows) / max(len(rows), 1)
        out[name] = entry
    return out


def _mean_ci(values: list[float], n_resamples: int, seed: int) -> list[float]:
    import numpy as np

    low, high = bootstrap_interval(values, np.mean, n_resamples, seed=seed)
    return [float(np.mean(values)), low, high]
