"""esqlog's file I/O at the boundary: atomic writes and bounded reads of untrusted files.

Writes: esqlog's outputs (calibration records, vocabulary snapshots, plots) are read by
running applications; a half-written file would be worse than none, and the path a user
names may be a symlink, a file another user's application reads (its mode must survive a
rewrite) or not a file at all (/dev/null, a FIFO, a directory, /proc): each gets the
behaviour of the tool a user would compare with, ``cp``, never a replaced device node.

Reads: a calibration may name its snapshot by any path, so a loader must never block on a
FIFO or read a device until memory runs out; :func:`read_regular_file` opens without
blocking, checks what it opened, and reads at most a stated size. Snapshots are .npz
archives: :func:`read_npz` checks an archive's directory and array headers before it
allocates anything they declare, and :func:`meta_problem` the types and ranges of their
metadata, so a crafted file is a one-line UsageError, never numpy's MemoryError.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import stat
import struct
import tempfile
import zipfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
from numpy.lib import format as npy_format

from esqlog.errors import UsageError

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISSOCK, "a socket"))
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
        raise UsageError(f"{what} {text!r} is in /{real.parts[1]}, a kernel pseudo-filesystem, "
                         "not storage", fix)
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
        raise UsageError(f"cannot write {what} {os.fspath(path)!r} ({exc.strerror or exc})",
                         "pass a path in a writable folder with free space") from None


def _write(target: Path, payload: bytes, given: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        existing: os.stat_result | None = target.stat()
    except FileNotFoundError:
        existing = None
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.{os.getpid()}.", suffix=".tmp",
                               dir=target.parent)
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


@contextlib.contextmanager
def open_regular_file(path: str | Path, max_bytes: int, what: str,
                      fix: str) -> Iterator[tuple[BinaryIO, int]]:
    """An open regular file of at most ``max_bytes`` and its size, or a one-line UsageError.

    Opened with O_NONBLOCK (a FIFO cannot block the open) and checked with fstat on the
    open descriptor (no race with a swapped path): devices, FIFOs, sockets and directories
    are refused, and so is a file over the bound, before a byte is read.
    """
    text = os.fspath(path)
    try:
        fd = os.open(text, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise UsageError(f"{what} {text!r} does not exist", fix) from None
    except OSError as exc:
        raise UsageError(f"{what} {text!r} cannot be read ({exc.strerror})", fix) from None
    try:
        info = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        raise UsageError(f"{what} {text!r} cannot be read ({exc.strerror})", fix) from None
    if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:
        os.close(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UsageError(f"{what} {text!r} is {_kind(info.st_mode)}, not a regular file",
                             fix)
        raise UsageError(f"{what} {text!r} is {info.st_size:,} bytes, more than the "
                         f"{max_bytes:,} esqlog reads", fix)
    handle = os.fdopen(fd, "rb")
    try:
        yield handle, info.st_size
    finally:
        handle.close()


def read_regular_file(path: str | Path, max_bytes: int, what: str, fix: str) -> bytes:
    """The bytes of a regular file of at most ``max_bytes``, or a one-line UsageError.

    See :func:`open_regular_file`; at most ``max_bytes`` + 1 bytes are ever read (a file
    that grows while it is read is refused, not read on).
    """
    text = os.fspath(path)
    with open_regular_file(path, max_bytes, what, fix) as (handle, _):
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
            raise UsageError(f"{what} {text!r} cannot be read ({exc.strerror})",
                             fix) from None
    data = b"".join(chunks)
    if len(data) > max_bytes:
        raise UsageError(f"{what} {text!r} grew past the {max_bytes:,} bytes esqlog reads", fix)
    return data


# --- .npz archives of untrusted origin --------------------------------------------------------

NPY_HEADER_MAX = 4096  # bytes of an .npy header esqlog parses (np.save writes 128)
#: What a crafted archive can make the standard library or numpy raise while its directory
#: and array headers are read; each means "not a file esqlog wrote".
_DAMAGED = (OSError, EOFError, ValueError, KeyError, IndexError, TypeError, OverflowError,
            RecursionError, SyntaxError, NotImplementedError, RuntimeError, struct.error,
            zipfile.BadZipFile, zipfile.LargeZipFile)


@dataclass(frozen=True)
class Member:
    """What one array of an archive may be: its dtypes, its number of dimensions, whether
    it must be there and how many bytes it may have (None: bounded by the file only)."""

    dtypes: tuple[str, ...]
    ndim: int
    required: bool = True
    max_bytes: int | None = None


@dataclass(frozen=True)
class RawArray:
    """One array's checked header and its data bytes, not yet an array."""

    dtype: np.dtype[Any]
    shape: tuple[int, ...]
    data: memoryview

    def array(self) -> np.ndarray:
        """The array (read-only, sharing the bytes): its size was checked against them."""
        return np.frombuffer(self.data, dtype=self.dtype).reshape(self.shape)


