"""Reading the .npz files esqlog writes (vocabulary snapshots, identifier statistics) as
the untrusted input they are.

Why a module of its own: ``np.load`` trusts what a file declares. An .npy header claiming
a shape of 2**40 makes it allocate terabytes before any checksum is compared, a member may
be compressed (a zip bomb) or pickled, and metadata may be a list, nested 100,000 deep or
hold NaN. Here the zip directory and every array header are checked first (bounded, with
nothing allocated from them), then the file's checksum, then the data; metadata must be a
flat JSON object whose fields have their types and ranges. Every failure is one
UsageError line naming the file and the command that rewrites it, never numpy's error.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import struct
import zipfile
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
from numpy.lib import format as npy_format

from esqlog.atomic import open_regular_file
from esqlog.errors import UsageError

NPY_HEADER_MAX = 4096  # bytes of an .npy header esqlog parses (np.save writes 128)
#: What a crafted archive can make the standard library or numpy raise while its directory
#: and array headers are read; each means "not a file esqlog wrote".
_DAMAGED = (
    OSError,
    EOFError,
    ValueError,
    KeyError,
    IndexError,
    TypeError,
    OverflowError,
    RecursionError,
    SyntaxError,
    NotImplementedError,
    RuntimeError,
    struct.error,
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
)


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


#: bytes of an array hashed as one piece by :func:`pieces_digest`
PIECE_BYTES = 1 << 24


def pieces_digest(
    arrays: Mapping[str, tuple[str, tuple[int, ...], bytes | memoryview]],
    threads: int | None = None,
) -> str:
    """SHA-256 over each array's name, dtype, shape and byte count and the SHA-256 of each
    16 MiB piece of its data, in name order: a file's checksum of its own arrays, as
    :func:`array_digest`, that several cores compute together.

    Why: one SHA-256 stream is sequential, and at a million documents an identifiers
    file is over 300 MiB, half of what loading it costs. The pieces' digests are
    independent: they are computed in ``threads`` threads (hashlib releases the GIL on
    buffers this large), then hashed in order; a change to any byte, or bytes moved from
    one piece or array to another, changes the result as it changes a plain SHA-256."""
    names = sorted(arrays)
    views = {name: _bytes_of(arrays[name][2]) for name in names}
    jobs = [(name, at) for name in names for at in range(0, views[name].nbytes, PIECE_BYTES)]

    def piece(job: tuple[str, int]) -> bytes:
        name, at = job
        return hashlib.sha256(views[name][at : at + PIECE_BYTES]).digest()

    workers = threads or min(4, os.cpu_count() or 1)
    if workers > 1 and len(jobs) > 1:
        with ThreadPoolExecutor(min(workers, len(jobs))) as pool:
            done = dict(zip(jobs, pool.map(piece, jobs), strict=True))
    else:
        done = {job: piece(job) for job in jobs}
    digest = hashlib.sha256()
    for name in names:
        dtype, shape, _ = arrays[name]
        digest.update(f"{name}\0{dtype}\0{shape}\0{views[name].nbytes}\0".encode())
        for at in range(0, views[name].nbytes, PIECE_BYTES):
            digest.update(done[name, at])
    return digest.hexdigest()


def _bytes_of(data: bytes | memoryview) -> memoryview:
    """The bytes of an array's buffer as a flat byte view (C order, as saved)."""
    view = memoryview(data)
    if not view.nbytes:  # cast refuses a shape with a zero in it
        return memoryview(b"")
    return view if view.format == "B" and view.ndim == 1 else view.cast("B")


#: every member's modification time in the files esqlog writes: a fixed one, so that two
#: runs that compute the same statistics write the same bytes (zip's earliest date)
FIXED_DATE_TIME = (1980, 1, 1, 0, 0, 0)


