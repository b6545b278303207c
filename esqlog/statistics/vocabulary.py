"""A snapshot of a field's vocabulary: every term's global document frequency, in memory.

Why: ``boost``, ``script`` and ``rerank`` need n(t) for every query term. Asking the cluster
costs one round trip per query that carries a term not seen before, and code-search queries
nearly always do (a new identifier each time): on a local index that round trip costs half
as much as the search itself. A snapshot, built once by ``esqlog calibrate --vocabulary``,
answers from memory instead.

How it is built: one pass over every live document's term vectors (the same scan as the
exact h_tok, which it yields too). Term vectors report each term's ``doc_freq`` on the shard
that holds the document, from the shard's Lucene reader (deleted documents included, as in
scoring). Scanning shard by shard (``preference=_shards:k``) gives every shard's df of every
term it holds in a live document; their sum is the global df a DFS query scores with. (A term
left only in deleted, unmerged documents of some shard is not seen there; that shard's share
of its df is then missing until a merge drops it from the engine's count too.)

How it is kept: terms are stored as 64-bit BLAKE2b hashes, sorted, with their df: 12 bytes a
term, looked up with one binary search. Two vocabulary terms sharing a hash (odds ~3e-8 for
a million terms) would give one of them the other's df; a query term that is not in the
vocabulary gets df 0, as the cluster would say before new documents arrive. The wrapper
checks every minute that the index has not drifted from the snapshot (esqlog.wrapper).
"""

from __future__ import annotations

import hashlib
import json
import warnings
import zlib
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from dataclasses import field as dc_field
from pathlib import Path
from typing import Any

import numpy as np

from esqlog.atomic import atomic_write
from esqlog.errors import UsageError
from esqlog.statistics.hapax import HapaxEstimate
from esqlog.statistics.mapped_terms import decreases
from esqlog.statistics.npz import (
    MAX_META_BYTES,
    Member,
    count,
    flat_json,
    meta_problem,
    npz_bytes,
    plain_text,
    read_npz,
)
from esqlog.statistics.npz import shown as _shown
from esqlog.statistics.term_counts import TermCounts, aligned
from esqlog.statistics.term_keys import (
    BLOOM_K,
    build_bloom,
    term_digest,
    term_hash,
    term_hashes,
)
from esqlog.statistics.term_table import TermTable

FORMAT = "esqlog-vocabulary/1"
MAX_SNAPSHOT_BYTES = 8 << 30  # ~600 million terms; more is not a snapshot esqlog wrote
RECENT_TERMS = 100_000  # df answers kept in a dict (~10 MB at most)


