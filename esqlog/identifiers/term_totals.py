"""Per-term sums the identifiers scan keeps as it reads: ttf, shard mask, df per shard.

Why: these used to be computed after the scan from every document's (term, tf, df)
triples held in memory, 12 bytes per posting; they are sums, ORs and maxima, so they
are folded in a page at a time instead and the triples are never kept (only the term
ids go on, to disk: esqlog.identifiers.postings). Integer arithmetic in any grouping
gives the same numbers as the one pass over all documents did.
"""

from __future__ import annotations

import numpy as np

_START = 1024


def _grown(array: np.ndarray, size: int) -> np.ndarray:
    """``array`` with room for at least ``size`` entries (doubling; new ones zero)."""
    if array.size >= size:
        return array
    out = np.zeros(max(size, 2 * array.size, _START), dtype=array.dtype)
    out[: array.size] = array
    return out


class TermTotals:
    """ttf, shard bits and each shard's largest reported df, per term id.

    Arrays have spare room at the end; :meth:`view` gives the first ``n`` entries.
    A shard's df array exists once a document of that shard with a term was seen.
    """

    def __init__(self) -> None:
        self.ttf = np.zeros(0, np.int64)
        self.mask = np.zeros(0, np.uint64)
        self.best: dict[int, np.ndarray] = {}  # shard -> int32 df per term

    def add(
        self, n_terms: int, ids: np.ndarray, tf: np.ndarray, df: np.ndarray, shard_of: np.ndarray
    ) -> None:
        """Fold in one page of postings: term ids, their tf and df, each one's shard."""
        self.ttf = _grown(self.ttf, n_terms)
        self.mask = _grown(self.mask, n_terms)
        for name in list(self.best):
            self.best[name] = _grown(self.best[name], n_terms)
        if not ids.size:
            return
        np.add.at(self.ttf, ids, tf.astype(np.int64))
        shards = np.unique(shard_of)
        np.bitwise_or.at(self.mask, ids, np.left_shift(np.uint64(1), shard_of.astype(np.uint64)))
        for shard in shards.tolist():
            best = self.best.get(shard)
            if best is None:
                best = self.best[shard] = np.zeros(max(n_terms, _START), np.int32)
            one = shards.size == 1
            np.maximum.at(
                best,
                ids if one else ids[shard_of == shard],
                (df if one else df[shard_of == shard]).astype(np.int32),
            )

    def absorb(self, other: TermTotals, mapping: np.ndarray, n_terms: int) -> None:
        """Add ``other``'s totals, its term k being this one's ``mapping[k]``."""
        k = mapping.size
        self.ttf = _grown(self.ttf, n_terms)
        self.mask = _grown(self.mask, n_terms)
        for name in list(self.best):
            self.best[name] = _grown(self.best[name], n_terms)
        if not k:
            return
        self.ttf[mapping] += _grown(other.ttf, k)[:k]  # mapping has no repeats
        self.mask[mapping] |= _grown(other.mask, k)[:k]
        for shard, theirs in other.best.items():
            best = self.best.get(shard)
            if best is None:
                best = self.best[shard] = np.zeros(max(n_terms, _START), np.int32)
            best[mapping] = np.maximum(best[mapping], _grown(theirs, k)[:k])

    def view(self, n: int) -> tuple[np.ndarray, np.ndarray, dict[int, np.ndarray]]:
        """(ttf, mask, per-shard df) of the first ``n`` terms, by shard in order."""
        return (
            _grown(self.ttf, n)[:n],
            _grown(self.mask, n)[:n],
            {s: _grown(b, n)[:n] for s, b in sorted(self.best.items())},
        )
