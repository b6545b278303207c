"""The identifiers mode's part of calibrate's vocabulary scan: every document's terms and
the original casings in its text (esqlog.identifiers.split_stats builds the statistics from them).

Why no worker thread: one was tried (handing pages to a thread to overlap the engine's
requests). Measured on Go 153K (scripts/bench/calibrate_identifiers_speed.py), it cost
~3.5 s more Python CPU (22.5 s inline against 26 s; two CPU-bound threads contend for the
GIL) for the same wall time, so the hook runs inline, a page at a time.
Why the hook also counts df and ttf: it maps every term of every document to an id anyway;
counting over those ids with numpy (term_statistics) replaces esqlog.statistics.vocabulary's own
per-term dictionary loop, which the scan then skips (``keeps_term_stats``).
"""

from __future__ import annotations

import operator
from array import array
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from esqlog.identifiers.learned import LearnedSplits
from esqlog.identifiers.memory import MemoryLimit
from esqlog.identifiers.postings import PostingLog
from esqlog.identifiers.shard_tables import ShardTables, tables_of
from esqlog.identifiers.term_totals import TermTotals
from esqlog.scoring.subwords import CASED_TOKEN, split_identifier
from esqlog.statistics.term_counts import TermCounts

MAX_SHARDS = 64  # presence masks are uint64
#: documents processed at once (the scan's page size)
BATCH = 500
_TERM_FREQ = operator.itemgetter("term_freq")
_DOC_FREQ = operator.itemgetter("doc_freq")
_WORDS = CASED_TOKEN.findall
_Doc = tuple[int, Any, Mapping[str, Any]]


