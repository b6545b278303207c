"""Keeping a served index as fresh as the folder it was built from, with nothing for the agent
to run.

Why: an agent edits a file and searches again within seconds; an index that still holds the
old text answers with the old lines and line numbers, and nothing says so. So before each
tool call ``Freshness.check`` compares the folder's files (listed with esqlog index's own
rules, esqlog.indexing.walk) by modification time and size with the state it last saw, at
most once per ``interval`` seconds (a walk of a 10,000-file tree costs a fraction of a
second, a stat of one file microseconds: read_code's own file is compared on every call, so
a read never returns the old text of a file edited within the interval). When anything
differs it runs ``reindex`` (the incremental ``esqlog index`` run, which hashes the files
and writes only those whose text changed, then refreshes the index) before the answer.

The first check re-indexes unconditionally: the server cannot know what changed between
the last ``esqlog index`` and its own start, and the incremental run costs one read of the
tree when nothing did. A failed re-index is said on the answer's first line and retried at
the next check; the state is only taken as seen once a re-index succeeded.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

#: seconds between two walks of the folder (a read_code's own file is checked every call)
INTERVAL = 1.0

State = dict[str, tuple[int, int]]


def folder_state(root: Path) -> State:
    """Each file esqlog index would consider (its walk's rules, default options), by path
    relative to ``root``: (modification time in ns, size). A file gone between the listing
    and its stat is left out, as the walk would leave it out a moment later."""
    from esqlog.indexing.walk import WalkOptions, WalkReport, list_files

    state: State = {}
    for listed in list_files(root, WalkOptions(), WalkReport()):
        try:
            found = os.stat(listed.on_disk, follow_symlinks=False)
        except OSError:
            continue
        state[listed.path] = (found.st_mtime_ns, found.st_size)
    return state


def file_state(root: Path, path: str) -> tuple[int, int] | None:
    """One file's (modification time in ns, size), None when it is not a file any more."""
    try:
        found = os.stat(root / path, follow_symlinks=False)
    except (OSError, ValueError):
        return None
    return (found.st_mtime_ns, found.st_size)


class Freshness:
    """The indexed folder's last seen state and the re-index that brings the index to it."""

    def __init__(
        self,
        root: Callable[[], str | None],
        reindex: Callable[[Path], int],
        interval: float = INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``root``: the indexed folder (the index's marker), asked at the first check;
        ``reindex(folder)``: the incremental index run, returning how many files it
        re-indexed or removed."""
        self._root_of, self._reindex = root, reindex
        self.interval, self._clock = interval, clock
        self._folder: Path | None = None
        self._state: State | None = None
        self._last = float("-inf")
        self._lock = threading.Lock()
        self.off = ""  # why the folder is not watched (set once, said once)

    def check(self, touched: str | None = None) -> str:
        """Before an answer: re-index what changed. Returns the answer's first line ("" when
        nothing was re-indexed). ``touched``: a path read_code is about to return, compared
        even within the interval."""
        with self._lock:
            folder = self._watched()
            if folder is None:
                return ""
            now = self._clock()
            due = now - self._last >= self.interval
            if not due and touched is not None and self._state is not None:
                due = file_state(folder, touched) != self._state.get(touched)
            if not due:
                return ""
            self._last = now
            state = folder_state(folder)
            if state == self._state:
                return ""
            try:
                changed = self._reindex(folder)
            except Exception as exc:  # the engine or the folder: said, retried next check
                return (
                    f"could not re-index the changed files ({str(exc).splitlines()[0]}); "
                    "answers may show the indexed text, not the files on disk"
                )
            self._state = state
            if not changed:
                return ""
            return f"re-indexed {changed} changed file{'s' if changed != 1 else ''}"

    def _watched(self) -> Path | None:
        """The folder to watch, looked up once; None (with ``off`` saying why) when the
        index names none or it is not a folder here."""
        if self._folder is None and not self.off:
            try:
                root = self._root_of()
            except Exception:  # the engine: asked again at the next check
                return None
            if root is None:
                self.off = "the index does not name the folder it was built from"
            elif not Path(root).is_dir():
                self.off = f"the indexed folder {root!r} is not on this machine"
            else:
                self._folder = Path(root)
        return self._folder


def with_note(note: str, answer: str) -> str:
    """The answer with the freshness line first, when there is one."""
    return f"{note}\n{answer}" if note else answer
