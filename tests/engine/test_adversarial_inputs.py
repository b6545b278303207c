"""Adversarial inputs (issue 12, items 5, 8 and 9): output paths that are links or not files,
calibration files crafted to break the loader, snapshot paths into devices and FIFOs, an
interrupted --vocabulary run, and eval arguments that used to give tracebacks.

What a user sees is tested as a user sees it: the real ``esqlog`` in its own process
(tests.support.private_nodes.run_esqlog), one ``error:`` line, exit code 2, no traceback. Where an
engine is involved the test runs on both real engines.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from esqlog.calibration.files import load_calibration
from esqlog.engine.client import Engine
from tests.support.engines import ENGINE_URLS, bulk_index, call, create_index
from tests.support.esqlog_runs import one_line_error, run_esqlog, stdlib_lines


@pytest.fixture(scope="module")
def corpus(engine: Engine) -> Iterator[tuple[Engine, str]]:
    """A 2-shard index of 300 real lines, once per engine."""
    name = create_index(engine, shards=2)
    bulk_index(engine, name, [{"id": i, "body": t} for i, t in enumerate(stdlib_lines(300))])
    yield engine, name
    call(engine, "DELETE", f"/{name}")


def _calibrate(engine: Engine, index: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return run_esqlog(
        "calibrate",
        "--url",
        ENGINE_URLS[engine.flavor],
        "--index",
        index,
        "--field",
        "body",
        *extra,
    )


# --- item 5: --out onto special or linked paths --------------------------------------------


@pytest.mark.engine
def test_out_through_a_symlink_rewrites_the_target_and_keeps_its_mode(
    corpus: tuple[Engine, str], tmp_path: Path
) -> None:
    engine, index = corpus
    shared = tmp_path / "shared"
    shared.mkdir()
    real = shared / "real.json"
    real.write_text("{}")
    real.chmod(0o644)  # read by another user's application
    link = tmp_path / "link.json"
    link.symlink_to(real)
    result = _calibrate(engine, index, "--out", str(link))
    assert result.returncode == 0, result.stderr
    assert link.is_symlink() and os.readlink(link) == str(real)  # the link is kept ...
    assert load_calibration(link).index == index  # ... and its target rewritten
    assert load_calibration(real).index == index
    assert stat.S_IMODE(real.stat().st_mode) == 0o644  # not mkstemp's 0600
    assert sorted(p.name for p in shared.iterdir()) == ["real.json"]  # no temp file left

    real.chmod(0o640)  # a rewrite keeps whatever mode the file has
    assert _calibrate(engine, index, "--out", str(real)).returncode == 0
    assert stat.S_IMODE(real.stat().st_mode) == 0o640


# --- item 9: calibration files and snapshot paths crafted to break the loader ----------------


@pytest.fixture(scope="module")
def real_record(corpus: tuple[Engine, str]) -> dict[str, Any]:
    """A genuine calibration of the corpus: each crafted file changes one thing of it."""
    from esqlog.calibration.calibrate import calibrate

    engine, index = corpus
    return calibrate(engine, index, "body", sample=100).to_json()


def _bad_calibrations(tmp_path: Path, base: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """name -> (file content, expected words of the one-line error)."""
    fifo = tmp_path / "snapshot-fifo"
    os.mkfifo(fifo)

    def record(**changes: Any) -> str:
        return json.dumps({**base, **changes})

    return {
        "idf_form bogus": (record(idf_form="bogus"), "field 'idf_form' must be one of"),
        "index a list": (record(index=["x"]), "field 'index' must be a string"),
        "q a string": (record(q="0.5"), "field 'q' must be a number"),
        "q NaN": (record(q=float("nan")), "field 'q' must be a number between 0 and 2"),
        "shards a word": (record(shards="three"), "field 'shards' must be an integer"),
        "a million shards": (record(shards=10**6), "field 'shards' must be between 1 and"),
        "index a path": (record(index="../_cluster"), "field 'index' is not a valid index"),
        "schema a string": (record(schema="1"), "field 'schema' must be an integer"),
        "schema 0": (record(schema=0), "field 'schema' must be >= 1"),
        "schema true": (record(schema=True), "field 'schema' must be an integer"),
        "100,000 nested [": ("[" * 100_000, "nested too deeply"),
        "vocabulary /dev/zero": (
            record(vocabulary="/dev/zero"),
            "vocabulary file '/dev/zero' is a character device",
        ),
        "vocabulary a FIFO": (record(vocabulary=str(fifo)), "is a FIFO (named pipe)"),
        "vocabulary a folder": (record(vocabulary=str(tmp_path)), "is a directory"),
        "sha256 not hex": (
            record(vocabulary="v.npz", vocabulary_sha256="zz"),
            "field 'vocabulary_sha256' must be 64 lowercase hex digits",
        ),
    }


BAD_CALIBRATIONS = [
    "idf_form bogus",
    "index a list",
    "q a string",
    "q NaN",
    "shards a word",
    "a million shards",
    "index a path",
    "schema a string",
    "schema 0",
    "schema true",
    "100,000 nested [",
    "vocabulary /dev/zero",
    "vocabulary a FIFO",
    "vocabulary a folder",
    "sha256 not hex",
]


@pytest.mark.engine
@pytest.mark.parametrize("case", BAD_CALIBRATIONS)
def test_crafted_calibration_files_are_one_line_errors(
    corpus: tuple[Engine, str], real_record: dict[str, Any], tmp_path: Path, case: str
) -> None:
    engine, index = corpus
    content, expected = _bad_calibrations(tmp_path, real_record)[case]
    path = tmp_path / "cal.json"
    path.write_text(content)
    # explain reads no snapshot; a bad snapshot path is search's to refuse
    commands = ["search"] if case.startswith("vocabulary") else ["search", "explain"]
    for command in commands:
        result = run_esqlog(
            command,
            "--url",
            ENGINE_URLS[engine.flavor],
            index,
            "read file",
            "--calibration",
            str(path),
            timeout=60,
        )
        line = one_line_error(result, 2)
        assert expected in line, line
        assert "re-run esqlog calibrate" in line


@pytest.mark.engine
def test_eval_arguments_that_gave_tracebacks_are_one_line(
    corpus: tuple[Engine, str], tmp_path: Path
) -> None:
    engine, index = corpus
    good = tmp_path / "queries.jsonl"
    good.write_text(json.dumps({"qid": "1", "text": "read file", "gold": "3"}) + "\n")
    not_objects = tmp_path / "lists.jsonl"
    not_objects.write_text("[1,2]\n")
    base = [
        "eval",
        "--url",
        ENGINE_URLS[engine.flavor],
        "--index",
        index,
        "--field",
        "body",
        "--q",
        "0.8",
    ]
    cases = {
        "--resamples must be at least 1, got 0": [
            *base,
            "--queries",
            str(good),
            "--resamples",
            "0",
        ],
        "--resamples must be at least 1, got -1": [
            *base,
            "--queries",
            str(good),
            "--resamples",
            "-1",
        ],
        "holds no usable query": [*base, "--queries", str(not_objects)],
        "plot file '/proc/x.png' is in /proc": [
            *base,
            "--queries",
            str(good),
            "--plot",
            "/proc/x.png",
        ],
    }
    for expected, argv in cases.items():
        assert expected in one_line_error(run_esqlog(*argv), 2)
    written = tmp_path / "sweep.png"
    ok = run_esqlog(*base, "--queries", str(good), "--resamples", "50", "--plot", str(written))
    assert ok.returncode == 0, ok.stderr
    assert written.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.engine
def test_eval_script_mode_on_a_cluster_without_painless_is_one_line(
    elasticsearch: Engine, tmp_path: Path
) -> None:
    name = create_index(elasticsearch, shards=1)
    try:
        bulk_index(
            elasticsearch, name, [{"id": i, "body": t} for i, t in enumerate(stdlib_lines(50))]
        )
        queries = tmp_path / "queries.jsonl"
        queries.write_text(json.dumps({"qid": "1", "text": "read file", "gold": "3"}) + "\n")
        result = run_esqlog(
            "eval",
            "--url",
            ENGINE_URLS["elasticsearch"],
            "--index",
            name,
            "--field",
            "body",
            "--queries",
            str(queries),
            "--q",
            "0.8",
            "--mode",
            "script",
        )
        line = one_line_error(result, 2)
        assert "no Painless" in line and "--mode boost" in line
        assert "--install-script" not in line  # it cannot work on this cluster
    finally:
        call(elasticsearch, "DELETE", f"/{name}")