class SplitCollector:
    """Per-document hook of the vocabulary scan (esqlog.statistics.vocabulary.DocHook).

    Read ``terms``, ``term_id``, ``splits``, ``totals`` and ``postings`` only after
    :meth:`finish` (build_identifier_stats calls it). ``memory`` bounds the buffers that
    grow with the documents (esqlog.identifiers.memory); ``processes``: how many
    collectors scan at once (they share the buffer budget); ``spill_dir``: where the
    postings go past the buffer (None: the system's temporary directory). Call
    :meth:`discard` when done to delete them.
    """

    #: esqlog.statistics.vocabulary's scan leaves its per-term df and ttf counting to this hook
    #: (term_statistics). Same numbers, same term order (first seen in scan order).
    keeps_term_stats = True

    def __init__(
        self,
        field_name: str,
        memory: MemoryLimit | None = None,
        processes: int = 1,
        spill_dir: str | Path | None = None,
    ) -> None:
        self.field = field_name
        self.memory = memory or MemoryLimit()
        self.processes = processes
        self.spill_dir = spill_dir
        self.postings = PostingLog(self.memory.buffer_bytes(processes), spill_dir)
        self.restart()

    def restart(self) -> None:
        """Forget everything: the scan is being retried from the start."""
        self._pending: list[_Doc] = []
        self.term_id: dict[str, int] = {}
        self.terms: list[str] = []
        self.splits = LearnedSplits()
        self.tried: set[str] = set()  # cased forms already split (most repeat): a cache
        self.postings.discard()
        self.docs = 0  # documents scanned
        self.totals = TermTotals()  # ttf, shard mask and per-shard df of every term
        self.global_df: np.ndarray | None = None  # set by term_statistics()
        #: per shard: the field's document count as its term vectors reported it (deleted
        #: documents included, as the shard's BM25 counts them)
        self.shard_docs: dict[int, int] = {}
        self._tables: ShardTables | None = None  # set by tables() or adopt()

    def restart_empty(self) -> None:
        """Let go of every table (absorb took them over); the postings are not deleted."""
        self.postings = PostingLog(self.postings.buffer_bytes, self.spill_dir)
        self.restart()

    def tables(self) -> ShardTables:
        """What this collector saw, as arrays (esqlog.identifiers.shard_tables), once its
        scan is over: its term list and splits are handed over and emptied (``terms`` is
        then the TermTable); a collector that adopted merged tables returns those."""
        self.finish()
        if self._tables is None:
            self._tables = tables_of(
                self.terms, self.splits, self.totals, self.postings, self.docs, self.shard_docs
            )
            self.term_id, self.splits, self.tried = {}, LearnedSplits(), set()
        return self._tables

    def adopt(self, tables: ShardTables) -> None:
        """Take over the merged tables of the shards (esqlog.identifiers.shard_task)."""
        self.finish()
        self._tables = tables
        self.term_id, self.splits, self.tried, self.terms = {}, LearnedSplits(), set(), []
        self.totals, self.postings, self.docs = tables.totals, tables.postings, tables.docs
        self.shard_docs = dict(tables.shard_docs)
        self.global_df = None

    def release(self) -> None:
        """Let go of the per-term tables once the build has read them (the postings stay,
        for :meth:`discard`); a released collector serves no second build."""
        self._tables, self.totals, self.terms, self.term_id = None, TermTotals(), [], {}
        self.splits, self.tried, self.global_df = LearnedSplits(), set(), None

    def term_count(self) -> int:
        """How many distinct terms the scan has seen."""
        return len(self._tables.terms) if self._tables is not None else len(self.terms)

    def field_statistics(self, shard: int, doc_count: int) -> None:
        """The scan saw this field doc_count on a shard (it keeps the largest)."""
        self.shard_docs[shard] = max(self.shard_docs.get(shard, 0), doc_count)

    def __call__(self, shard: int, hit: Mapping[str, Any], terms: Mapping[str, Any]) -> None:
        """Queue the document (its shard, the field's source, its term vector)."""
        if shard >= MAX_SHARDS:
            raise ValueError(f"the identifiers mode supports up to {MAX_SHARDS} shards")
        self._pending.append((shard, (hit.get("_source") or {}).get(self.field), terms))
        if len(self._pending) >= BATCH:
            self.finish()

    def finish(self) -> None:
        """Process the documents still queued (idempotent)."""
        batch, self._pending = self._pending, []
        if batch:
            self._process(batch)

    def close(self) -> None:
        """Drop documents not yet processed (a failed scan; idempotent)."""
        self._pending = []

    def discard(self) -> None:
        """Delete the postings written to disk (after the build, or a failure)."""
        self._pending = []
        self.postings.discard()

    def _process(self, batch: list[_Doc]) -> None:
        """Record each document's terms; learn splits from its text (:func:`_record`)."""
        _record(self, batch)

    def term_statistics(self) -> tuple[TermCounts, TermCounts]:
        """(global df, ttf) of every term seen, as esqlog.statistics.vocabulary's scan counts
        them: per shard the largest df a term vector reported, summed over shards; tf summed.
        Arrays over ``terms``, not dictionaries (esqlog.statistics.term_counts)."""
        self.finish()
        terms: Sequence[str] = self._tables.terms if self._tables is not None else self.terms
        n = len(terms)
        ttf, _, per_shard = self.totals.view(n)
        df = np.zeros(n, dtype=np.int64)
        for best in per_shard.values():
            df += best
        self.global_df = df
        return TermCounts(terms, df), TermCounts(terms, ttf.copy())