def array_digest(arrays: Mapping[str, tuple[str, tuple[int, ...], bytes | memoryview]]) -> str:
    """SHA-256 over each array's name, dtype, shape and data bytes, in name order: a file's
    checksum of its own arrays (what a reader can verify before it parses any of them)."""
    digest = hashlib.sha256()
    for name in sorted(arrays):
        dtype, shape, data = arrays[name]
        digest.update(f"{name}\0{dtype}\0{shape}\0{memoryview(data).nbytes}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def read_npz(path: str | Path, max_bytes: int, what: str, fix: str,
             members: Mapping[str, Member], sha256: str | None = None) -> dict[str, RawArray]:
    """The arrays of an .npz file esqlog wrote, or a one-line UsageError; never numpy's.

    In this order, so that nothing is allocated from what the file claims before it is
    checked: (1) the file is a regular file within ``max_bytes`` (esqlog.atomic's bounded
    open); (2) its zip directory and every .npy header are read (the headers bounded by
    NPY_HEADER_MAX) and must name exactly ``members``, stored uncompressed, each header's
    shape times item size equal to the bytes the member holds; a file that fails here is
    "damaged", so a truncated snapshot is not misreported as another calibration's; (3) when
    ``sha256`` is given the whole file is hashed in pieces and must match; (4) only then is
    each member's data read, with its zip CRC-32 checked.
    """
    source = os.fspath(path)
    with open_regular_file(path, max_bytes, what, fix) as (handle, size):
        try:
            with zipfile.ZipFile(handle) as archive:
                entries = _entries(archive, size, members)
                if sha256 is not None and _file_sha256(handle) != sha256:
                    raise UsageError(f"{what} {source!r} does not belong to this calibration "
                                     "(checksum differs)", fix)
                return {name: _member_data(archive, info, dtype, shape, offset)
                        for name, (info, dtype, shape, offset) in entries.items()}
        except _DAMAGED as exc:
            raise UsageError(f"{what} {source!r} is truncated, damaged or not an esqlog "
                             f"{what} ({_reason(exc)})", fix) from None


_Entry = tuple[zipfile.ZipInfo, "np.dtype[Any]", tuple[int, ...], int]


def _entries(archive: zipfile.ZipFile, size: int,
             members: Mapping[str, Member]) -> dict[str, _Entry]:
    infos = archive.infolist()
    names = [info.filename.removesuffix(".npy") for info in infos]
    if len(set(names)) != len(names) or not set(names) <= set(members) or any(
            rule.required and name not in names for name, rule in members.items()):
        raise ValueError(f"members {sorted(names)[:8]} are not the expected ones")
    if sum(info.file_size for info in infos) > size:
        raise ValueError("members larger than the file")
    found: dict[str, _Entry] = {}
    for name, info in zip(names, infos, strict=True):
        rule = members[name]
        if (info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 1
                or info.compress_size != info.file_size):
            raise ValueError(f"{name} is compressed or encrypted")
        if rule.max_bytes is not None and info.file_size > rule.max_bytes:
            raise ValueError(f"{name} is over {rule.max_bytes:,} bytes")
        with archive.open(info) as member:
            version = npy_format.read_magic(member)
            read_header = (npy_format.read_array_header_1_0 if version == (1, 0)
                           else npy_format.read_array_header_2_0)
            if version not in ((1, 0), (2, 0)):
                raise ValueError(f"{name} has .npy version {version}")
            shape, fortran, dtype = read_header(member, max_header_size=NPY_HEADER_MAX)
            offset = member.tell()
        if dtype.str not in rule.dtypes or len(shape) != rule.ndim or (
                fortran and len(shape) > 1) or any(n < 0 for n in shape):
            raise ValueError(f"{name} is not a {rule.ndim}-dimensional {rule.dtypes[0]} array")
        if math.prod(shape) * dtype.itemsize != info.file_size - offset:
            raise ValueError(f"{name} declares shape {shape} for "
                             f"{info.file_size - offset:,} bytes")
        found[name] = (info, dtype, tuple(shape), offset)
    return found


