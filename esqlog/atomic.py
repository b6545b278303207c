"""Atomic file writes: a crash leaves the old file or the new one, never a partial one.

esqlog's outputs (calibration records, vocabulary snapshots) are read by running
applications; a half-written file would be worse than none.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write(path: str | Path, payload: bytes) -> Path:
    """Write via a temp file in the same folder, fsync, rename over the target, fsync the folder.

    The temp file (``.<name>.<pid>.<random>.tmp``) is removed on any exception; only a hard
    kill (SIGKILL, power loss) can leave one behind, and the next successful write to the
    same path removes temp files whose writer process no longer exists.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.{os.getpid()}.", suffix=".tmp",
                               dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    dir_fd = os.open(target.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    _remove_orphaned_temps(target)
    return target


def _remove_orphaned_temps(target: Path) -> None:
    """Delete temp files left by writers of ``target`` that died before their rename."""
    prefix = f".{target.name}."
    for leftover in target.parent.iterdir():
        name = leftover.name
        if not (name.startswith(prefix) and name.endswith(".tmp")):
            continue
        pid = name[len(prefix):].split(".", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid() or _process_alive(int(pid)):
            continue  # still being written (or not ours to judge)
        leftover.unlink(missing_ok=True)


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
