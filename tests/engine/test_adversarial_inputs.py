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
import signal
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from esqlog.atomic import atomic_write
from esqlog.calibration.calibrate import load_calibration, save_with_vocabulary
from esqlog.calibration.record import Calibration
from esqlog.engine.client import Engine
from esqlog.statistics.vocabulary import load_vocabulary
from tests.support.adversarial import RECORD
from tests.support.adversarial import make_vocab as _make_vocab
from tests.support.adversarial import unused_url as _unused_url
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
    return run_esqlog("calibrate", "--url", ENGINE_URLS[engine.flavor], "--index", index,
                      "--field", "body", *extra)


# --- item 5: --out onto special or linked paths --------------------------------------------

@pytest.mark.engine
def test_out_through_a_symlink_rewrites_the_target_and_keeps_its_mode(
        corpus: tuple[Engine, str], tmp_path: Path) -> None:
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


def test_new_output_file_gets_the_umask_mode_and_a_dangling_link_is_followed(
        tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        assert stat.S_IMODE(atomic_write(tmp_path / "new.json", b"{}").stat().st_mode) == 0o644
    finally:
        os.umask(old)
    target = tmp_path / "sub" / "target.json"
    (tmp_path / "sub").mkdir()
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(target)
    atomic_write(dangling, b"[1]")
    assert dangling.is_symlink() and target.read_bytes() == b"[1]"


def _special_targets(tmp_path: Path) -> dict[str, tuple[str, str]]:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    folder = tmp_path / "folder"
    folder.mkdir()
    link_to_null = tmp_path / "null-link.json"
    link_to_null.symlink_to("/dev/null")
    return {
        "/dev/null": ("/dev/null", "is a character device, not a regular file"),
        "/dev/full": ("/dev/full", "is a character device, not a regular file"),
        "fifo": (str(fifo), "is a FIFO (named pipe), not a regular file"),
        "directory": (str(folder), "is a directory, not a regular file"),
        "link to /dev/null": (str(link_to_null), "is a character device"),
        "/proc/version": ("/proc/version", "is in /proc, a kernel pseudo-filesystem"),
        "empty": ("", "the calibration file path is empty"),
    }


@pytest.mark.parametrize("kind", ["/dev/null", "/dev/full", "fifo", "directory",
                                  "link to /dev/null", "/proc/version", "empty"])
def test_out_onto_a_non_regular_target_is_refused_before_connecting(
        tmp_path: Path, kind: str) -> None:
    path, expected = _special_targets(tmp_path)[kind]
    before = os.lstat(path) if path else None
    # Nothing listens at the URL: only a check made before connecting can give exit 2.
    result = run_esqlog("calibrate", "--url", _unused_url(), "--index", "code",
                        "--field", "body", "--out", path)
    line = one_line_error(result, 2)
    assert expected in line and "regular file" in line, line
    if before is not None:  # the device node, FIFO or link is exactly as it was
        after = os.lstat(path)
        assert (after.st_mode, after.st_ino, after.st_rdev) == (
            before.st_mode, before.st_ino, before.st_rdev)


# --- item 8: an interrupted --vocabulary run keeps a whole pair -----------------------------

PAIR_WRITER = """
import json, os, signal, sys
import esqlog.calibration.calibrate as calibrate
import esqlog.statistics.vocabulary as vocabulary
from esqlog.calibration.record import Calibration
from esqlog.calibration.calibrate import save_with_vocabulary
from esqlog.statistics.vocabulary import VocabularyScan, vocabulary_from_scan

record = Calibration.from_json(json.loads(sys.argv[2]))
df = json.loads(sys.argv[3])
vocab = vocabulary_from_scan(VocabularyScan(df, df, len(df)), index="code", index_uuid="u1",
                             field="body", doc_count=9, sum_ttf=99, live_docs=9,
                             created_at="2025-01-02T00:00:00+00:00")
kill_after = int(sys.argv[4])  # kill once this many atomic writes have completed
real_write, done = calibrate.atomic_write, [0]

def write(*args, **kwargs):
    result = real_write(*args, **kwargs)
    done[0] += 1
    if done[0] == kill_after:
        os.kill(os.getpid(), signal.SIGKILL)
    return result

def cleanup(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)  # killed before the old snapshot is deleted

calibrate.atomic_write = write  # the calibration (and, since the fix, the snapshot)
vocabulary.atomic_write = write  # the snapshot, as written before the fix
if kill_after == 3:
    calibrate._remove_unnamed_snapshots = cleanup
save_with_vocabulary(record, vocab, sys.argv[1])
"""




def _loaded_pair(path: Path) -> tuple[float, dict[str, int]]:
    """(q, df of 'old' and 'new') of the pair on disk; raises if the pair is broken."""
    record = load_calibration(path)
    vocab = load_vocabulary(record.vocabulary_path() or "", record.vocabulary_sha256)
    return record.q, vocab.df_of(["old", "new"])


@pytest.mark.parametrize("kill_after", [1, 2, 3],
                         ids=["after-snapshot", "after-calibration", "before-cleanup"])
def test_a_kill_between_the_steps_leaves_the_old_pair_or_the_new_pair(
        tmp_path: Path, kill_after: int) -> None:
    out = tmp_path / "cal.json"
    save_with_vocabulary(Calibration.from_json({**RECORD, "q": 0.8}), _make_vocab({"old": 4}),
                         out)
    old_pair = (0.8, {"old": 4, "new": 0})
    new_pair = (0.6, {"old": 0, "new": 7})
    assert _loaded_pair(out) == old_pair
    proc = subprocess.run([sys.executable, "-c", PAIR_WRITER, str(out),
                           json.dumps({**RECORD, "q": 0.6}), json.dumps({"new": 7}),
                           str(kill_after)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    # The snapshot is written first, the calibration is the switch: before it, the old
    # pair; from it on, the new one. Never a calibration with another run's snapshot.
    assert _loaded_pair(out) == (old_pair if kill_after == 1 else new_pair)
    # The next complete run removes what the killed one left (an unnamed snapshot).
    save_with_vocabulary(Calibration.from_json({**RECORD, "q": 0.7}), _make_vocab({"x": 1}),
                         out)
    snapshots = [p.name for p in tmp_path.iterdir() if p.suffix == ".npz"]
    assert snapshots == [load_calibration(out).vocabulary]


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
        "vocabulary /dev/zero": (record(vocabulary="/dev/zero"),
                                 "vocabulary file '/dev/zero' is a character device"),
        "vocabulary a FIFO": (record(vocabulary=str(fifo)), "is a FIFO (named pipe)"),
        "vocabulary a folder": (record(vocabulary=str(tmp_path)), "is a directory"),
        "sha256 not hex": (record(vocabulary="v.npz", vocabulary_sha256="zz"),
                           "field 'vocabulary_sha256' must be 64 lowercase hex digits"),
    }


BAD_CALIBRATIONS = ["idf_form bogus", "index a list", "q a string", "q NaN", "shards a word",
                    "a million shards", "index a path", "schema a string", "schema 0",
                    "schema true", "100,000 nested [", "vocabulary /dev/zero",
                    "vocabulary a FIFO", "vocabulary a folder", "sha256 not hex"]


@pytest.mark.engine
@pytest.mark.parametrize("case", BAD_CALIBRATIONS)
def test_crafted_calibration_files_are_one_line_errors(
        corpus: tuple[Engine, str], real_record: dict[str, Any], tmp_path: Path,
        case: str) -> None:
    engine, index = corpus
    content, expected = _bad_calibrations(tmp_path, real_record)[case]
    path = tmp_path / "cal.json"
    path.write_text(content)
    # explain reads no snapshot; a bad snapshot path is search's to refuse
    commands = ["search"] if case.startswith("vocabulary") else ["search", "explain"]
    for command in commands:
        result = run_esqlog(command, "--url", ENGINE_URLS[engine.flavor], index, "read file",
                            "--calibration", str(path), timeout=60)
        line = one_line_error(result, 2)
        assert expected in line, line
        assert "re-run esqlog calibrate" in line


def test_every_calibration_field_has_a_rule() -> None:
    """A new field cannot reach the loader unchecked: the rule table and the record agree."""
    from esqlog.calibration.record import FIELDS

    assert set(FIELDS) == set(Calibration.__dataclass_fields__) - {"location"}


@pytest.mark.engine
def test_eval_arguments_that_gave_tracebacks_are_one_line(
        corpus: tuple[Engine, str], tmp_path: Path) -> None:
    engine, index = corpus
    good = tmp_path / "queries.jsonl"
    good.write_text(json.dumps({"qid": "1", "text": "read file", "gold": "3"}) + "\n")
    not_objects = tmp_path / "lists.jsonl"
    not_objects.write_text("[1,2]\n")
    base = ["eval", "--url", ENGINE_URLS[engine.flavor], "--index", index, "--field", "body",
            "--q", "0.8"]
    cases = {
        "--resamples must be at least 1, got 0": [*base, "--queries", str(good),
                                                   "--resamples", "0"],
        "--resamples must be at least 1, got -1": [*base, "--queries", str(good),
                                                    "--resamples", "-1"],
        "holds no usable query": [*base, "--queries", str(not_objects)],
        "plot file '/proc/x.png' is in /proc": [*base, "--queries", str(good),
                                                "--plot", "/proc/x.png"],
    }
    for expected, argv in cases.items():
        assert expected in one_line_error(run_esqlog(*argv), 2)
    written = tmp_path / "sweep.png"
    ok = run_esqlog(*base, "--queries", str(good), "--resamples", "50", "--plot", str(written))
    assert ok.returncode == 0, ok.stderr
    assert written.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.engine
def test_eval_script_mode_on_a_cluster_without_painless_is_one_line(
        elasticsearch: Engine, tmp_path: Path) -> None:
    name = create_index(elasticsearch, shards=1)
    try:
        bulk_index(elasticsearch, name, [{"id": i, "body": t}
                                         for i, t in enumerate(stdlib_lines(50))])
        queries = tmp_path / "queries.jsonl"
        queries.write_text(json.dumps({"qid": "1", "text": "read file", "gold": "3"}) + "\n")
        result = run_esqlog("eval", "--url", ENGINE_URLS["elasticsearch"], "--index", name,
                            "--field", "body", "--queries", str(queries), "--q", "0.8",
                            "--mode", "script")
        line = one_line_error(result, 2)
        assert "no Painless" in line and "--mode boost" in line
        assert "--install-script" not in line  # it cannot work on this cluster
    finally:
        call(elasticsearch, "DELETE", f"/{name}")
