"""The Recall@B-tokens metric itself (scripts/bench/budget_recall.py), with no cluster.

A word counter makes every cost readable: a chunk without path or symbol costs its header
line's 5 words ("--- [r] id=x lines=a-b tokens=1000000") plus its text's words, and the
packer keeps SUMMARY_RESERVE (80) free for the summary line.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from esqlog.agent.chunks import Chunk
from esqlog.agent.packing import SUMMARY_RESERVE, chunk_cost, pack, pack_ranks
from esqlog.agent.tokens import TokenCounter
from scripts.bench.budget_recall import (
    BudgetOutcome,
    bootstrap_interval,
    budget_outcome,
    evaluate_budgets,
    lower_median,
    ordered,
    summarize,
)

WORDS = TokenCounter("words", lambda text: len(text.split()))
HEADER = 5


def chunk(id: str, words: int) -> Chunk:
    return Chunk(id=id, text=" ".join(["w"] * words), path=None, symbol=None, start_line=1)


def test_costs_are_what_the_packer_counts() -> None:
    assert chunk_cost(chunk("a", 100), 1, WORDS) == HEADER + 100


def test_gold_never_retrieved() -> None:
    out = budget_outcome("q", [chunk("a", 10), chunk("b", 10)], "gold", WORDS)
    assert out.gold_rank is None and out.tokens_to_gold == math.inf
    assert not any(out.shown.values()) and not out.prefix(10**9)


def test_budget_smaller_than_the_first_chunk() -> None:
    gold = chunk("g", 1500)  # costs 1505 + 80 reserve
    out = budget_outcome("q", [gold, chunk("b", 10)], "g", WORDS, budgets=(1000, 1584, 1585))
    assert out.gold_rank == 1
    assert out.tokens_to_gold == HEADER + 1500 + SUMMARY_RESERVE
    assert out.shown == {1000: False, 1584: False, 1585: True}
    assert [out.prefix(b) for b in (1000, 1584, 1585)] == [False, False, True]


def test_search_code_skips_a_big_hit_so_its_recall_beats_the_prefix() -> None:
    chunks = [chunk("big", 3000), chunk("g", 100)]
    out = budget_outcome("q", chunks, "g", WORDS, budgets=(1000, 8000))
    assert out.gold_rank == 2
    assert out.shown == {1000: True, 8000: True}  # the big hit is left out at 1K
    assert not out.prefix(1000) and out.prefix(8000)
    assert out.tokens_to_gold == (HEADER + 3000) + (HEADER + 100) + SUMMARY_RESERVE


def test_shown_is_exactly_what_the_answer_shows() -> None:
    chunks = [chunk(f"c{i}", 40 + 37 * (i % 5)) for i in range(30)]
    for gold in ("c0", "c7", "c19", "c29"):
        out = budget_outcome("q", chunks, gold, WORDS, budgets=(300, 600, 1000, 2000))
        for budget, shown in out.shown.items():
            text, _ = pack(chunks, budget, WORDS)
            assert shown == (f" id={gold} " in text)


def test_tokens_to_gold_is_the_smallest_budget_keeping_every_hit_above_it() -> None:
    chunks = [chunk(f"c{i}", 30 + 11 * i) for i in range(12)]
    out = budget_outcome("q", chunks, "c8", WORDS)
    need = int(out.tokens_to_gold)
    assert pack_ranks(chunks, need, WORDS)[1][:9] == list(range(1, 10))
    assert pack_ranks(chunks, need - 1, WORDS)[1][:9] != list(range(1, 10))


def test_ties_are_broken_by_id_and_duplicates_count_once() -> None:
    a, b, c = chunk("a", 5), chunk("b", 5), chunk("c", 5)
    first = ordered([(a, 2.0), (b, 2.0), (c, 3.0)])
    second = ordered([(b, 2.0), (c, 3.0), (a, 2.0), (b, 1.0)])
    assert [x.id for x in first] == [x.id for x in second] == ["c", "b", "a"]


def test_evaluate_budgets_runs_the_search_per_query() -> None:
    index = {"alpha": [chunk("x", 10), chunk("g1", 10)], "beta": [chunk("y", 10)]}
    seen: list[int] = []
    outs = evaluate_budgets(
        lambda text: index[text],
        [("1", "alpha", "g1"), ("2", "beta", "g2")],
        WORDS,
        budgets=(1000,),
        progress=seen.append,
    )
    assert [o.gold_rank for o in outs] == [2, None]
    assert [o.shown[1000] for o in outs] == [True, False] and seen == [1, 2]


def outcome(qid: str, tokens: float, shown: bool) -> BudgetOutcome:
    rank = None if tokens == math.inf else 1
    return BudgetOutcome(qid, rank, tokens, {1000: shown, 8000: shown or tokens <= 8000})


def test_summarize_means_gains_and_median() -> None:
    base = [
        outcome("a", 500, True),
        outcome("b", 9000, False),
        outcome("c", math.inf, False),
        outcome("d", 3000, False),
    ]
    better = [
        outcome("a", 400, True),
        outcome("b", 700, True),
        outcome("c", 5000, False),
        outcome("d", 3000, False),
    ]
    out = summarize(
        {"native": base, "qlog": better}, baseline="native", budgets=(1000, 8000), n_resamples=500
    )
    assert out["native"]["recall"][8000][0] == pytest.approx(0.5)
    assert out["qlog"]["recall"][1000][0] == pytest.approx(0.5)
    assert out["qlog"]["gain"][1000][0] == pytest.approx(0.25)
    assert out["native"]["gain"] == {}
    assert out["native"]["median_tokens"][0] == pytest.approx(3000)
    assert out["qlog"]["median_tokens"][0] == pytest.approx(700)
    assert out["native"]["retrieved"] == pytest.approx(0.75)
    low, high = out["native"]["recall"][8000][1:]
    assert 0.0 <= low <= 0.5 <= high <= 1.0


def test_summarize_refuses_unpaired_query_lists() -> None:
    with pytest.raises(ValueError, match="different queries"):
        summarize(
            {"a": [outcome("x", 1, True)], "b": [outcome("y", 1, True)]},
            budgets=(1000,),
            n_resamples=10,
        )


def test_median_of_mostly_unreached_queries_is_infinite_not_nan() -> None:
    tokens = [100.0, math.inf, math.inf]
    assert lower_median(tokens) == math.inf
    low, high = bootstrap_interval(tokens, lower_median, n_resamples=200)
    assert low == pytest.approx(100.0) and high == math.inf


def test_bootstrap_interval_of_a_constant_is_that_constant() -> None:
    low, high = bootstrap_interval([1.0] * 20, np.mean, n_resamples=100)
    assert low == pytest.approx(1.0) and high == pytest.approx(1.0)
    with pytest.raises(ValueError):
        bootstrap_interval([], np.mean)


def test_budget_plot_keeps_one_colour_per_system_and_refuses_more(tmp_path: Any) -> None:
    from esqlog.evaluation.plots import PALETTE, plot_budget_recall

    curve = [(1000, 0.2, 0.1, 0.3), (8000, 0.5, 0.4, 0.6)]
    panels = {
        "go (153K docs) | names": {"native": curve, "q-log": curve},
        "go (153K docs) | no-names": {"native": curve},
        "ruby (34K docs) | names": {"identifiers": curve},
    }
    out = plot_budget_recall(
        panels, tmp_path / "r.png", "t", marks={"go (153K docs) | names": [(8000, 0.481)]}
    )
    data = out.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 5_000
    too_many = {"go | names": {f"s{i}": curve for i in range(len(PALETTE) + 1)}}
    with pytest.raises(ValueError, match="colour"):
        plot_budget_recall(too_many, tmp_path / "no.png", "t")
