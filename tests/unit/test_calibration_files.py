"""Calibration files, without an engine: atomic writes (under SIGKILL, between the snapshot and
the calibration, beside a live writer's temp file), the umask, ``--out`` onto what is not a
regular file, and the loader's one-line errors.

A calibration is the switch that makes the wrapper rescore every query: a torn or foreign
file must never load, and a failed save must leave the previous pair as it was.
"""

from __future__ import annotations

import json
import os
import random
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

import esqlog.calibration.files as files
from esqlog.atomic import atomic_write
from esqlog.calibration.files import load_calibration, save_calibration, save_with_vocabulary
from esqlog.calibration.record import SCHEMA_VERSION, Calibration
from esqlog.cli.calibrate_cmd import format_report
from esqlog.errors import UsageError
from esqlog.statistics.vocabulary import load_vocabulary
from tests.support.adversarial import RECORD
from tests.support.adversarial import make_vocab as _make_vocab
from tests.support.adversarial import unused_url as _unused_url
from tests.support.esqlog_runs import one_line_error, run_esqlog


def test_new_output_file_gets_the_umask_mode_and_a_dangling_link_is_followed(
    tmp_path: Path,
) -> None:
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


@pytest.mark.parametrize(
    "kind",
    ["/dev/null", "/dev/full", "fifo", "directory", "link to /dev/null", "/proc/version", "empty"],
)
def test_out_onto_a_non_regular_target_is_refused_before_connecting(
    tmp_path: Path, kind: str
) -> None:
    path, expected = _special_targets(tmp_path)[kind]
    before = os.lstat(path) if path else None
    # Nothing listens at the URL: only a check made before connecting can give exit 2.
    result = run_esqlog(
        "calibrate", "--url", _unused_url(), "--index", "code", "--field", "body", "--out", path
    )
    line = one_line_error(result, 2)
    assert expected in line and "regular file" in line, line
    if before is not None:  # the device node, FIFO or link is exactly as it was
        after = os.lstat(path)
        assert (after.st_mode, after.st_ino, after.st_rdev) == (
            before.st_mode,
            before.st_ino,
            before.st_rdev,
        )


PAIR_WRITER = """
import json, os, signal, sys
import esqlog.calibration.files as files
import esqlog.statistics.vocabulary as vocabulary
from esqlog.calibration.record import Calibration
from esqlog.calibration.files import save_with_vocabulary
from esqlog.statistics.vocabulary import VocabularyScan, vocabulary_from_scan

record = Calibration.from_json(json.loads(sys.argv[2]))
df = json.loads(sys.argv[3])
vocab = vocabulary_from_scan(VocabularyScan(df, df, len(df)), index="code", index_uuid="u1",
                             field="body", doc_count=9, sum_ttf=99, live_docs=9,
                             created_at="2025-01-02T00:00:00+00:00")
kill_after = int(sys.argv[4])  # kill once this many atomic writes have completed
real_write, done = files.atomic_write, [0]

def write(*args, **kwargs):
    result = real_write(*args, **kwargs)
    done[0] += 1
    if done[0] == kill_after:
        os.kill(os.getpid(), signal.SIGKILL)
    return result

def cleanup(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)  # killed before the old snapshot is deleted

files.atomic_write = write  # the calibration (and, since the fix, the snapshot)
vocabulary.atomic_write = write  # the snapshot, as written before the fix
if kill_after == 3:
    files._remove_unnamed_snapshots = cleanup
save_with_vocabulary(record, vocab, sys.argv[1])
"""


def _loaded_pair(path: Path) -> tuple[float, dict[str, int]]:
    """(q, df of 'old' and 'new') of the pair on disk; raises if the pair is broken."""
    record = load_calibration(path)
    vocab = load_vocabulary(record.vocabulary_path() or "", record.vocabulary_sha256)
    return record.q, vocab.df_of(["old", "new"])


@pytest.mark.parametrize(
    "kill_after", [1, 2, 3], ids=["after-snapshot", "after-calibration", "before-cleanup"]
)
def test_a_kill_between_the_steps_leaves_the_old_pair_or_the_new_pair(
    tmp_path: Path, kill_after: int
) -> None:
    out = tmp_path / "cal.json"
    save_with_vocabulary(Calibration.from_json({**RECORD, "q": 0.8}), _make_vocab({"old": 4}), out)
    old_pair = (0.8, {"old": 4, "new": 0})
    new_pair = (0.6, {"old": 0, "new": 7})
    assert _loaded_pair(out) == old_pair
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            PAIR_WRITER,
            str(out),
            json.dumps({**RECORD, "q": 0.6}),
            json.dumps({"new": 7}),
            str(kill_after),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    # The snapshot is written first, the calibration is the switch: before it, the old
    # pair; from it on, the new one. Never a calibration with another run's snapshot.
    assert _loaded_pair(out) == (old_pair if kill_after == 1 else new_pair)
    # The next complete run removes what the killed one left (an unnamed snapshot).
    save_with_vocabulary(Calibration.from_json({**RECORD, "q": 0.7}), _make_vocab({"x": 1}), out)
    snapshots = [p.name for p in tmp_path.iterdir() if p.suffix == ".npz"]
    assert snapshots == [load_calibration(out).vocabulary]


