"""Unit tests for esqlog.evaluation.metrics on hand-built runs whose metric values are known."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from esqlog.evaluation import metrics as ev
from esqlog.evaluation.metrics import (
    METRICS,
    TOKEN_METRIC,
    BootstrapResult,
    compare,
    count_tokens,
    mean_metrics,
    pack_hits,
    paired_bootstrap,
    per_query_metrics,
    recall_at_token_budget,
)
from esqlog.evaluation.plots import plot_q_sweep
from esqlog.evaluation.reports import (
    check_expectations,
    format_csv,
    format_table,
    load_expectations,
)
from esqlog.evaluation.trec import (
    Qrels,
    Run,
    read_trec_qrels,
    read_trec_run,
    write_trec_qrels,
    write_trec_run,
)


def ranked(*ids: str) -> list[tuple[str, float]]:
    """Hits in the given order with decreasing scores."""
    return [(doc_id, float(len(ids) - i)) for i, doc_id in enumerate(ids)]


# --------------------------------------------------------------------------- tokens


class TestTokens:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("", 0),
            ("   \n\t", 0),
            ("foo", 1),
            ("foo bar", 2),
            ("x = 42;", 4),  # x, =, 42, ;
            ("foo_bar", 3),  # foo, _, bar
            ("a1b2", 4),  # a, 1, b, 2
            ("def f(x):\n    return x+1", 10),
            ("parseHttpHeader", 1),  # camelCase is one run of letters (a BPE would split it)
            ("é", 1),  # non-ASCII letter counts as a symbol
        ],
    )
    def test_count_tokens(self, text: str, expected: int) -> None:
        assert count_tokens(text) == expected

    @given(st.text(max_size=200))
    def test_never_more_than_non_space_chars(self, text: str) -> None:
        n = count_tokens(text)
        assert 0 <= n <= sum(1 for c in text if not c.isspace())

    @given(st.text(max_size=100), st.text(max_size=100))
    def test_additive_over_whitespace(self, a: str, b: str) -> None:
        assert count_tokens(a + " " + b) == count_tokens(a) + count_tokens(b)

    def test_doc_token_counts(self) -> None:
        assert ev.doc_token_counts({"a": "x y", "b": ""}) == {"a": 2, "b": 0}


SIZES = {"a": 3000, "b": 4000, "c": 2000, "d": 500, "big": 9000}


class TestPacking:
    def test_packs_in_rank_order_until_full(self) -> None:
        assert pack_hits(["a", "b", "d"], SIZES) == ["a", "b", "d"]

    def test_exact_fit(self) -> None:
        assert pack_hits(["a", "b"], {"a": 4000, "b": 4000}) == ["a", "b"]

    def test_first_hit_that_does_not_fit_ends_packing(self) -> None:
        # a + b = 7000; c (2000) does not fit; d (500) would, but packing has stopped.
        assert pack_hits(["a", "b", "c", "d"], SIZES) == ["a", "b"]

    def test_oversized_top_hit_packs_nothing(self) -> None:
        assert pack_hits(["big", "d"], SIZES) == []

    def test_custom_budget(self) -> None:
        assert pack_hits(["d", "c"], SIZES, budget=1000) == ["d"]

    def test_unknown_doc_is_an_error(self) -> None:
        with pytest.raises(KeyError, match="zzz"):
            pack_hits(["a", "zzz"], SIZES)

    def test_recall_fractions(self) -> None:
        order = ["a", "b", "c", "d"]
        assert recall_at_token_budget(order, ["a"], SIZES) == 1.0
        assert recall_at_token_budget(order, ["a", "c"], SIZES) == 0.5
        assert recall_at_token_budget(order, ["d"], SIZES) == 0.0
        assert recall_at_token_budget(order, ["a", "b", "x", "y"], SIZES) == 0.5
        assert recall_at_token_budget(order, [], SIZES) == 0.0


# --------------------------------------------------------------------------- metrics


QRELS: Qrels = {
    "top": {"g": 1},
    "third": {"g": 1, "n": 0},
    "missing": {"g": 1},
    "nohits": {"g": 1},
    "two": {"g1": 1, "g2": 1},
}
RUN: Run = {
    "top": ranked("g", "x", "y"),
    "third": ranked("x", "n", "g"),
    "missing": ranked("x", "y"),
    # "nohits" absent from the run on purpose
    "two": ranked("g1", *[f"f{i}" for i in range(20)], "g2"),
    "not-judged": ranked("g"),
}


@pytest.fixture(scope="module")
def pq() -> dict[str, dict[str, float]]:
    return per_query_metrics(RUN, QRELS)


class TestPerQueryMetrics:
    def test_every_qrels_query_and_only_those(self, pq: dict[str, dict[str, float]]) -> None:
        assert set(pq) == set(QRELS)

    def test_metric_names(self, pq: dict[str, dict[str, float]]) -> None:
        for row in pq.values():
            assert list(row) == ["NDCG@10", "MRR@100", "Recall@10", "Recall@100"]

    def test_gold_at_rank_one(self, pq: dict[str, dict[str, float]]) -> None:
        assert pq["top"] == {"NDCG@10": 1.0, "MRR@100": 1.0, "Recall@10": 1.0, "Recall@100": 1.0}

    def test_gold_at_rank_three(self, pq: dict[str, dict[str, float]]) -> None:
        assert pq["third"]["NDCG@10"] == pytest.approx(1 / math.log2(4))
        assert pq["third"]["MRR@100"] == pytest.approx(1 / 3)
        assert pq["third"]["Recall@10"] == 1.0

    @pytest.mark.parametrize("qid", ["missing", "nohits"])
    def test_not_retrieved_scores_zero(self, pq: dict[str, dict[str, float]], qid: str) -> None:
        assert pq[qid] == {"NDCG@10": 0.0, "MRR@100": 0.0, "Recall@10": 0.0, "Recall@100": 0.0}

    def test_gold_beyond_ten(self, pq: dict[str, dict[str, float]]) -> None:
        # g1 at rank 1, g2 at rank 22: half found in the top 10, both in the top 100.
        assert pq["two"]["Recall@10"] == 0.5
        assert pq["two"]["Recall@100"] == 1.0
        assert pq["two"]["MRR@100"] == 1.0
        ideal = 1 + 1 / math.log2(3)
        assert pq["two"]["NDCG@10"] == pytest.approx(1 / ideal)

    def test_rr_cut_at_100(self) -> None:
        run = {"q": ranked(*[f"x{i}" for i in range(100)], "g")}
        pq = per_query_metrics(run, {"q": {"g": 1}})
        assert pq["q"]["MRR@100"] == 0.0
        assert pq["q"]["Recall@100"] == 0.0
        run = {"q": ranked(*[f"x{i}" for i in range(99)], "g")}
        assert per_query_metrics(run, {"q": {"g": 1}})["q"]["MRR@100"] == pytest.approx(1 / 100)

    def test_tied_scores_are_broken_as_ir_measures_breaks_them(self) -> None:
        # Equal scores: trec_eval (nDCG, R) orders them by doc id descending ("z" before
        # "a"), ir-measures' msmarco provider (RR@k) ascending; esqlog hands ir-measures the
        # engine's scores, so each metric equals ir-measures on the run file, ties included.
        run = {"q": [("a", 1.0), ("z", 1.0), ("m", 2.0)]}
        pq = per_query_metrics(run, {"q": {"a": 1}})
        assert pq["q"]["MRR@100"] == pytest.approx(1 / 2)  # m, a, z
        assert pq["q"]["NDCG@10"] == pytest.approx(1 / math.log2(4))  # m, z, a
        tokens = {"a": 10, "z": 10, "m": 7985}  # the budget packs in trec_eval's order
        assert per_query_metrics(run, {"q": {"z": 1}}, tokens)["q"]["Recall@8K-tokens"] == 1
        assert per_query_metrics(run, {"q": {"a": 1}}, tokens)["q"]["Recall@8K-tokens"] == 0

    def test_metrics_by_ir_measures_name(self) -> None:
        run = {"q": ranked("b", "a", "c")}
        measures = ev.metric_measures(["nDCG@10", "R@2", "P@1", "NDCG@10"])
        assert measures["NDCG@10"] == "nDCG@10"  # esqlog's own name still understood
        pq = per_query_metrics(run, {"q": {"a": 2, "c": 1}}, measures=measures)
        assert set(pq["q"]) == {"nDCG@10", "R@2", "P@1", "NDCG@10"}
        assert pq["q"]["R@2"] == pytest.approx(0.5)
        assert pq["q"]["P@1"] == pytest.approx(0.0)
        assert pq["q"]["nDCG@10"] == pytest.approx(pq["q"]["NDCG@10"])

    @pytest.mark.parametrize("name", ["nDCG@x", "Bogus@10", "", "R@"])
    def test_unknown_metric_names_are_refused(self, name: str) -> None:
        with pytest.raises(ValueError, match="unknown metric"):
            ev.metric_measures([name])

    def test_duplicate_hits_count_once(self) -> None:
        run = {"q": [("x", 3.0), ("x", 2.0), ("g", 1.0)]}
        pq = per_query_metrics(run, {"q": {"g": 1}})
        assert pq["q"]["MRR@100"] == pytest.approx(1 / 2)

    def test_graded_relevance_uses_linear_gain(self) -> None:
        run = {"q": ranked("b", "a")}
        pq = per_query_metrics(run, {"q": {"a": 2, "b": 1}})
        ideal = 2 + 1 / math.log2(3)
        assert pq["q"]["NDCG@10"] == pytest.approx((1 + 2 / math.log2(3)) / ideal)

    def test_empty_run(self) -> None:
        pq = per_query_metrics({}, {"q": {"g": 1}}, doc_tokens={})
        assert pq == {"q": dict.fromkeys(METRICS, 0.0)}

    def test_token_metric(self) -> None:
        tokens = {"g": 100, "x": 7950, "y": 10, "n": 10, "g1": 10, "g2": 10}
        tokens.update({f"f{i}": 10 for i in range(20)})
        pq = per_query_metrics(RUN, QRELS, doc_tokens=tokens)
        assert list(pq["top"]) == list(METRICS)
        assert pq["top"][TOKEN_METRIC] == 1.0  # g packed first
        assert pq["third"][TOKEN_METRIC] == 0.0  # x fills 7950, n fits, g (100) ends it
        assert pq["two"][TOKEN_METRIC] == 1.0  # 22 hits * 10 tokens
        assert pq["nohits"][TOKEN_METRIC] == 0.0

    def test_token_metric_partial(self) -> None:
        run = {"q": ranked("g1", "big", "g2")}
        pq = per_query_metrics(run, {"q": {"g1": 1, "g2": 1}}, {"g1": 1, "big": 8000, "g2": 1})
        assert pq["q"][TOKEN_METRIC] == 0.5


class TestMeanMetrics:
    def test_macro_average(self) -> None:
        pq = {"a": {"m": 1.0, "k": 0.0}, "b": {"m": 0.0, "k": 0.5}, "c": {"m": 0.5, "k": 1.0}}
        assert mean_metrics(pq) == {"m": pytest.approx(0.5), "k": pytest.approx(0.5)}

    def test_empty(self) -> None:
        assert mean_metrics({}) == {}

    def test_end_to_end(self) -> None:
        means = mean_metrics(per_query_metrics(RUN, QRELS))
        assert means["MRR@100"] == pytest.approx((1 + 1 / 3 + 0 + 0 + 1) / 5)


# --------------------------------------------------------------------------- bootstrap


class TestPairedBootstrap:
    def test_identical_systems(self) -> None:
        a = [0.1, 0.5, 0.9, 0.3, 0.0]
        res = paired_bootstrap(a, a)
        assert res.mean_diff == 0.0
        assert res.low <= 0.0 <= res.high
        assert not res.significant

    def test_constant_shift_is_degenerate_not_a_crash(self) -> None:
        res = paired_bootstrap([0.1, 0.2, 0.3], [0.3, 0.4, 0.5])
        assert res.mean_diff == pytest.approx(0.2)
        assert (res.low, res.high) == (res.mean_diff, res.mean_diff)
        assert res.significant

    def test_single_query(self) -> None:
        res = paired_bootstrap([0.2], [0.7])
        assert res.low == res.high == pytest.approx(0.5)
        assert res.n == 1

    def test_better_on_every_query(self) -> None:
        a = [0.1, 0.4, 0.2, 0.6, 0.3, 0.0, 0.5, 0.2]
        b = [0.3, 0.5, 0.6, 0.7, 0.4, 0.2, 0.9, 0.25]
        res = paired_bootstrap(a, b, n_resamples=2000)
        assert res.mean_diff == pytest.approx(sum(b) / 8 - sum(a) / 8)
        assert 0.0 < res.low <= res.mean_diff <= res.high
        assert res.significant
        assert res.p_value_like < 0.05

    def test_worse_on_every_query_is_below_zero(self) -> None:
        a = [0.3, 0.5, 0.6, 0.7, 0.4, 0.2]
        b = [0.1, 0.4, 0.2, 0.6, 0.3, 0.0]
        res = paired_bootstrap(a, b, n_resamples=2000)
        assert res.high < 0.0

    def test_mixed_differences_cross_zero(self) -> None:
        a = [0.0, 1.0, 0.0, 1.0, 0.5, 0.5]
        b = [1.0, 0.0, 1.0, 0.0, 0.4, 0.6]
        res = paired_bootstrap(a, b, n_resamples=2000)
        assert res.low < 0.0 < res.high
        assert res.p_value_like > 0.5

    def test_pairing_matters(self) -> None:
        """Small consistent gain on queries of very different difficulty: paired sees it."""
        a = [0.0, 0.9, 0.1, 0.8, 0.2, 0.7, 0.3, 0.6]
        b = [x + 0.05 + 0.01 * (i % 2) for i, x in enumerate(a)]
        assert paired_bootstrap(a, b, n_resamples=2000).low > 0.0

    def test_reproducible_with_seed(self) -> None:
        a = [0.1, 0.4, 0.2, 0.6, 0.3, 0.0, 0.5]
        b = [0.3, 0.2, 0.6, 0.7, 0.1, 0.2, 0.9]
        r1 = paired_bootstrap(a, b, n_resamples=1000, seed=7)
        r2 = paired_bootstrap(a, b, n_resamples=1000, seed=7)
        r3 = paired_bootstrap(a, b, n_resamples=1000, seed=8)
        assert r1 == r2
        assert (r1.low, r1.high) != (r3.low, r3.high)

    def test_wider_at_higher_confidence(self) -> None:
        a = [0.1, 0.4, 0.2, 0.6, 0.3, 0.0, 0.5]
        b = [0.3, 0.2, 0.6, 0.7, 0.1, 0.2, 0.9]
        r90 = paired_bootstrap(a, b, n_resamples=2000, confidence=0.90)
        r99 = paired_bootstrap(a, b, n_resamples=2000, confidence=0.99)
        assert r99.high - r99.low > r90.high - r90.low
        assert r90.confidence == 0.90

    @pytest.mark.parametrize(
        ("a", "b", "kw"),
        [([0.1, 0.2], [0.1], {}), ([], [], {}), ([0.1, 0.2], [0.2, 0.3], {"confidence": 1.5})],
    )
    def test_rejects_bad_input(self, a: list[float], b: list[float], kw: dict[str, float]) -> None:
        with pytest.raises(ValueError):
            paired_bootstrap(a, b, **kw)  # type: ignore[arg-type]

    @settings(max_examples=25, deadline=None)
    @given(
        st.lists(
            st.tuples(st.sampled_from([0.0, 0.25, 0.5, 1.0]), st.sampled_from([0.0, 0.5, 1.0])),
            min_size=1,
            max_size=12,
        )
    )
    def test_interval_always_finite_and_ordered(self, pairs: list[tuple[float, float]]) -> None:
        a, b = zip(*pairs, strict=True)
        res = paired_bootstrap(a, b, n_resamples=200)
        assert math.isfinite(res.low)
        assert math.isfinite(res.high)
        assert res.low <= res.high
        assert 0.0 <= res.p_value_like <= 1.0


class TestCompare:
    def test_per_metric(self) -> None:
        native = {f"q{i}": {"NDCG@10": 0.1 * i, "MRR@100": 0.5} for i in range(6)}
        system = {
            f"q{i}": {"NDCG@10": 0.1 * i + 0.05 * (1 + i % 2), "MRR@100": 0.5} for i in range(6)
        }
        out = compare(native, system, n_resamples=500)
        assert set(out) == {"NDCG@10", "MRR@100"}
        assert all(isinstance(r, BootstrapResult) for r in out.values())
        assert out["NDCG@10"].low > 0.0
        assert out["MRR@100"].mean_diff == 0.0
        assert out["NDCG@10"].n == 6

    def test_pairs_by_qid_not_by_order(self) -> None:
        native = {"a": {"m": 0.0}, "b": {"m": 1.0}}
        system = {"b": {"m": 1.0}, "a": {"m": 0.0}}
        assert compare(native, system)["m"].mean_diff == 0.0
        assert compare(native, system)["m"].high == 0.0

    def test_chosen_metrics(self) -> None:
        native = {"a": {"m": 0.0, "k": 1.0}}
        system = {"a": {"m": 1.0, "k": 1.0}}
        assert list(compare(native, system, metrics=["m"])) == ["m"]

    def test_default_metrics_are_common_ones(self) -> None:
        native = {"a": {"m": 0.0, "k": 1.0}}
        system = {"a": {"m": 1.0}}
        assert list(compare(native, system)) == ["m"]

    def test_different_queries_rejected(self) -> None:
        with pytest.raises(ValueError, match="different queries"):
            compare({"a": {"m": 0.0}}, {"b": {"m": 0.0}})


# --------------------------------------------------------------------------- TREC files


class TestTrec:
    def test_run_round_trip(self, tmp_path: Path) -> None:
        run: Run = {
            "q1": [("d3", 12.5), ("d1", 12.5), ("d7", 0.1234567890123)],
            "q2": [("x", -1.0)],
        }
        path = write_trec_run(run, tmp_path / "run.trec", tag="qlog-0.4")
        assert read_trec_run(path) == run

    def test_run_format(self, tmp_path: Path) -> None:
        path = write_trec_run({"q1": [("d3", 2.0), ("d1", 1.0)]}, tmp_path / "r", "native")
        lines = path.read_text().splitlines()
        assert lines == ["q1 Q0 d3 1 2.0 native", "q1 Q0 d1 2 1.0 native"]

    def test_read_sorts_by_rank(self, tmp_path: Path) -> None:
        p = tmp_path / "r"
        p.write_text("q 0 b 2 5.0 t\n\nq 0 a 1 1.0 t\n")
        assert read_trec_run(p) == {"q": [("a", 1.0), ("b", 5.0)]}

    def test_read_rejects_malformed(self, tmp_path: Path) -> None:
        p = tmp_path / "r"
        p.write_text("q Q0 a 1 1.0\n")
        with pytest.raises(ValueError, match=":1: expected 6 fields"):
            read_trec_run(p)
        p.write_text("q Q0 a one 1.0 t\n")
        with pytest.raises(ValueError, match="not a number"):
            read_trec_run(p)

    def test_whitespace_in_ids_rejected(self, tmp_path: Path) -> None:
        with pytest.raises(ValueError, match="whitespace"):
            write_trec_run({"q": [("src/a b.py", 1.0)]}, tmp_path / "r", "t")
        with pytest.raises(ValueError, match="whitespace"):
            write_trec_run({"q": [("a", 1.0)]}, tmp_path / "r", "my tag")

    def test_qrels_round_trip(self, tmp_path: Path) -> None:
        qrels: Qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 2}}
        path = write_trec_qrels(qrels, tmp_path / "qrels")
        assert path.read_text().splitlines()[0] == "q1 0 a 1"
        assert read_trec_qrels(path) == qrels

    def test_files_agree_with_in_memory_metrics(self, tmp_path: Path) -> None:
        run_p = write_trec_run(RUN, tmp_path / "run", "t")
        qrels_p = write_trec_qrels(QRELS, tmp_path / "qrels")
        from_files = per_query_metrics(read_trec_run(run_p), read_trec_qrels(qrels_p))
        assert from_files == per_query_metrics(RUN, QRELS)


# --------------------------------------------------------------------------- plot


def test_plot_q_sweep_writes_png(tmp_path: Path) -> None:
    panels = {
        "python": {
            "1,000 docs": [(1.0, 0.40), (0.5, 0.45), (0.0, 0.41), (0.75, 0.44)],
            "10,000 docs": [(0.0, 0.30), (0.5, 0.33), (1.0, 0.31)],
            "empty": [],
        },
        "go": {"full": [(0.0, 0.30), (0.5, 0.33), (1.0, 0.31)]},
    }
    marks = {"python": {"1,000 docs": 0.6, "unknown": 0.1}, "go": {"full": 0.45}}
    out = plot_q_sweep(panels, marks, tmp_path / "s.png")
    data = out.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(data) > 5_000


def test_plot_q_sweep_draws_every_line_of_a_panel_in_its_own_colour(tmp_path: Path) -> None:
    """The old single panel drew 17 lines in 10 recycled colours: refuse instead."""
    from matplotlib.colors import to_hex
    from matplotlib.figure import Figure

    from esqlog.evaluation.plots import PALETTE

    drawn: list[Figure] = []
    save = Figure.savefig

    def keep(figure: Figure, *args: Any, **kwargs: Any) -> None:
        drawn.append(figure)
        save(figure, *args, **kwargs)

    curve = [(0.0, 0.1), (1.0, 0.2)]
    fits = {
        "go": {f"size {i}": curve for i in range(len(PALETTE))},
        "java": {"small": curve, "large": curve},
    }
    predicted = {"go": {"size 0": 0.5, "size 3": 0.7}}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Figure, "savefig", keep)
        assert plot_q_sweep(fits, predicted, tmp_path / "fits.png").exists()
    (figure,) = drawn
    panels = {ax.get_title(): ax for ax in figure.axes if ax.get_visible()}
    assert set(panels) == {"go", "java"}
    for name, ax in panels.items():
        curves = [line for line in ax.get_lines() if line.get_linestyle() != "None"]
        colours = [to_hex(line.get_color()) for line in curves]
        assert [line.get_label() for line in curves] == list(fits[name])
        assert len(set(colours)) == len(colours) == len(fits[name])  # one colour per line
        stars = [line for line in ax.get_lines() if line.get_marker() == "*"]
        by_label = dict(zip((line.get_label() for line in curves), colours, strict=True))
        assert sorted(to_hex(star.get_color()) for star in stars) == sorted(
            by_label[label] for label in predicted.get(name, {})
        )  # a star in its line's colour
    too_many = {"go": {f"size {i}": curve for i in range(len(PALETTE) + 1)}}
    with pytest.raises(ValueError, match="colour"):
        plot_q_sweep(too_many, {}, tmp_path / "no.png")
    assert len(set(PALETTE)) == len(PALETTE)


def test_import_esqlog_evaluate_stays_light() -> None:
    code = (
        "import sys, esqlog.evaluation.metrics; "
        "heavy = [m for m in ('scipy', 'matplotlib', 'ir_measures', 'yaml') if m in sys.modules]; "
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


# --------------------------------------------------------------------------- table


class TestFormatTable:
    def test_alignment(self) -> None:
        rows: list[dict[str, object]] = [
            {"corpus": "python", "ndcg": 0.5, "n": 3},
            {"corpus": "go", "ndcg": None, "n": 120},
        ]
        text = format_table(rows, ["corpus", "ndcg", "n"])
        lines = text.splitlines()
        assert lines[0] == "corpus    ndcg    n"
        assert lines[1] == "------  ------  ---"
        assert lines[2] == "python  0.5000    3"
        assert lines[3] == "go           -  120"

    def test_no_rows(self) -> None:
        assert format_table([], ["a", "bb"]).splitlines() == ["a  bb", "-  --"]

    def test_nan(self) -> None:
        assert "nan" in format_table([{"x": math.nan}], ["x"])

    def test_csv(self) -> None:
        text = format_csv([{"a": 1, "b": 0.25}, {"a": None}], ["a", "b"])
        assert text == "a,b\n1,0.25\n,\n"


# --------------------------------------------------------------------------- expectations


EXPECTATIONS_YAML = """\
NDCG@10: {min: 0.40}
MRR@100: {value: 0.50, tol: 0.02}
Recall@100: {max: 0.99}
"""


class TestExpectations:
    @pytest.fixture
    def path(self, tmp_path: Path) -> Path:
        p = tmp_path / "expect.yaml"
        p.write_text(EXPECTATIONS_YAML)
        return p

    def test_load(self, path: Path) -> None:
        assert load_expectations(path) == {
            "NDCG@10": {"min": 0.40},
            "MRR@100": {"value": 0.50, "tol": 0.02},
            "Recall@100": {"max": 0.99},
        }

    def test_pass(self, path: Path) -> None:
        measured = {"NDCG@10": 0.41, "MRR@100": 0.515, "Recall@100": 0.9}
        assert check_expectations(measured, load_expectations(path)) == []

    def test_boundaries_pass(self, path: Path) -> None:
        measured = {"NDCG@10": 0.40, "MRR@100": 0.52, "Recall@100": 0.99}
        assert check_expectations(measured, path) == []

    def test_catches_a_drop(self, path: Path) -> None:
        measured = {"NDCG@10": 0.35, "MRR@100": 0.50, "Recall@100": 0.5}
        failures = check_expectations(measured, path)
        assert len(failures) == 1
        assert failures[0].startswith("NDCG@10: 0.3500 < min 0.4000")

    def test_catches_drift_both_ways(self, path: Path) -> None:
        for mrr in (0.47, 0.53):
            failures = check_expectations({"NDCG@10": 0.5, "MRR@100": mrr, "Recall@100": 0.5}, path)
            assert [f.split(":")[0] for f in failures] == ["MRR@100"]

    def test_max(self, path: Path) -> None:
        failures = check_expectations({"NDCG@10": 0.5, "MRR@100": 0.5, "Recall@100": 1.0}, path)
        assert failures == ["Recall@100: 1.0000 > max 0.9900 (over by 0.0100)"]

    def test_missing_and_nan_metrics_fail(self, path: Path) -> None:
        failures = check_expectations({"NDCG@10": math.nan}, path)
        assert len(failures) == 3
        assert failures[0].startswith("NDCG@10: measured NaN")
        assert "MRR@100: not measured" in failures[1]

    def test_empty_file(self, tmp_path: Path) -> None:
        p = tmp_path / "e.yaml"
        p.write_text("")
        assert load_expectations(p) == {}

    @pytest.mark.parametrize(
        ("text", "match"),
        [
            ("- 1\n- 2\n", "mapping of metric names"),
            ("NDCG@10: 0.4\n", "expected a mapping"),
            ("NDCG@10: {minimum: 0.4}\n", "unknown keys"),
            ("NDCG@10: {min: high}\n", "finite number"),
            ("NDCG@10: {min: .nan}\n", "finite number"),
            ("NDCG@10: {tol: 0.1}\n", "tol needs a value"),
            ("NDCG@10: {value: 0.4, tol: -0.1}\n", "must not be negative"),
        ],
    )
    def test_bad_files_rejected(self, tmp_path: Path, text: str, match: str) -> None:
        p = tmp_path / "e.yaml"
        p.write_text(text)
        with pytest.raises(ValueError, match=match):
            load_expectations(p)
