"""Quality regression check on the bundled sample (5,000 real Go functions, 1,000 queries).

Indexes the sample into a scratch index on each real engine, calibrates with the default
predictor, and checks native and q-log metrics against tests/data/expected_quality.yaml (values
with tolerances). A drop in quality (or an unexpected jump that means the test data or the
method changed) fails CI.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from esqlog.calibration.calibrate import calibrate
from esqlog.cli.demo_cmd import sample_path
from esqlog.engine.client import Engine
from esqlog.evaluation.corpus import bulk_index_docs, create_corpus_index, load_queries, read_jsonl
from esqlog.evaluation.reports import check_expectations
from esqlog.evaluation.sweeps import QuerySet, evaluate_queries, system_label
from tests.support.engines import call

EXPECTED = Path(__file__).parents[1] / "data" / "expected_quality.yaml"


@pytest.fixture(scope="module")
def sample_index(engine: Engine) -> Iterator[str]:
    index = f"esqlog-test-quality-{engine.flavor}"
    create_corpus_index(engine, index, replace=True)
    bulk_index_docs(engine, index, read_jsonl(sample_path("sample_go_docs.jsonl.gz")))
    yield index
    call(engine, "DELETE", f"/{index}")


def test_bundled_sample_quality(engine: Engine, sample_index: str) -> None:
    record = calibrate(engine, sample_index, "body")
    loaded = load_queries(sample_path("sample_go_queries.jsonl"))
    queries = QuerySet([q.qid for q in loaded], [q.text for q in loaded], [q.gold for q in loaded])
    result = evaluate_queries(
        engine, sample_index, "body", queries, [record.q], predicted_q=record.q
    )
    measured = {f"native {k}": v for k, v in result.means["native"].items()}
    measured.update({f"qlog {k}": v for k, v in result.means[system_label(record.q)].items()})
    measured["q"] = record.q
    measured["h_tok"] = record.h_tok
    print(
        f"\n[quality {engine.flavor}] "
        + ", ".join(f"{k}={v:.4f}" for k, v in sorted(measured.items()))
    )
    failures = check_expectations(measured, EXPECTED)
    assert not failures, "\n".join(failures)


def test_eval_command(engine: Engine, sample_index: str, tmp_path: Path) -> None:
    """esqlog eval end to end: JSON, TREC files, plot; q = 1 is native BM25 exactly."""
    import json

    from click.testing import CliRunner

    from esqlog.cli import main
    from esqlog.evaluation.trec import read_trec_run
    from tests.support.engines import ENGINE_URLS

    trec = tmp_path / "trec"
    plot = tmp_path / "ndcg.png"
    result = CliRunner().invoke(
        main,
        [
            "eval",
            "--url",
            ENGINE_URLS[engine.flavor],
            "--index",
            sample_index,
            "--field",
            "body",
            "--queries",
            str(sample_path("sample_go_queries.jsonl")),
            "--q",
            "1,0.6",
            "--limit",
            "150",
            "--resamples",
            "1000",
            "--json",
            "--trec-dir",
            str(trec),
            "--plot",
            str(plot),
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["queries"] == 150
    assert data["means"]["q=1"] == data["means"]["native"]
    assert data["means"]["q=0.6"]["NDCG@10"] > data["means"]["native"]["NDCG@10"]
    diff = data["diffs"]["q=0.6"]["NDCG@10"]
    assert diff["low"] > 0 and diff["low"] <= diff["mean_diff"] <= diff["high"]
    assert len(read_trec_run(trec / "qlog-q0.6.run")) == 150
    assert (trec / "qrels.txt").stat().st_size > 0 and plot.stat().st_size > 1000
