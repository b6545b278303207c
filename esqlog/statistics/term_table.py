"""A list of distinct terms kept as numpy arrays: one UTF-8 blob, offsets and hashes.

Why: a Python ``str`` costs ~50 bytes before its text, a list slot 8 more and a dictionary
entry ~40: at the million documents of the mix (2.95M terms) the identifiers calibration
held several such tables at once (one per scan worker, the parent's merged one and the
build's), the largest share of its peak (docs/benchmarks/calibrate-speed.md). Here a term
costs its UTF-8 bytes plus 8 (offset) and 8 (its 64-bit BLAKE2b, the vocabulary
snapshot's key), and 8 more with the checksums the snapshot's membership filter uses;
tables are joined, looked up in one another and gathered with numpy, and pickle as a
handful of arrays (a per-object pickle memo cost as much as the tables themselves).

Lookups are exact: a hash is only a candidate, confirmed by comparing the bytes. A table
whose own hashes collide (two distinct terms, odds ~2e-7 at three million terms) is
looked up through a dictionary of its decoded terms instead: slower, the same answer.
"""

from __future__ import annotations

import hashlib
import itertools
import zlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, overload

import numpy as np

CHUNK = 1 << 16  # terms encoded, decoded or gathered at once (bounds the temporary objects)
_BLAKE8 = hashlib.blake2b(digest_size=8)  # copied per term: half the cost of a new object


def digest(data: bytes) -> bytes:
    """The 8-byte BLAKE2b digest of a term's UTF-8 bytes (esqlog.statistics.vocabulary's
    term_hash reads it little-endian)."""
    h = _BLAKE8.copy()
    h.update(data)
    return h.digest()


def _starts(lengths: np.ndarray) -> np.ndarray:
    """Offsets of consecutive pieces of these lengths (len + 1, from 0)."""
    out = np.zeros(lengths.size + 1, np.int64)
    np.cumsum(lengths, out=out[1:])
    return out


