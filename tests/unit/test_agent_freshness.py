"""esqlog.agent.freshness: when the indexed folder is walked, when a re-index runs, and what
the answer's first line says (a real folder, a counted re-index, a hand-driven clock)."""

from __future__ import annotations

import os
from pathlib import Path

from esqlog.agent.freshness import Freshness, folder_state, with_note


class Runs:
    """A re-index that counts its runs and reports ``changed`` files (or raises)."""

    def __init__(self, changed: int = 1) -> None:
        self.changed, self.runs, self.fail = changed, 0, False

    def __call__(self, folder: Path) -> int:
        self.runs += 1
        if self.fail:
            raise RuntimeError("connection refused\nmore")
        return self.changed


def _setup(tmp_path: Path, changed: int = 1) -> tuple[Freshness, Runs, list[float]]:
    (tmp_path / "a.py").write_text("def a():\n    pass\n", encoding="utf-8")
    runs, now = Runs(changed), [100.0]
    return Freshness(lambda: str(tmp_path), runs, 1.0, lambda: now[0]), runs, now


def _edit(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))


def test_the_first_check_reindexes_then_only_changes_do(tmp_path: Path) -> None:
    fresh, runs, now = _setup(tmp_path, changed=0)
    assert fresh.check() == ""
    assert runs.runs == 1  # what changed before the server started is unknown
    now[0] += 5
    assert fresh.check() == ""
    assert runs.runs == 1  # nothing changed: no re-index
    runs.changed = 2
    _edit(tmp_path / "a.py", "def a():\n    return 1\n")
    now[0] += 5
    assert fresh.check() == "re-indexed 2 changed files"
    assert runs.runs == 2


def test_the_folder_is_walked_at_most_once_per_interval(tmp_path: Path) -> None:
    fresh, runs, now = _setup(tmp_path)
    fresh.check()
    (tmp_path / "b.py").write_text("x = 1\n", encoding="utf-8")
    now[0] += 0.5
    assert fresh.check() == ""  # within the interval
    assert runs.runs == 1
    now[0] += 0.5
    assert fresh.check() == "re-indexed 1 changed file"
    assert runs.runs == 2


def test_a_read_files_own_change_is_seen_within_the_interval(tmp_path: Path) -> None:
    fresh, runs, now = _setup(tmp_path)
    fresh.check()
    now[0] += 0.1
    assert fresh.check("a.py") == ""  # unchanged file: no walk
    assert runs.runs == 1
    _edit(tmp_path / "a.py", "def a():\n    return 2\n")
    now[0] += 0.1
    assert fresh.check("a.py") == "re-indexed 1 changed file"
    (tmp_path / "a.py").unlink()
    now[0] += 0.1
    assert fresh.check("a.py") == "re-indexed 1 changed file"  # deleted: also a change
    assert runs.runs == 3


def test_a_failed_reindex_is_said_and_retried(tmp_path: Path) -> None:
    fresh, runs, now = _setup(tmp_path)
    runs.fail = True
    note = fresh.check()
    assert note.startswith("could not re-index the changed files (connection refused);")
    now[0] += 1.0
    runs.fail = False
    assert fresh.check() == "re-indexed 1 changed file"  # the state was not taken as seen
    assert runs.runs == 2


def test_no_folder_no_watch(tmp_path: Path) -> None:
    runs = Runs()
    fresh = Freshness(lambda: None, runs)
    assert fresh.check() == "" and runs.runs == 0
    assert "does not name the folder" in fresh.off
    gone = Freshness(lambda: str(tmp_path / "elsewhere"), runs)
    assert gone.check() == "" and runs.runs == 0
    assert "not on this machine" in gone.off


def test_the_state_follows_esqlog_index_rules(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "node_modules" / "m.js").write_text("var m;\n", encoding="utf-8")
    (tmp_path / ".gitignore").write_text("built.py\n", encoding="utf-8")
    (tmp_path / "built.py").write_text("y = 2\n", encoding="utf-8")
    state = folder_state(tmp_path)
    assert set(state) == {".gitignore", "a.py"}
    assert state["a.py"][1] == 6


def test_with_note() -> None:
    assert with_note("", "answer") == "answer"
    assert with_note("re-indexed 1 changed file", "answer") == "re-indexed 1 changed file\nanswer"


def test_an_edit_of_the_same_size_is_seen_by_its_time(tmp_path: Path) -> None:
    fresh, runs, now = _setup(tmp_path)
    fresh.check()
    _edit(tmp_path / "a.py", "def a():\n    pas2\n")  # "return 1" for "return 2"
    now[0] += 1.0
    assert fresh.check() == "re-indexed 1 changed file"
    assert runs.runs == 2