def _file_sha256(handle: BinaryIO) -> str:
    digest = hashlib.sha256()
    handle.seek(0)
    while chunk := handle.read(1 << 20):
        digest.update(chunk)
    return digest.hexdigest()


def _member_data(archive: zipfile.ZipFile, info: zipfile.ZipInfo, dtype: np.dtype[Any],
                 shape: tuple[int, ...], offset: int) -> RawArray:
    with archive.open(info) as member:
        raw = member.read(info.file_size)
        if len(raw) != info.file_size or member.read(1):  # reading to the end checks CRC-32
            raise ValueError(f"{info.filename} is not {info.file_size:,} bytes")
    return RawArray(dtype, shape, memoryview(raw)[offset:])


def _reason(exc: BaseException) -> str:
    """A short, one-line reason: the exception's kind and the start of its text."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:80]}" if text else type(exc).__name__


# --- metadata of such files: a flat JSON object, each field with its type and range ---------

MAX_META_BYTES = 1 << 20  # a file's metadata is well under 1 KB; anything near this is not
MAX_META_TEXT = 4096  # characters of any text field (as in a calibration record)
Rule = Callable[[Any], str | None]  # None when the value is valid, else what is wrong


def flat_json(data: bytes | memoryview) -> dict[str, Any] | None:
    """The JSON object in ``data`` when it is one of plain values (no nesting, no NaN or
    infinity), else None: metadata esqlog writes is flat, so depth and type are bounded
    here, once, instead of at every use."""
    def no_constant(name: str) -> Any:
        raise ValueError(f"{name} is not a number")
    try:
        value = json.loads(bytes(data).decode("utf-8"), parse_constant=no_constant)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict) or not all(
            isinstance(v, str | int | float | bool) or v is None for v in value.values()):
        return None
    return value


def shown(value: Any, limit: int = 40) -> str:
    """A short rendering of an untrusted value for a one-line message."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def count(low: int, high: int | None = None) -> Rule:
    """An integer (not a bool, not a float) from ``low`` to ``high``."""
    def check(value: Any) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int):
            return f"is not an integer: {shown(value)}"
        if value < low or (high is not None and value > high):
            return f"is {value:,}, out of range"
        return None
    return check


def finite(low: float, high: float) -> Rule:
    """A finite number from ``low`` to ``high``."""
    def check(value: Any) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f"is not a number: {shown(value)}"
        if not math.isfinite(value) or not low <= value <= high:
            return f"is {value!r}, not a number from {low:g} to {high:g}"
        return None
    return check


def plain_text(value: Any) -> str | None:
    """A string of at most MAX_META_TEXT characters without NUL."""
    if not isinstance(value, str):
        return f"is not a string: {shown(value)}"
    if len(value) > MAX_META_TEXT or "\x00" in value:
        return f"is over {MAX_META_TEXT} characters or holds NUL"
    return None


def meta_problem(meta: Mapping[str, Any], rules: Mapping[str, Rule]) -> str | None:
    """The first field of ``meta`` that is missing or breaks its rule, as a phrase, or None."""
    for name, rule in rules.items():
        if name not in meta:
            return f"lacks {name}"
        wrong = rule(meta[name])
        if wrong:
            return f"{name} {wrong}"
    return None
