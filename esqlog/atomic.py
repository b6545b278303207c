"""esqlog's file I/O at the boundary: atomic writes and bounded reads of untrusted files.

Writes: esqlog's outputs (calibration records, vocabulary snapshots, plots) are read by
running applications; a half-written file would be worse than none, and the path a user
names may be a symlink, a file another user's application reads (its mode must survive a
rewrite) or not a file at all (/dev/null, a FIFO, a directory, /proc): each gets the
behaviour of the tool a user would compare with, ``cp``, never a replaced device node.

Reads: a calibration may name its snapshot by any path, so a loader must never block on a
FIFO or read a device until memory runs out; :func:`read_regular_file` opens without
blocking, checks what it opened, and reads at most a stated size (snapshots, which are
.npz archives, are read through it by esqlog.statistics.npz).
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from esqlog.errors import UsageError

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
)
_PSEUDO_FILESYSTEMS = ("/proc", "/sys")


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def output_target(path: str | Path, what: str = "output file") -> Path:
    """The regular file a write to ``path`` lands in, or a one-line UsageError.

    Symlinks are followed (the link stays, its target is rewritten, as ``cp`` does);
    a path that exists but is not a regular file, or lies in a kernel pseudo-filesystem
    (whose "files" are not storage), is refused. Cheap and I/O-light, so commands call it
    before their long work as well as at write time.
    """
    text = os.fspath(path)
    fix = "pass the path of a regular file in a writable folder"
    if not text.strip():
        raise UsageError(f"the {what} path is empty", fix)
    real = Path(os.path.realpath(text))
    if any(real == Path(root) or Path(root) in real.parents for root in _PSEUDO_FILESYSTEMS):
        raise UsageError(
            f"{what} {text!r} is in /{real.parts[1]}, a kernel pseudo-filesystem, not storage", fix
        )
    try:
        info = real.stat()
    except FileNotFoundError:
        return real
    except OSError as exc:
        raise UsageError(f"cannot write {what} {text!r} ({exc.strerror})", fix) from None
    if not stat.S_ISREG(info.st_mode):
        raise UsageError(f"{what} {text!r} is {_kind(info.st_mode)}, not a regular file", fix)
    return real


def atomic_write(path: str | Path, payload: bytes, what: str = "output file") -> Path:
    """Write via a temp file beside the (symlink-resolved) target, fsync, rename, fsync folder.

    An existing file keeps its permission bits (and owner, when we may set it); a new one
    gets the mode ``open()`` would give it (0666 minus the umask) rather than mkstemp's 0600.
    The temp file (``.<name>.<pid>.<random>.tmp``) is removed on any exception; only a hard
    kill (SIGKILL, power loss) can leave one behind, and the next successful write to the
    same path removes temp files whose writer process no longer exists. Returns the path
    as given (a symlink stays the name the user knows).
    """
    target = output_target(path, what)
    try:
        return _write(target, payload, Path(path))
    except OSError as exc:
        raise UsageError(
            f"cannot write {what} {os.fspath(path)!r} ({exc.strerror or exc})",
            "pass a path in a writable folder with free space",
        ) from None


def _write(target: Path, payload: bytes, given: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        existing: os.stat_result | None = target.stat()
    except FileNotFoundError:
        existing = None
    fd, tmp = tempfile.mkstemp(
        prefix=f".{target.name}.{os.getpid()}.", suffix=".tmp", dir=target.parent
    )
    try:
        with os.fdopen(fd, "wb") as handle:
            if existing is not None:
                os.fchmod(handle.fileno(), stat.S_IMODE(existing.st_mode))
                # not ours to give away (not root): the file becomes ours, its mode kept
                with contextlib.suppress(PermissionError):
                    os.fchown(handle.fileno(), existing.st_uid, existing.st_gid)
            else:
                os.fchmod(handle.fileno(), 0o666 & ~_umask())
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
    return given


def _umask() -> int:
    """The process umask, read without changing it where the OS allows (Linux)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)  # elsewhere: set and restore (briefly process-wide)
    os.umask(mask)
    return mask


def _remove_orphaned_temps(target: Path) -> None:
    """Delete temp files left by writers of ``target`` that died before their rename."""
    prefix = f".{target.name}."
    for leftover in target.parent.iterdir():
        name = leftover.name
        if not (name.startswith(prefix) and name.endswith(".tmp")):
            continue
        pid = name[len(prefix) :].split(".", 1)[0]
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


@contextlib.contextmanager
def open_regular_file(
    path: str | Path, max_bytes: int, what: str, fix: str, follow_symlinks: bool = True
) -> Iterator[tuple[BinaryIO, int]]:
    """An open regular file of at most ``max_bytes`` and its size, or a one-line UsageError.

    Opened with O_NONBLOCK (a FIFO cannot block the open) and checked with fstat on the
    open descriptor (no race with a swapped path): devices, FIFOs, sockets and directories
    are refused, and so is a file over the bound, before a byte is read.
    ``follow_symlinks=False`` (O_NOFOLLOW) refuses a symlink in the last component, for
    files found inside a tree being read (a repository's ``.gitignore``), where git itself
    does not follow one either.
    """
    text = os.fspath(path)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if not follow_symlinks:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(text, flags)
    except FileNotFoundError:
        raise UsageError(f"{what} {text!r} does not exist", fix) from None
    except OSError as exc:
        if not follow_symlinks and os.path.islink(text):
            raise UsageError(
                f"{what} {text!r} is a symbolic link, not a regular file", fix
            ) from None
        raise UsageError(f"{what} {text!r} cannot be read ({exc.strerror})", fix) from None
    try:
        info = os.fstat(fd)
        problem = (
            f"is {_kind(info.st_mode)}, not a regular file"
            if not stat.S_ISREG(info.st_mode)
            else f"is {info.st_size:,} bytes, more than the {max_bytes:,} esqlog reads"
            if info.st_size > max_bytes
            else None
        )
    except OSError as exc:
        problem = f"cannot be read ({exc.strerror})"
    if problem:
        os.close(fd)
        raise UsageError(f"{what} {text!r} {problem}", fix)
    with os.fdopen(fd, "rb") as handle:
        yield handle, info.st_size


def read_regular_file(
    path: str | Path, max_bytes: int, what: str, fix: str, follow_symlinks: bool = True
) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``, or a one-line UsageError.

    See :func:`open_regular_file`; at most ``max_bytes`` + 1 bytes are ever read (a file
    that grows while it is read is refused, not read on).
    """
    text = os.fspath(path)
    with open_regular_file(path, max_bytes, what, fix, follow_symlinks) as (handle, _):
        chunks = []
        left = max_bytes + 1
        try:
            while left > 0:  # in pieces: read(n) would allocate n bytes at once
                chunk = handle.read(min(left, 1 << 20))
                if not chunk:
                    break
                chunks.append(chunk)
                left -= len(chunk)
        except OSError as exc:
            raise UsageError(f"{what} {text!r} cannot be read ({exc.strerror})", fix) from None
    data = b"".join(chunks)
    if len(data) > max_bytes:
        raise UsageError(f"{what} {text!r} grew past the {max_bytes:,} bytes esqlog reads", fix)
    return data


class DuplicateKeyError(ValueError):
    """A JSON object of an untrusted file names one key twice."""

    def __init__(self, key: str) -> None:
        super().__init__(f"the key {key!r} appears twice in one object")
        self.key = key


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` for files from disk: a key given twice is refused.

    Why: ``json.loads`` keeps the last of two equal keys without a word, so a file edited
    by hand (or by someone else) would be read as something no reviewer of its first
    occurrence saw."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKeyError(key)
        out[key] = value
    return out
