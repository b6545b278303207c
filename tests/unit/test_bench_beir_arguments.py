"""``esqlog bench-beir`` refuses a folder that is not a BEIR dataset, or a metric it cannot
compute, in one line before it connects to any cluster (the URL is a closed port)."""

from __future__ import annotations

from pathlib import Path

from tests.support.beir_data import BEIR
from tests.support.esqlog_runs import one_line_error, run_esqlog

CLOSED = "http://127.0.0.1:9"


def test_bench_beir_folder_errors_are_one_line(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    partial = tmp_path / "partial"
    (partial / "qrels").mkdir(parents=True)
    (partial / "corpus.jsonl").write_text("{}\n")
    (partial / "queries.jsonl").write_text("{}\n")
    (partial / "qrels" / "dev.tsv").write_text("q\td\t1\n")
    url = CLOSED  # refused before any connection
    cases = {
        str(tmp_path / "nope"): "is not a folder",
        str(tmp_path / "empty"): "has no qrels/test.tsv",
        str(partial): "pass --split dev",
    }
    for folder, expected in cases.items():
        assert expected in one_line_error(run_esqlog("bench-beir", folder, "--url", url), 2)
    bad_metric = run_esqlog("bench-beir", str(BEIR), "--url", url, "--metric", "Recall@8K-tokens")
    assert "not available in bench-beir" in one_line_error(bad_metric, 2)