@dataclass(frozen=True)
class Vocabulary:
    """Global df of every term of one field, as of ``created_at``; immutable, thread-safe."""

    index: str
    index_uuid: str
    field: str
    doc_count: int  # N when the snapshot was taken (deleted documents included)
    sum_ttf: int
    live_docs: int
    created_at: str
    hashes: np.ndarray  # uint64, sorted, unique
    df: np.ndarray  # uint32, aligned with hashes
    #: Bloom filter of the terms (build_bloom): most absent terms (join candidates, above
    #: all) are ruled out without hashing them or searching the arrays. None: always search.
    bloom: np.ndarray | None = dc_field(default=None, compare=False, repr=False)
    #: term -> df of recently asked terms (bounded by RECENT_TERMS; dict ops are atomic)
    _recent: dict[str, int] = dc_field(default_factory=dict, compare=False, repr=False)
    _bloom_bytes: bytes | memoryview = dc_field(default=b"", compare=False, repr=False)
    #: the arrays as Python sequences over the same memory, for a query's few lookups
    _keys: Sequence[int] = dc_field(default=(), compare=False, repr=False)
    _dfs: Sequence[int] = dc_field(default=(), compare=False, repr=False)

    def __post_init__(self) -> None:
        """View the filter and the arrays as memoryviews (no copy) for :meth:`might_hold`
        and :meth:`_search`: indexing one is as fast a bit test as indexing bytes, and a
        mapped snapshot (load_vocabulary) stays one copy shared by every process."""
        if self.bloom is not None and self.bloom.size:
            bloom = np.ascontiguousarray(self.bloom, dtype=np.uint8)
            object.__setattr__(self, "_bloom_bytes", bloom.data.cast("B"))
        hashes = np.ascontiguousarray(self.hashes, dtype=np.uint64)
        dfs = np.ascontiguousarray(self.df, dtype=np.uint32)
        object.__setattr__(self, "_keys", hashes.data.cast("B").cast("Q"))
        object.__setattr__(self, "_dfs", dfs.data.cast("B").cast("I"))

    def __len__(self) -> int:
        return int(self.hashes.size)

    def might_hold(self, term: str) -> bool:
        """False only for a term the vocabulary certainly lacks (no false negatives).

        Unrolled and exiting at the first clear bit (most absent terms stop there): this
        runs for every join candidate of every query, so it is written for speed; the tests
        check it against esqlog.statistics.term_keys.bloom_positions, which build_bloom's
        positions come from.
        """
        bits = self._bloom_bytes
        if not bits:
            return True
        mask = len(bits) * 8 - 1
        data = term.encode("utf-8")
        h1 = zlib.crc32(data)
        p = h1 & mask
        if not bits[p >> 3] >> (p & 7) & 1:
            return False
        h2 = zlib.adler32(data) | 1
        for i in range(1, BLOOM_K):
            p = (h1 + i * h2) & mask
            if not bits[p >> 3] >> (p & 7) & 1:
                return False
        return True

    def df_of(self, terms: Sequence[str]) -> dict[str, int]:
        """df of each term; 0 for a term the vocabulary does not hold.

        Recently asked terms are answered from a bounded dict (queries share most words);
        the others by hashing and one vectorised binary search.
        """
        known = self._recent
        missing = [t for t in dict.fromkeys(terms) if t not in known]
        if missing:
            if len(known) + len(missing) > RECENT_TERMS:
                known.clear()  # simple and bounded; refills from the next queries
                missing = list(dict.fromkeys(terms))  # the cleared ones are missing again
            known.update(dict.fromkeys(missing, 0))
            known.update(self._search([t for t in missing if self.might_hold(t)]))
        return {t: known[t] for t in terms}

    def df_array(self, terms: Sequence[str]) -> np.ndarray:
        """df of many terms at once (0 when absent), vectorised, bypassing the recent-terms
        cache: for bulk lookups such as a whole vocabulary (esqlog.identifiers.calibrate)."""
        if not terms or not self.hashes.size:
            return np.zeros(len(terms), dtype=np.int64)
        keys = term_hashes(terms)
        at = np.minimum(np.searchsorted(self.hashes, keys), self.hashes.size - 1)
        return np.where(self.hashes[at] == keys, self.df[at], 0).astype(np.int64)

    def _search(self, terms: Sequence[str]) -> dict[str, int]:
        """df of a query's few terms by binary search of the sorted hashes, in plain Python
        over memoryviews: numpy's searchsorted is as fast on a warm cache but its fixed cost
        per call grows ~6x on the cold one a search meets after waiting on the network
        (measured: 122 against 21 us a query's lookup), and a query asks a handful."""
        keys, dfs, size = self._keys, self._dfs, len(self._keys)
        out: dict[str, int] = {}
        for term in terms:
            key = int.from_bytes(term_digest(term), "little")
            at = bisect_left(keys, key)
            out[term] = dfs[at] if at < size and keys[at] == key else 0
        return out


# --- building -------------------------------------------------------------------------------