def npz_bytes(arrays: Mapping[str, np.ndarray]) -> bytes:
    """The .npz file of ``arrays`` (in this order, uncompressed, no pickles), the same bytes
    for the same arrays whenever and wherever it is written.

    Why not ``np.savez``: what date each member carries is left to numpy and zipfile
    (numpy has written members through temporary files, stamped with the time of writing),
    and the files' checksums name them and bind them together (a snapshot's SHA-256 is in
    its name and in the identifiers file), so reproducible statistics need reproducible
    bytes. The layout is np.savez's: one ``NAME.npy`` member each, zip64 headers.
    """
    buffer = io.BytesIO()
    with zipfile.ZipFile(
        buffer, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True
    ) as archive:
        for name, value in arrays.items():
            info = zipfile.ZipInfo(f"{name}.npy", date_time=FIXED_DATE_TIME)
            info.compress_type = zipfile.ZIP_STORED
            info.external_attr = 0o600 << 16  # what zipfile gives a member written by name
            with archive.open(info, "w", force_zip64=True) as member:
                npy_format.write_array(member, np.asanyarray(value), allow_pickle=False)
    return buffer.getvalue()


def read_npz(
    path: str | Path,
    max_bytes: int,
    what: str,
    fix: str,
    members: Mapping[str, Member],
    sha256: str | None = None,
    mapped: bool = False,
) -> dict[str, RawArray]:
    """The arrays of an .npz file esqlog wrote, or a one-line UsageError; never numpy's.

    In this order, so that nothing is allocated from what the file claims before it is
    checked: (1) the file is a regular file within ``max_bytes`` (esqlog.atomic's bounded
    open); (2) its zip directory and every .npy header are read (the headers bounded by
    NPY_HEADER_MAX) and must name exactly ``members``, stored uncompressed, each header's
    shape times item size equal to the bytes the member holds; a file that fails here is
    "damaged", so a truncated snapshot is not misreported as another calibration's; (3) when
    ``sha256`` is given the whole file is hashed in pieces and must match; (4) only then is
    each member's data read, with its zip CRC-32 checked.

    ``mapped``: instead of (4), each member's data is memory-mapped read-only from the open
    file (its offset: the member's local header, then its .npy header). Worker processes
    that load the same file then share one copy in the page cache instead of holding one
    each. The caller verifies the bytes with a checksum (the file's, or one of its arrays)
    in place of the CRC-32; a file replaced after the load (esqlog writes by rename) keeps
    the mapped old one intact.
    """
    source = os.fspath(path)
    with open_regular_file(path, max_bytes, what, fix) as (handle, size):
        try:
            with zipfile.ZipFile(handle) as archive:
                _check_entry_count(handle, size, len(archive.infolist()))
                entries = _entries(archive, size, members)
                if sha256 is not None and _file_sha256(handle) != sha256:
                    raise UsageError(
                        f"{what} {source!r} does not belong to this calibration (checksum differs)",
                        fix,
                    )
                if mapped:
                    return {
                        name: _mapped_data(handle, size, info, dtype, shape, offset)
                        for name, (info, dtype, shape, offset) in entries.items()
                    }
                return {
                    name: _member_data(archive, info, dtype, shape, offset)
                    for name, (info, dtype, shape, offset) in entries.items()
                }
        except _DAMAGED as exc:
            raise UsageError(
                f"{what} {source!r} is truncated, damaged or not an esqlog {what} ({_reason(exc)})",
                fix,
            ) from None


_Entry = tuple[zipfile.ZipInfo, "np.dtype[Any]", tuple[int, ...], int]


def _check_entry_count(handle: BinaryIO, size: int, found: int) -> None:
    """The end record's member count must be the members the directory yielded: a damaged
    length inside the directory can hide a member (an optional one would go unnoticed).
    The record is the last one in the file's tail, as zipfile finds it (bytes appended
    after it are left to the checksum)."""
    tail = min(size, (1 << 16) + 22)
    handle.seek(size - tail)
    data = handle.read(tail)
    at = data.rfind(b"PK\x05\x06")
    if at < 0 or len(data) - at < 22:
        raise ValueError("no end record")
    total = struct.unpack("<4s4H2LH", data[at : at + 22])[4]
    if total not in (found, 0xFFFF):
        raise ValueError(f"the end record counts {total} members, the directory {found}")


