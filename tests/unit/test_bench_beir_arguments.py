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


def test_a_refused_index_name_leaves_no_folder_behind(tmp_path: Path) -> None:
    """The output folder defaults to ./<index>: a name the engines refuse is said in one
    line before that folder (here x/_doc/1#/) is created."""
    import os
    import subprocess
    import sys

    code = "import sys; from esqlog.cli import main; sys.exit(main(prog_name='esqlog'))"
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            "bench-beir",
            str(BEIR),
            "--url",
            CLOSED,
            "--index",
            "x/_doc/1#",
        ],
        cwd=tmp_path,
        text=True,
        capture_output=True,
        timeout=120,
        check=False,
        env={k: v for k, v in os.environ.items() if not k.startswith("ESQLOG_")},
    )
    assert "is not a usable index name" in one_line_error(run, 2)
    assert list(tmp_path.iterdir()) == []
