"""What an identifiers scan hands on to the build, as arrays: terms, splits, totals.

Why: a SplitCollector maps terms to ids with a dictionary while it scans (the fastest
lookup Python has), but after the scan nothing needs a Python object per term. At the
million documents of the mix, the scan workers' tables pickled term by term, the parent's
merged dictionary and the build's per-term tuples were most of the calibration's 2.3 GiB
peak (docs/benchmarks/calibrate-speed.md). Here a collector's tables become arrays once
its scan is over (:func:`tables_of`): the terms a TermTable (esqlog.statistics.term_table),
each term's split a row of a CSR matrix over a table of sub-words, and whether the split
was learned from a casing in the text or is the term's own (a lower-cased term that still
splits at ``_``, dots or letter/digit boundaries). Shards scanned apart are merged in
shard order (:class:`TablesMerger`) by hash lookups, exactly as esqlog.identifiers.scan's
``absorb`` merges collectors: the new terms after the known ones, a term's split the first
learned one in shard order, else its own.
"""

from __future__ import annotations

import re
from array import array
from dataclasses import dataclass, field

import numpy as np

from esqlog.identifiers.learned import LearnedSplits
from esqlog.identifiers.postings import PostingLog
from esqlog.identifiers.term_totals import TermTotals
from esqlog.scoring.subwords import split_identifier
from esqlog.statistics.term_table import CHUNK, TermTable, concat, segment_positions

_PLAIN = re.compile(r"[a-z]+").fullmatch


@dataclass
class ShardTables:
    """One collector's (or several merged collectors') per-term tables, as arrays."""

    terms: TermTable
    subwords: TermTable  # every sub-word some split names (in no particular order)
    split_ptr: np.ndarray  # int64, len(terms) + 1: term k's split is a row of ...
    split_idx: np.ndarray  # int32 ... sub-word ids, in the split's order
    learned: np.ndarray  # bool per term: the split came from a casing in the text
    totals: TermTotals
    postings: PostingLog
    docs: int = 0
    shard_docs: dict[int, int] = field(default_factory=dict)

    def discard(self) -> None:
        """Delete the postings on disk (a failed scan)."""
        self.postings.discard()


def own_split(term: str) -> tuple[str, ...]:
    """The split of a term no casing taught: plain lower-case words do not split; others
    split at ``_``, dots and letter/digit boundaries."""
    return () if _PLAIN(term) else split_identifier(term)


def tables_of(
    terms: list[str],
    learned: LearnedSplits,
    totals: TermTotals,
    postings: PostingLog,
    docs: int,
    shard_docs: dict[int, int],
) -> ShardTables:
    """A collector's tables as arrays (``learned``: the splits its casings gave).

    Each term's split is worked out here, in the scanning process: the learned one, else
    the term's own. ``terms`` is emptied once encoded.
    """
    n = len(terms)
    has = learned.flags
    sub_id, names = learned.subword_id, learned.subwords  # extended by the own splits
    own, own_len = array("i"), array("q")
    for k, term in enumerate(terms):
        if k < len(has) and has[k]:
            own_len.append(0)
            continue
        parts = own_split(term)
        own_len.append(len(parts))
        for part in parts:
            found = sub_id.get(part)
            if found is None:
                found = sub_id[part] = len(names)
                names.append(part)
            own.append(found)
    table = TermTable.of(terms)
    terms.clear()
    flags = np.zeros(n, bool)
    which = np.frombuffer(learned.term, np.int32).astype(np.int64)
    flags[which] = True
    lengths = np.frombuffer(own_len, np.int64).copy()
    learned_len = np.frombuffer(learned.length, np.int32).astype(np.int64)
    lengths[which] = learned_len
    ptr = np.zeros(n + 1, np.int64)
    np.cumsum(lengths, out=ptr[1:])
    idx = np.empty(int(ptr[-1]), np.int32)
    copy_segments(
        idx,
        ptr[which],
        np.frombuffer(learned.parts, np.int32),
        np.cumsum(learned_len) - learned_len,
        learned_len,
    )
    mine = np.flatnonzero(~flags)
    own_lengths = lengths[mine]
    copy_segments(
        idx,
        ptr[mine],
        np.frombuffer(own, np.int32),
        np.cumsum(own_lengths) - own_lengths,
        own_lengths,
    )
    subwords = TermTable.of(names, checksums=False)
    return ShardTables(table, subwords, ptr, idx, flags, totals, postings, docs, dict(shard_docs))


def copy_segments(
    dst: np.ndarray,
    dst_starts: np.ndarray,
    src: np.ndarray,
    src_starts: np.ndarray,
    lengths: np.ndarray,
) -> None:
    """``dst[dst_starts[k]:+lengths[k]] = src[src_starts[k]:+lengths[k]]`` for every k,
    a chunk of pieces at a time."""
    for at in range(0, lengths.size, CHUNK):
        part = slice(at, at + CHUNK)
        dst[segment_positions(dst_starts[part], lengths[part])] = src[
            segment_positions(src_starts[part], lengths[part])
        ]