def segment_positions(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Every position of the pieces [start, start + length), in order, as one array."""
    total = int(lengths.sum())
    return np.repeat(starts - _starts(lengths)[:-1], lengths) + np.arange(total, dtype=np.int64)


class TermTable(Sequence[str]):
    """Terms ``0..n-1``: term k is ``blob[offsets[k]:offsets[k + 1]]`` decoded; ``keys``
    their BLAKE2b-64 hashes; ``crc`` / ``adler`` their CRC-32 and Adler-32 (the snapshot's
    Bloom filter), or None when the table was made without them."""

    def __init__(
        self,
        blob: np.ndarray,
        offsets: np.ndarray,
        keys: np.ndarray,
        crc: np.ndarray | None = None,
        adler: np.ndarray | None = None,
    ) -> None:
        self.blob = np.asarray(blob, np.uint8)
        self.offsets = np.asarray(offsets, np.int64)
        self.keys = np.asarray(keys, np.uint64)
        self.crc, self.adler = crc, adler

    @classmethod
    def of(cls, terms: Sequence[str], checksums: bool = True) -> TermTable:
        """The table of these (distinct) terms, in this order, encoded a chunk at a time."""
        blobs, lengths, keys, crcs, adlers = [], [], [], [], []
        for at in range(0, len(terms), CHUNK):
            data = [t.encode("utf-8") for t in terms[at : at + CHUNK]]
            blobs.append(np.frombuffer(b"".join(data), np.uint8))
            lengths.append(np.fromiter(map(len, data), np.int64, len(data)))
            keys.append(np.frombuffer(b"".join(map(digest, data)), "<u8").astype(np.uint64))
            if checksums:
                crcs.append(np.fromiter(map(zlib.crc32, data), np.uint32, len(data)))
                adlers.append(np.fromiter(map(zlib.adler32, data), np.uint32, len(data)))
        return cls(
            _joined(blobs, np.uint8),
            _starts(_joined(lengths, np.int64)),
            _joined(keys, np.uint64),
            _joined(crcs, np.uint32) if checksums else None,
            _joined(adlers, np.uint32) if checksums else None,
        )

    def __len__(self) -> int:
        return int(self.offsets.size - 1)

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> list[str]: ...

    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        n = len(self)
        if not -n <= i < n:
            raise IndexError("term index out of range")
        i %= n
        return self.blob[self.offsets[i] : self.offsets[i + 1]].tobytes().decode("utf-8")

    def __iter__(self) -> Iterator[str]:
        offsets = self.offsets
        for at in range(0, len(self), CHUNK):
            end = min(at + CHUNK, len(self))
            base = int(offsets[at])
            data = self.blob[base : offsets[end]].tobytes()
            cut = (offsets[at : end + 1] - base).tolist()
            for s, e in itertools.pairwise(cut):
                yield data[s:e].decode("utf-8")

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TermTable):
            return np.array_equal(self.offsets, other.offsets) and np.array_equal(
                self.blob, other.blob
            )
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable arrays: not hashable

    def lengths(self) -> np.ndarray:
        """Bytes of each term."""
        return np.diff(self.offsets)

    def take(self, rows: np.ndarray) -> TermTable:
        """The terms at ``rows``, in that order (gathered a chunk at a time)."""
        rows = np.asarray(rows, np.int64)
        lengths = self.lengths()[rows]
        blob = np.empty(int(lengths.sum()), np.uint8)
        offsets = _starts(lengths)
        for at in range(0, rows.size, CHUNK):
            part = slice(at, at + CHUNK)
            piece = segment_positions(self.offsets[rows[part]], lengths[part])
            blob[offsets[at] : offsets[min(at + CHUNK, rows.size)]] = self.blob[piece]
        return TermTable(
            blob,
            offsets,
            self.keys[rows],
            None if self.crc is None else self.crc[rows],
            None if self.adler is None else self.adler[rows],
        )

    def joined(self, sep: int = ord("\n")) -> np.ndarray:
        """The terms' bytes with ``sep`` between them (``"\\n".join(terms)`` encoded)."""
        n = len(self)
        if not n:
            return np.zeros(0, np.uint8)
        out = np.full(self.blob.size + n - 1, sep, np.uint8)
        lengths = self.lengths()
        for at in range(0, n, CHUNK):
            end = min(at + CHUNK, n)
            lo, hi = int(self.offsets[at]), int(self.offsets[end])
            shift = np.repeat(np.arange(at, end, dtype=np.int64), lengths[at:end])
            out[np.arange(lo, hi, dtype=np.int64) + shift] = self.blob[lo:hi]
        return out

    def index_of(self, other: TermTable) -> np.ndarray:
        """Where each of ``other``'s terms is in this table (int64), -1 where absent."""
        order = np.argsort(self.keys, kind="stable")
        keys = self.keys[order]
        if keys.size > 1 and bool(np.any(keys[1:] == keys[:-1])):
            return self._index_by_dict(other)
        if not keys.size:
            return np.full(len(other), -1, np.int64)
        at = np.minimum(np.searchsorted(keys, other.keys), keys.size - 1)
        found = np.where(keys[at] == other.keys, order[at], -1).astype(np.int64)
        rows = np.flatnonzero(found >= 0)
        found[rows[~same_terms(self, found[rows], other, rows)]] = -1  # a hash, not the term
        return found

    def _index_by_dict(self, other: TermTable) -> np.ndarray:
        at = {t: k for k, t in enumerate(self)}
        return np.fromiter((at.get(t, -1) for t in other), np.int64, len(other))


def same_terms(a: TermTable, rows_a: np.ndarray, b: TermTable, rows_b: np.ndarray) -> np.ndarray:
    """Whether ``a[rows_a[k]] == b[rows_b[k]]`` for each k, comparing bytes."""
    return same_bytes(
        a.blob,
        a.offsets[rows_a],
        a.lengths()[rows_a],
        b.blob,
        b.offsets[rows_b],
        b.lengths()[rows_b],
    )


def same_bytes(
    blob_a: np.ndarray,
    starts_a: np.ndarray,
    lengths_a: np.ndarray,
    blob_b: np.ndarray,
    starts_b: np.ndarray,
    lengths_b: np.ndarray,
) -> np.ndarray:
    """Whether piece k of ``blob_a`` (``lengths_a[k]`` bytes from ``starts_a[k]``) equals
    piece k of ``blob_b``, for each k: the lengths first, then the bytes, a chunk at a time."""
    equal: np.ndarray = lengths_a == lengths_b
    for at in range(0, equal.size, CHUNK):
        part = slice(at, at + CHUNK)
        n = np.where(equal[part], lengths_a[part], 0)
        pa = segment_positions(starts_a[part], n)
        pb = segment_positions(starts_b[part], n)
        owner = np.repeat(np.arange(n.size), n)
        differ = np.bincount(owner[blob_a[pa] != blob_b[pb]], minlength=n.size) > 0
        equal[part] &= ~differ
    return equal


def concat(first: TermTable, second: TermTable) -> TermTable:
    """``first``'s terms, then ``second``'s."""

    def both(x: np.ndarray | None, y: np.ndarray | None) -> np.ndarray | None:
        return None if x is None or y is None else np.concatenate((x, y))

    return TermTable(
        np.concatenate((first.blob, second.blob)),
        np.concatenate((first.offsets[:-1], second.offsets + first.blob.size)),
        np.concatenate((first.keys, second.keys)),
        both(first.crc, second.crc),
        both(first.adler, second.adler),
    )


def _joined(parts: list[np.ndarray], dtype: Any) -> np.ndarray:
    out: np.ndarray = (
        np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype)
    )
    return out


class LazyIndex(Mapping[str, int]):
    """term -> its index in a TermTable, the dictionary built on first use: statistics
    built only to be written (calibrate) never pay for it."""

    def __init__(self, terms: Sequence[str]) -> None:
        self._terms = terms
        self._at: dict[str, int] | None = None

    def _ids(self) -> dict[str, int]:
        if self._at is None:
            self._at = {t: k for k, t in enumerate(self._terms)}
        return self._at

    def get(self, key: str, default: Any = None) -> Any:
        return self._ids().get(key, default)

    def __getitem__(self, key: str) -> int:
        return self._ids()[key]

    def __contains__(self, key: object) -> bool:
        return key in self._ids()

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids())

    def __len__(self) -> int:
        return len(self._terms)
