"""The benchmark harness (scripts/bench): every script starts without an engine, and the
shared helpers compute what the published figures were computed with."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from scripts.bench import harness

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(p for p in (ROOT / "scripts" / "bench").rglob("*.py") if p.name != "__init__.py")


def module_of(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def test_every_bench_script_answers_help_without_an_engine() -> None:
    """One interpreter per script, as a user runs it (``python -m scripts.bench.NAME --help``):
    an import that only worked through a path edit, or a script that reads sys.argv by hand,
    fails here. No cluster runs; the URL points at a closed port."""
    failed = []
    for path in SCRIPTS:
        run = subprocess.run(
            [sys.executable, "-m", module_of(path), "--help"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            env={"PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg", "ESQLOG_URL": "http://127.0.0.1:9"},
        )
        if run.returncode != 0:
            failed.append(f"{module_of(path)}: {run.returncode} {run.stderr.strip()[-300:]}")
    assert len(SCRIPTS) > 30
    assert not failed, "\n".join(failed)


def test_no_script_edits_the_import_path() -> None:
    offenders = [
        str(p.relative_to(ROOT))
        for p in (ROOT / "scripts").rglob("*.py")
        if "sys.path.insert" in p.read_text(encoding="utf-8")
    ]
    assert offenders == []


@pytest.mark.parametrize(
    ("values", "pct", "expected"),
    [
        ([3.0, 1.0, 2.0, 4.0], 50, 2.5),
        ([10.0, 20.0, 30.0, 40.0, 50.0], 95, 48.0),
        ([7.0], 95, 7.0),
        ([1.0, 2.0], 0, 1.0),
        ([1.0, 2.0], 100, 2.0),
    ],
)
def test_percentile_interpolates_between_ranks_as_numpy_does(
    values: list[float], pct: float, expected: float
) -> None:
    import numpy as np

    assert harness.percentile(values, pct) == pytest.approx(expected)
    assert harness.percentile(values, pct) == pytest.approx(float(np.percentile(values, pct)))


def test_jsonl_lines_accumulate_and_read_back(tmp_path: Path) -> None:
    out = tmp_path / "deep" / "runs.jsonl"
    harness.append_jsonl(out, {"a": 1})
    harness.append_jsonl(out, {"b": [2, 3]}, {"c": "x"})
    lines = out.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == [{"a": 1}, {"b": [2, 3]}, {"c": "x"}]
    (tmp_path / "other.jsonl").write_text('{"d": 4}\n\n', encoding="utf-8")
    assert harness.read_rows(out, tmp_path / "other.jsonl") == [
        {"a": 1},
        {"b": [2, 3]},
        {"c": "x"},
        {"d": 4},
    ]


def test_common_arguments_parse_as_the_scripts_expect() -> None:
    import argparse

    parser = argparse.ArgumentParser()
    harness.add_url(parser)
    harness.add_corpus_args(parser, index="code")
    harness.add_out(parser, "results/x.jsonl")
    args = parser.parse_args(["--calibration", "c.json", "--queries", "q.jsonl"])
    assert args.url == harness.DEFAULT_URL
    assert (args.index, args.calibration, args.queries) == ("code", Path("c.json"), Path("q.jsonl"))
    assert args.out == Path("results/x.jsonl")
    required = argparse.ArgumentParser()
    harness.add_url(required, required=True)
    with pytest.raises(SystemExit):
        required.parse_args([])
    assert required.parse_args(["--url", "http://h:1"]).url == "http://h:1"


def test_urls_are_shown_without_credentials() -> None:
    assert harness.shown("https://elastic:s3cret@host:9200") == "https://***@host:9200"
    assert "s3cret" not in harness.shown("http://u:s3cret@h")


def test_corpus_files_are_read_from_the_folder(tmp_path: Path) -> None:
    (tmp_path / "docs.jsonl").write_text('{"_id": "d1", "content": "x"}\n', encoding="utf-8")
    (tmp_path / "queries.jsonl").write_text(
        '{"qid": "q1", "text": "open file", "gold": "d1"}\n', encoding="utf-8"
    )
    assert [d["_id"] for d in harness.corpus_docs(tmp_path)] == ["d1"]
    assert [(q.qid, q.gold) for q in harness.corpus_queries(tmp_path)] == [("q1", "d1")]