class TablesMerger:
    """Shards' tables added in shard order into one ShardTables (their postings into
    ``postings``), as one collector reading the shards in turn would have them."""

    def __init__(self, postings: PostingLog) -> None:
        self.postings = postings
        self.terms: TermTable | None = None
        self.subwords: TermTable | None = None
        self.totals = TermTotals()
        self.docs = 0
        self.shard_docs: dict[int, int] = {}
        #: per part added: its split rows (ptr, global sub-word ids)
        self.rows: list[tuple[np.ndarray, np.ndarray]] = []
        self.source = np.zeros(0, np.int16)  # per term: the part its split comes from
        self.row = np.zeros(0, np.int32)  # ... and its row there
        self.learned = np.zeros(0, bool)

    def add(self, part: ShardTables) -> None:
        known = 0 if self.terms is None else len(self.terms)
        n = len(part.terms)
        if self.terms is None:
            mapping = np.arange(n, dtype=np.int64)
            self.terms, self.totals = part.terms, part.totals  # taken over, not copied
        else:
            mapping = self.terms.index_of(part.terms)
            new = np.flatnonzero(mapping < 0)
            mapping[new] = known + np.arange(new.size)
            self.terms = concat(self.terms, part.terms.take(new))
            self.totals.absorb(part.totals, mapping.astype(np.int32), len(self.terms))
        self.rows.append((part.split_ptr, self._subword_ids(part.subwords)[part.split_idx]))
        total = len(self.terms)
        grown = total - known
        self.source = np.concatenate((self.source, np.full(grown, len(self.rows) - 1, np.int16)))
        self.row = np.concatenate((self.row, np.zeros(grown, np.int32)))
        self.learned = np.concatenate((self.learned, np.zeros(grown, bool)))
        fresh = mapping >= known
        # a known term takes this part's split only when this part learned one and no
        # earlier part did (the first learned split in shard order wins)
        take = fresh | (part.learned & ~self.learned[mapping])
        self.source[mapping[take]] = len(self.rows) - 1
        self.row[mapping[take]] = np.flatnonzero(take)
        self.learned[mapping] |= part.learned
        self.postings.absorb(part.postings, mapping.astype(np.int32))
        self.docs += part.docs
        for shard, docs in part.shard_docs.items():
            self.shard_docs[shard] = max(self.shard_docs.get(shard, 0), docs)

    def _subword_ids(self, subwords: TermTable) -> np.ndarray:
        """The merged ids of a part's sub-words (new ones appended)."""
        if self.subwords is None:
            self.subwords = subwords
            return np.arange(len(subwords), dtype=np.int32)
        found = self.subwords.index_of(subwords)
        new = np.flatnonzero(found < 0)
        found[new] = len(self.subwords) + np.arange(new.size)
        self.subwords = concat(self.subwords, subwords.take(new))
        return found.astype(np.int32)

    def result(self) -> ShardTables:
        """The merged tables (the splits gathered from the parts they were taken from)."""
        terms = self.terms or TermTable.of([])
        lengths = np.zeros(len(terms), np.int64)
        for k, (ptr, _) in enumerate(self.rows):
            mine = np.flatnonzero(self.source == k)
            lengths[mine] = np.diff(ptr)[self.row[mine]]
        split_ptr = np.zeros(len(terms) + 1, np.int64)
        np.cumsum(lengths, out=split_ptr[1:])
        split_idx = np.empty(int(split_ptr[-1]), np.int32)
        for k, (ptr, ids) in enumerate(self.rows):
            mine = np.flatnonzero(self.source == k)
            copy_segments(split_idx, split_ptr[mine], ids, ptr[self.row[mine]], lengths[mine])
        self.rows = []
        return ShardTables(
            terms,
            self.subwords or TermTable.of([], checksums=False),
            split_ptr,
            split_idx,
            self.learned,
            self.totals,
            self.postings,
            self.docs,
            self.shard_docs,
        )


def split_words(tables: ShardTables) -> tuple[TermTable, np.ndarray]:
    """Every word, and the parts of every split as word ids (in ``split_idx`` order).

    The words are the terms, then the sub-words that are no term in the order the splits
    (in term order) first name them: the ids one dictionary of words would hand out
    walking the splits term by term.
    """
    n = len(tables.terms)
    as_term = tables.terms.index_of(tables.subwords)  # -1: the sub-word is no term
    chain = tables.split_idx.astype(np.int64)
    outside = chain[as_term[chain] < 0]
    new, first = np.unique(outside, return_index=True)
    new = new[np.argsort(first, kind="stable")]
    word_of = as_term
    word_of[new] = n + np.arange(new.size)
    return concat(tables.terms, tables.subwords.take(new)), word_of[chain]