@dataclass
class VocabularyScan:
    """What one pass over all term vectors collected: global df and token counts per term."""

    #: dicts, or TermCounts over one list of terms (the identifiers scan's: no per-term
    #: objects, esqlog.statistics.term_counts)
    df: Mapping[str, int]
    ttf: Mapping[str, int]
    docs: int
    #: N and sum_ttf as the scan's own term-vector answers saw them (per shard, the reading
    #: with the most documents, summed): every df above was read from a reader with at most
    #: this N, so df <= doc_count holds even when documents arrive during the scan
    doc_count: int = 0
    sum_ttf: int = 0

    def hapax(self) -> HapaxEstimate:
        """Exact h_tok: tokens of terms whose global df is 1, over all tokens of live docs."""
        both = aligned(self.df, self.ttf)
        if both is not None:
            _, df, ttf = both
            tokens, hapax_tokens = int(ttf.sum()), int(ttf[df == 1].sum())
        else:
            tokens = sum(self.ttf.values())
            hapax_tokens = sum(n for t, n in self.ttf.items() if self.df.get(t, 0) == 1)
        h = hapax_tokens / tokens if tokens else 0.0
        return HapaxEstimate(h, h, h, "exact", self.docs, tokens)

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(sorted unique hashes, df) for the snapshot file."""
        terms = self.terms()
        keys = (
            terms.keys.copy()
            if isinstance(terms, TermTable)
            else np.fromiter((term_hash(t) for t in terms), dtype=np.uint64, count=len(terms))
        )
        counts = self.df.counts if isinstance(self.df, TermCounts) else None
        df = (
            np.fromiter((self.df[t] for t in terms), dtype=np.uint32, count=len(terms))
            if counts is None
            else counts.astype(np.uint32)
        )
        order = np.argsort(keys, kind="stable")
        keys, df = keys[order], df[order]
        if keys.size > 1:  # a hash shared by two terms: keep the larger df (never seen so far)
            first = np.concatenate(([True], keys[1:] != keys[:-1]))
            if not first.all():
                df = np.maximum.reduceat(df, np.flatnonzero(first))
                keys = keys[first]
        return keys, df

    def terms(self) -> Sequence[str]:
        """Every term, in the order of ``df``."""
        return self.df.terms if isinstance(self.df, TermCounts) else list(self.df)


def vocabulary_from_scan(
    scan: VocabularyScan,
    *,
    index: str,
    index_uuid: str,
    field: str,
    doc_count: int,
    sum_ttf: int,
    live_docs: int,
    created_at: str,
) -> Vocabulary:
    """The compact snapshot of a scan, with the field statistics it belongs with.

    ``doc_count`` / ``sum_ttf`` were read before the scan; documents indexed meanwhile make
    the scan's own reading larger, and that one is consistent with the df it read.
    """
    if scan.doc_count > doc_count:
        doc_count, sum_ttf = scan.doc_count, max(sum_ttf, scan.sum_ttf)
    keys, df = scan.arrays()
    return Vocabulary(
        index,
        index_uuid,
        field,
        doc_count,
        sum_ttf,
        live_docs,
        created_at,
        keys,
        _clamped(df, doc_count, index),
        build_bloom(scan.terms()),
    )


def _clamped(df: np.ndarray, doc_count: int, index: str) -> np.ndarray:
    """df capped at N, with one warning: a df above N cannot come from one Lucene reader
    (statistics read at different moments), and would make every weight of it invalid."""
    over = int(np.count_nonzero(df > doc_count))
    if not over:
        return df
    warnings.warn(
        f"esqlog: {over:,} terms of the vocabulary snapshot of {index!r} have a "
        f"document frequency above its document count {doc_count:,} (documents "
        "were indexed while it was taken); they count as in every document until "
        "esqlog calibrate --vocabulary runs again",
        RuntimeWarning,
        stacklevel=3,
    )
    return np.asarray(np.minimum(df, np.uint32(min(max(doc_count, 0), 2**32 - 1))), dtype=np.uint32)


# --- files ----------------------------------------------------------------------------------


def _meta(vocab: Vocabulary) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "index": vocab.index,
        "index_uuid": vocab.index_uuid,
        "field": vocab.field,
        "doc_count": vocab.doc_count,
        "sum_ttf": vocab.sum_ttf,
        "live_docs": vocab.live_docs,
        "created_at": vocab.created_at,
        "terms": len(vocab),
    }


def save_vocabulary(vocab: Vocabulary, path: str | Path) -> tuple[Path, str]:
    """Write the snapshot atomically (.npz); returns the path and the file's SHA-256."""
    payload, digest = snapshot_payload(vocab)
    return atomic_write(path, payload, "vocabulary file"), digest