def test_a_save_overtaken_by_another_run_deletes_no_snapshot(tmp_path: Path) -> None:
    """The cleanup re-reads the calibration first: when another run has meanwhile replaced
    it, that run's snapshot is the one named and must stay; this run deletes nothing."""
    out = tmp_path / "cal.json"
    theirs = save_with_vocabulary(Calibration.from_json(RECORD), _make_vocab({"old": 4}), out)
    ours = "cal.vocab.0123456789abcdef.npz"
    (tmp_path / ours).write_bytes(b"this run's snapshot, no longer named")
    files._remove_unnamed_snapshots(out, "cal", ours)
    left = sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".npz")
    assert left == sorted([str(theirs.vocabulary), ours])


def test_every_calibration_field_has_a_rule() -> None:
    """A new field cannot reach the loader unchecked: the rule table and the record agree."""
    from esqlog.calibration.record import FIELDS

    assert set(FIELDS) == set(Calibration.__dataclass_fields__) - {"location"}


WRITER = """
import sys
from esqlog.calibration.record import Calibration
from esqlog.calibration.files import save_calibration
a, b = (Calibration.from_json({**%r, "q": q, "h_tok": h}) for q, h in ((0.8, 0.3), (0.95, 0.1)))
save_calibration(b, sys.argv[1])  # one complete save first: it clears dead writers' temps
print("ready", flush=True)
while True:
    save_calibration(a, sys.argv[1])
    save_calibration(b, sys.argv[1])
"""


def test_save_calibration_is_atomic_under_sigkill(tmp_path: Path) -> None:
    target = tmp_path / "cal.json"
    a = Calibration.from_json({**RECORD, "q": 0.8, "h_tok": 0.3})
    b = Calibration.from_json({**RECORD, "q": 0.95, "h_tok": 0.1})
    save_calibration(a, target)
    allowed = {json.dumps(a.to_json(), sort_keys=True), json.dumps(b.to_json(), sort_keys=True)}
    rng = random.Random(20240607)
    seen: set[float] = set()
    for _ in range(24):
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER % RECORD, str(target)], stdout=subprocess.PIPE, text=True
        )
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        time.sleep(rng.uniform(0.0, 0.05))
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(10) == -signal.SIGKILL
        proc.stdout.close()
        data = json.loads(target.read_text())  # always parses: never a partial file
        assert json.dumps(data, sort_keys=True) in allowed
        seen.add(data["q"])
        temps = [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
        # Only the killed writer's in-flight temp file can remain: each writer's first
        # complete save (before "ready") removed those of the writers killed before it.
        assert len(temps) <= 1, temps
    assert seen == {0.8, 0.95}  # the kills landed at different points of the loop
    save_calibration(a, target)  # a normal save cleans up after the last killed writer
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cal.json"]


def test_temp_file_of_a_live_writer_is_left_alone(tmp_path: Path) -> None:
    target = tmp_path / "cal.json"
    live = tmp_path / f".cal.json.{os.getppid()}.abc.tmp"  # the parent process is alive
    dead = tmp_path / ".cal.json.999999999.abc.tmp"  # no such pid
    live.write_text("{")
    dead.write_text("{")
    save_calibration(Calibration.from_json(RECORD), target)
    assert live.exists() and not dead.exists()


def _load_error(path: Path) -> str:
    with pytest.raises(UsageError) as info:
        load_calibration(path)
    text = str(info.value)
    assert "\n" not in text and info.value.exit_code == 2
    return text


def test_calibration_file_errors_are_one_line(tmp_path: Path) -> None:
    good = save_calibration(Calibration.from_json(RECORD), tmp_path / "good.json")
    assert load_calibration(good).q == 0.8
    assert "does not exist" in _load_error(tmp_path / "missing.json")
    truncated = tmp_path / "truncated.json"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    assert "is truncated or corrupt" in _load_error(truncated)
    corrupt = tmp_path / "corrupt.json"
    corrupt.write_text("{'index': code,}")
    assert "is truncated or corrupt (line 1)" in _load_error(corrupt)
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    assert "is not UTF-8 text" in _load_error(binary)
    newer = tmp_path / "newer.json"
    newer.write_text(
        json.dumps({**RECORD, "schema": SCHEMA_VERSION + 1, "esqlog_version": "9.9.9"})
    )
    assert "written by a newer esqlog (9.9.9, schema" in _load_error(newer)
    not_object = tmp_path / "list.json"
    not_object.write_text("[1, 2]")
    assert "is not a JSON object" in _load_error(not_object)
    bad_q = tmp_path / "bad_q.json"
    bad_q.write_text(json.dumps({**RECORD, "q": "high"}))
    assert "is invalid" in _load_error(bad_q)


def test_the_report_does_not_say_q_stays_near_1_beside_a_lower_q(tmp_path: Path) -> None:
    record = Calibration.from_json({**RECORD, "q": 0.703, "splits_identifiers": True})
    report = format_report(record)
    assert "q            0.703" in report
    assert "near 1" not in report and "q 0.703" in record.regime
    assert save_calibration(record, tmp_path / "c.json")
    assert load_calibration(tmp_path / "c.json").regime == record.regime
