"""How a vocabulary keys its terms: a stable 64-bit hash each, and a Bloom filter over them.

Why a module of its own: the keys outlive one process. ``esqlog calibrate --vocabulary``
writes them into a snapshot, the wrapper looks query terms up by them, and ``esqlog index``
(esqlog.indexing.refresh) adds the terms of changed files by the same hash and the same
filter positions; a change here is a change of the snapshot format, so it is made in one
place. The hash is BLAKE2b (the same value in every process and version); the filter's bit
positions are double hashing on CRC-32 and Adler-32, cheap C-implemented checksums that the
scan workers compute once (esqlog.statistics.term_table).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Sequence

import numpy as np

from esqlog.statistics.term_table import TermTable, digest

BLOOM_K = 4  # bit positions per term
BLOOM_BITS_PER_TERM = 12  # at least; with k = 4 under 0.6% false positives


def term_digest(term: str) -> bytes:
    """The term's 8-byte BLAKE2b digest, of which :func:`term_hash` is the integer."""
    return digest(term.encode("utf-8"))


def term_hash(term: str) -> int:
    """The stable 64-bit key of a term (BLAKE2b: same value in every process and version)."""
    return int.from_bytes(term_digest(term), "little")


def term_hashes(terms: Iterable[str]) -> np.ndarray:
    """term_hash of every term as one uint64 array (digests joined, read little-endian)."""
    return np.frombuffer(b"".join([term_digest(t) for t in terms]), dtype="<u8").astype(np.uint64)


def bloom_positions(term: str, k: int, mask: int) -> list[int]:
    """Bit positions of a term in the membership filter (double hashing on CRC-32/Adler-32).

    Cheap C-implemented checksums, not cryptographic ones: a weak spread can only raise the
    filter's false-positive rate (a wasted exact lookup), never hide a vocabulary term.
    """
    data = term.encode("utf-8")
    h1, h2 = zlib.crc32(data), zlib.adler32(data) | 1
    return [(h1 + i * h2) & mask for i in range(k)]


def build_bloom(terms: Sequence[str], k: int = BLOOM_K) -> np.ndarray:
    """A Bloom filter of the terms: >= BLOOM_BITS_PER_TERM bits a term, a power of two."""
    size = 64
    while size < len(terms) * BLOOM_BITS_PER_TERM:
        size *= 2
    mask = size - 1
    if isinstance(terms, TermTable) and terms.crc is not None and terms.adler is not None:
        h1 = terms.crc.astype(np.uint64)  # the checksums the scan workers computed
        h2 = terms.adler.astype(np.uint64) | np.uint64(1)
    else:
        data = [t.encode("utf-8") for t in terms]
        h1 = np.fromiter((zlib.crc32(d) for d in data), dtype=np.uint64, count=len(data))
        h2 = np.fromiter((zlib.adler32(d) | 1 for d in data), dtype=np.uint64, count=len(data))
        del data
    bits = np.zeros(size // 8, dtype=np.uint8)
    for i in range(k):
        pos = (h1 + np.uint64(i) * h2) & np.uint64(mask)
        np.bitwise_or.at(
            bits,
            (pos >> np.uint64(3)).astype(np.int64),
            (np.uint8(1) << (pos & np.uint64(7)).astype(np.uint8)),
        )
    return bits