def snapshot_payload(vocab: Vocabulary) -> tuple[bytes, str]:
    """The .npz bytes of a snapshot and their SHA-256 (which names the file, see calibrate)."""
    arrays: dict[str, Any] = {
        "hashes": vocab.hashes,
        "df": vocab.df,
        "meta": np.frombuffer(json.dumps(_meta(vocab)).encode("utf-8"), dtype=np.uint8),
    }
    if vocab.bloom is not None:
        arrays["bloom"] = vocab.bloom
    payload = npz_bytes(arrays)
    return payload, hashlib.sha256(payload).hexdigest()


#: The arrays of a snapshot: term hashes, their df, the metadata (JSON bytes), the filter
_MEMBERS = {
    "hashes": Member(("<u8",), 1),
    "df": Member(("<u4", "<u8", "<i4", "<i8"), 1),
    "meta": Member(("|u1",), 1, max_bytes=MAX_META_BYTES),
    "bloom": Member(("|u1",), 1, required=False),
}


def load_vocabulary(path: str | Path, sha256: str | None = None) -> Vocabulary:
    """Read a snapshot, with a one-line error for a missing, damaged, foreign or mismatched file.

    The path comes from a calibration file, which is untrusted, and so is the snapshot:
    it is read only as a bounded regular file (never a FIFO or a device), its zip directory
    and array headers are checked before anything they declare is allocated, the checksum
    is compared before the arrays are read (esqlog.statistics.npz.read_npz), and every metadata
    field must have its type and range. A file that does not parse is named damaged before
    the checksum is compared, so a truncated snapshot is not misreported as another
    calibration's. With a checksum the arrays are mapped read-only from the file, not
    copied: processes that load one snapshot share it in the page cache.
    """
    source = Path(path)
    fix = "re-run esqlog calibrate --vocabulary --out FILE"
    raw = read_npz(
        source,
        MAX_SNAPSHOT_BYTES,
        "vocabulary file",
        fix,
        _MEMBERS,
        sha256,
        mapped=sha256 is not None,
    )  # the checksum stands in for the CRC-32
    name = repr(str(source))
    meta = flat_json(raw["meta"].data)
    if meta is None:
        raise UsageError(
            f"vocabulary file {name} is not an esqlog vocabulary: unknown format "
            "(its metadata is not a flat JSON object of finite values)",
            fix,
        )
    if meta.get("format") != FORMAT:
        raise UsageError(
            f"vocabulary file {name} has an unknown format {_shown(meta.get('format'))}", fix
        )
    hashes, df = raw["hashes"].array(), raw["df"].array()
    bloom = raw["bloom"].array() if "bloom" in raw else None
    problem = meta_problem(meta, _META_RULES)
    if problem:
        raise UsageError(f"vocabulary file {name} has incomplete metadata ({problem})", fix)
    problem = _array_problem(meta, hashes, df, bloom)
    if problem:
        raise UsageError(f"vocabulary file {name} is inconsistent ({problem})", fix)
    doc_count = meta["doc_count"]
    return Vocabulary(
        meta["index"],
        meta["index_uuid"],
        meta["field"],
        doc_count,
        meta["sum_ttf"],
        meta["live_docs"],
        meta["created_at"],
        hashes,
        _clamped(df.astype(np.uint32, copy=False), doc_count, meta["index"]),
        bloom,
    )


_META_RULES = {
    "index": plain_text,
    "index_uuid": plain_text,
    "field": plain_text,
    "created_at": plain_text,
    # N and the token count of a field with text (calibrate refuses an empty one)
    "doc_count": count(1),
    "sum_ttf": count(1),
    "live_docs": count(0),
    "terms": count(0),
}


def _array_problem(
    meta: dict[str, Any], hashes: np.ndarray, df: np.ndarray, bloom: np.ndarray | None
) -> str | None:
    """What is wrong with the arrays, given the metadata, or None."""
    if meta["terms"] != hashes.size or df.shape != hashes.shape:
        return f"{meta['terms']:,} terms, {hashes.size:,} hashes and {df.size:,} df"
    if hashes.size > 1 and decreases(hashes, strict=True):
        return "term hashes are not sorted and unique"
    if df.size and (int(df.min()) < 0 or int(df.max()) >= 2**32):
        return "a document frequency is negative or over 2**32"
    if bloom is not None and (bloom.size < 8 or bloom.size & (bloom.size - 1)):
        return f"the term filter has {bloom.size:,} bytes, not a power of two"
    return None