def _entries(
    archive: zipfile.ZipFile, size: int, members: Mapping[str, Member]
) -> dict[str, _Entry]:
    infos = archive.infolist()
    names = [info.filename.removesuffix(".npy") for info in infos]
    if (
        len(set(names)) != len(names)
        or not set(names) <= set(members)
        or any(rule.required and name not in names for name, rule in members.items())
    ):
        raise ValueError(f"members {sorted(names)[:8]} are not the expected ones")
    if sum(info.file_size for info in infos) > size:
        raise ValueError("members larger than the file")
    found: dict[str, _Entry] = {}
    for name, info in zip(names, infos, strict=True):
        rule = members[name]
        if (
            info.compress_type != zipfile.ZIP_STORED
            or info.flag_bits & 1
            or info.compress_size != info.file_size
        ):
            raise ValueError(f"{name} is compressed or encrypted")
        if info.comment:  # never written; a damaged length can hide the next member in one
            raise ValueError(f"{name} has a comment")
        if rule.max_bytes is not None and info.file_size > rule.max_bytes:
            raise ValueError(f"{name} is over {rule.max_bytes:,} bytes")
        with archive.open(info) as member:
            version = npy_format.read_magic(member)
            read_header = (
                npy_format.read_array_header_1_0
                if version == (1, 0)
                else npy_format.read_array_header_2_0
            )
            if version not in ((1, 0), (2, 0)):
                raise ValueError(f"{name} has .npy version {version}")
            shape, fortran, dtype = read_header(member, max_header_size=NPY_HEADER_MAX)
            offset = member.tell()
        if (
            dtype.str not in rule.dtypes
            or len(shape) != rule.ndim
            or (fortran and len(shape) > 1)
            or any(n < 0 for n in shape)
        ):
            raise ValueError(f"{name} is not a {rule.ndim}-dimensional {rule.dtypes[0]} array")
        if math.prod(shape) * dtype.itemsize != info.file_size - offset:
            raise ValueError(f"{name} declares shape {shape} for {info.file_size - offset:,} bytes")
        found[name] = (info, dtype, tuple(shape), offset)
    return found


def _file_sha256(handle: BinaryIO) -> str:
    digest = hashlib.sha256()
    handle.seek(0)
    while chunk := handle.read(1 << 20):
        digest.update(chunk)
    return digest.hexdigest()


def _member_data(
    archive: zipfile.ZipFile,
    info: zipfile.ZipInfo,
    dtype: np.dtype[Any],
    shape: tuple[int, ...],
    offset: int,
) -> RawArray:
    with archive.open(info) as member:
        raw = member.read(info.file_size)
        if len(raw) != info.file_size or member.read(1):  # reading to the end checks CRC-32
            raise ValueError(f"{info.filename} is not {info.file_size:,} bytes")
    return RawArray(dtype, shape, memoryview(raw)[offset:])


_LOCAL_HEADER = struct.Struct("<4s22xHH")  # signature, ..., name length, extra length


def _mapped_data(
    handle: BinaryIO,
    size: int,
    info: zipfile.ZipInfo,
    dtype: np.dtype[Any],
    shape: tuple[int, ...],
    offset: int,
) -> RawArray:
    """A member's array data mapped read-only from the file, its bounds checked against the
    file's size (a mapping past the end would fault at first use, not fail here)."""
    handle.seek(info.header_offset)
    signature, name_len, extra_len = _LOCAL_HEADER.unpack(handle.read(_LOCAL_HEADER.size))
    if signature != b"PK\x03\x04":
        raise ValueError(f"{info.filename} has no local header")
    start = info.header_offset + _LOCAL_HEADER.size + name_len + extra_len
    nbytes = info.file_size - offset
    if start + info.file_size > size:
        raise ValueError(f"{info.filename} runs past the end of the file")
    if not nbytes:
        return RawArray(dtype, shape, memoryview(b""))
    data = np.memmap(handle, dtype=np.uint8, mode="r", offset=start + offset, shape=(nbytes,))
    return RawArray(dtype, shape, data.data)


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
        isinstance(v, str | int | float | bool) or v is None for v in value.values()
    ):
        return None
    return value


def shown(value: Any, limit: int = 40) -> str:
    """A short rendering of an untrusted value for a one-line message."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


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