def _record(collector: SplitCollector, batch: list[_Doc]) -> None:
    """Record each document's terms; learn splits from the casings in its text.

    A term takes the split of the first casing that splits, among the casings found in
    the text of a document holding that term. That is a function of the documents in
    scan order alone, so shards collected apart and merged in shard order
    (:func:`absorb`) give the same splits as one collector reading them in turn.

    Hot: one dictionary lookup per term and per token, one split per distinct original
    casing (the first casing seen that splits wins). A set-difference variant that
    visits only new tokens measured no faster in CPU seconds (the regular expression
    over the text is most of the cost), so the plain loop stays. The page's term ids,
    tf and df are folded into ``totals`` at once; only the ids are kept (``postings``).
    """
    if len(collector.tried) > collector.memory.tried_casings:
        collector.tried = set()  # a cache: forgetting it only costs splitting again
    ids, names = collector.term_id, collector.terms
    splits, tried = collector.splits, collector.tried
    learned = splits.flags  # extended in place as splits are added
    get = ids.get
    doc_terms, doc_tf, doc_df = array("i"), array("i"), array("i")
    lengths, doc_shard = array("i"), array("b")
    for shard, source, terms in batch:
        found = list(map(get, terms))
        if None in found:
            for k, term in enumerate(terms):
                if found[k] is None:
                    found[k] = ids[term] = len(names)
                    names.append(term)
        doc_terms.extend(found)  # type: ignore[arg-type]  # no None left
        values = terms.values()
        try:  # C-level extraction; a document missing a statistic takes the slow path
            tf, dfs = array("i", map(_TERM_FREQ, values)), array("i", map(_DOC_FREQ, values))
        except (KeyError, TypeError):  # a missing or null statistic: as the scan reads it
            if not all(isinstance(v, Mapping) for v in values):
                raise  # not a term vector at all
            tf = array("i", (int(v.get("term_freq", 0)) for v in values))
            dfs = array("i", (int(v.get("doc_freq") or 0) for v in values))
        doc_tf.extend(tf)
        doc_df.extend(dfs)
        lengths.append(len(found))
        doc_shard.append(shard)
        texts = (
            [source]
            if isinstance(source, str)
            else ([t for t in source if isinstance(t, str)] if isinstance(source, list) else [])
        )
        for text in texts:
            for token in _WORDS(text):  # cased_tokens without its checks: see below
                if token in tried:
                    continue
                low = token.lower()
                if low not in terms:  # not a term here ("os.ReadFile" is one token):
                    continue  # it may be one in a later document
                tried.add(token)
                i = ids[low]
                if i < len(learned) and learned[i]:  # splits' own flags, inline
                    continue
                parts = split_identifier(token)
                if parts:  # as sub-word ids: esqlog.identifiers.learned
                    splits.add(i, parts)
    term_ids = np.frombuffer(doc_terms, dtype=np.int32)
    counts = np.frombuffer(lengths, dtype=np.int32)
    collector.totals.add(
        len(names),
        term_ids,
        np.frombuffer(doc_tf, dtype=np.int32),
        np.frombuffer(doc_df, dtype=np.int32),
        np.repeat(np.frombuffer(doc_shard, dtype=np.int8), counts),
    )
    collector.postings.append(term_ids.copy(), counts.copy())
    collector.docs += len(batch)
    collector.global_df = None


def shard_df(collector: SplitCollector) -> dict[int, np.ndarray]:
    """Per shard holding documents: each term's df there (0 where the shard's
    documents do not hold it), the largest its term vectors reported."""
    collector.finish()
    return collector.totals.view(collector.term_count())[2]


def absorb(into: SplitCollector, other: SplitCollector) -> None:
    """Append what ``other`` saw (the next shard's documents, collected apart) to
    ``into``, as if ``into`` had read them next (the scan workers' shards are merged as
    arrays instead, the same way: esqlog.identifiers.shard_tables.TablesMerger):
    the new terms after its own, the splits of terms that have none yet, its totals
    added and its postings (on disk) read through the mapping of its term ids."""
    other.finish()
    into.finish()
    if not into.terms and not into.docs:  # the first shard: taken over, not copied
        into.terms, into.splits, into.totals = other.terms, other.splits, other.totals
        into.term_id = other.term_id or {t: k for k, t in enumerate(other.terms)}
        into.postings.absorb(other.postings, np.arange(len(other.terms), dtype=np.int32))
        into.docs, into.global_df = other.docs, None
        for shard, n in other.shard_docs.items():
            into.field_statistics(shard, n)
        other.restart_empty()
        return
    ids, names, splits = into.term_id, into.terms, into.splits
    mapping = np.empty(len(other.terms), np.int32)
    for k, term in enumerate(other.terms):
        found = ids.get(term)
        if found is None:
            found = ids[term] = len(names)
            names.append(term)
        mapping[k] = found
    for k in other.splits:
        splits.setdefault(int(mapping[k]), other.splits[k])
    into.totals.absorb(other.totals, mapping, len(names))
    into.postings.absorb(other.postings, mapping)
    into.docs += other.docs
    for shard, n in other.shard_docs.items():
        into.field_statistics(shard, n)
    into.global_df = None  # counted again from the merged totals
