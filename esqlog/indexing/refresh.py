"""Keeping ``esqlog index --calibrate FILE`` fresh: the snapshot and the identifiers
statistics updated by the documents a run changed, not by reading every document again.

Why: a full calibration reads every document's term vectors (7,488 files, 164K documents:
137 s), so after an edit it was skipped, and the calibration went on describing the
repository as it was: a new function's name was in no snapshot (df 0) and no split
statistics, and it ranked 4th under its own exact name until a full recalibration.

How: before the bulk write, the term vectors of the documents about to be replaced or
deleted are read (their last chance); after it, those of the documents written. Each
term's df moves by (new documents holding it) - (old ones); a term new to the field gets
its identifier split from the casings in the new documents' text, the same rule as the
full scan (esqlog.identifiers.scan), and each split-stream df moves by the documents that
gained or lost the word or a compound of it. The cost is proportional to the change.

What stays as old as the last full scan (the staleness bound): h_tok, q, the split
stream's h_tok, q and share of split tokens, and the engine's own count of deleted
documents in df. ``refreshed_docs`` in the calibration counts the documents changed since
that scan; once a run would take it past REFRESH_SHARE of the live documents (or the
index has several shards, whose per-shard statistics this does not update) esqlog index
runs the full calibration again instead.
"""

from __future__ import annotations

import copy
import itertools
import re
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from dataclasses import field as dc_field
from pathlib import Path
from typing import Any

import numpy as np

from esqlog.calibration.record import Calibration
from esqlog.engine.client import Engine
from esqlog.engine.paths import index_path
from esqlog.engine.steps import Request
from esqlog.engine.termvectors import stored_vectors_request
from esqlog.identifiers.calibrate import IdentifierCalibration
from esqlog.identifiers.scan import SplitCollector
from esqlog.identifiers.split_stats import IdentifierStats
from esqlog.scoring.subwords import split_identifier
from esqlog.statistics.term_keys import BLOOM_K, term_hash
from esqlog.statistics.vocabulary import Vocabulary

FIELD = "content"  # the field esqlog index writes and calibrates
#: share of the live documents changed since the last full scan past which it is rerun
REFRESH_SHARE = 0.05
VECTOR_BATCH = 200  # documents per _mtermvectors request
_PLAIN = re.compile(r"[a-z]+").fullmatch  # as esqlog.identifiers.shard_tables


@dataclass
class Changes:
    """The documents one run replaced, deleted and wrote, as term vectors."""

    old: list[dict[str, int]] = dc_field(default_factory=list)  # term -> tf, before the write
    new: list[dict[str, int]] = dc_field(default_factory=list)  # after it
    texts: list[str] = dc_field(default_factory=list)  # of the new ones, aligned
    new_ids: list[str] = dc_field(default_factory=list)
    text_of: dict[str, str] = dc_field(default_factory=dict)  # id -> content written
    overflow: bool = False  # more than the limit: recalibrate in full

    @property
    def documents(self) -> int:
        return len(self.old) + len(self.new_ids)


def track(
    engine: Engine,
    index: str,
    stream: Iterable[dict[str, Any]],
    existing: set[str],
    limit: int,
    changes: Changes,
) -> Iterator[dict[str, Any]]:
    """``stream`` (bulk actions) read ahead in full when it holds at most ``limit``
    documents, the old versions' term vectors read before any is written; beyond the
    limit ``changes.overflow`` is set and the stream goes on untracked."""
    buffered: list[dict[str, Any]] = []
    source = iter(stream)
    for action in source:
        buffered.append(action)
        if len(buffered) > limit:
            changes.overflow = True
            return itertools.chain(buffered, source)
    old_ids = list(dict.fromkeys(a["_id"] for a in buffered if a["_id"] in existing))
    changes.old = [terms for terms, _ in read_vectors(engine, index, old_ids)]
    for action in buffered:
        if action["_op_type"] == "index":
            changes.new_ids.append(action["_id"])
    return iter(buffered)


def read_vectors(
    engine: Engine, index: str, ids: list[str]
) -> Iterator[tuple[dict[str, int], str]]:
    """(term -> tf, id) of each found document's content field."""
    for start in range(0, len(ids), VECTOR_BATCH):
        hits = [{"_id": i} for i in ids[start : start + VECTOR_BATCH]]
        answer = engine.perform(stored_vectors_request(hits, [FIELD], index=index))
        for doc in answer.get("docs") or []:
            vectors = ((doc.get("term_vectors") or {}).get(FIELD) or {}).get("terms") or {}
            if doc.get("found", True) and vectors:
                yield (
                    {t: int(v.get("term_freq", 1)) for t, v in vectors.items()},
                    str(doc.get("_id")),
                )


def read_new(engine: Engine, index: str, changes: Changes) -> None:
    """The written documents' term vectors (after the refresh), with their text."""
    for terms, _id in read_vectors(engine, index, changes.new_ids):
        changes.new.append(terms)
        changes.texts.append(changes.text_of.get(_id, ""))


def refreshed_vocabulary(
    vocab: Vocabulary, changes: Changes, doc_count: int, sum_ttf: int, live_docs: int
) -> tuple[Vocabulary, dict[str, int]]:
    """The snapshot with each changed term's df moved; also the df before, of those terms."""
    delta: Counter[str] = Counter()
    for terms in changes.new:
        delta.update(terms.keys())
    for terms in changes.old:
        delta.subtract(terms.keys())
    names = list(delta)
    before = dict(zip(names, vocab.df_array(names).tolist(), strict=True))
    keys = np.fromiter((term_hash(t) for t in names), dtype=np.uint64, count=len(names))
    moves = np.fromiter((delta[t] for t in names), dtype=np.int64, count=len(names))
    hashes, df = vocab.hashes, vocab.df.astype(np.int64)
    at = np.minimum(np.searchsorted(hashes, keys), max(hashes.size - 1, 0))
    present = (hashes[at] == keys) if hashes.size else np.zeros(keys.size, bool)
    np.add.at(df, at[present], moves[present])
    fresh = ~present & (moves > 0)
    hashes = np.concatenate((hashes, keys[fresh]))
    df = np.concatenate((df, moves[fresh]))
    order = np.argsort(hashes, kind="stable")
    bloom = vocab.bloom
    if bloom is not None and bloom.size:
        bloom = _with_terms(bloom, list(itertools.compress(names, fresh.tolist())))
    cap = min(max(doc_count, 0), 2**32 - 1)
    out = Vocabulary(
        vocab.index,
        vocab.index_uuid,
        vocab.field,
        doc_count,
        sum_ttf,
        live_docs,
        vocab.created_at,
        hashes[order],
        np.clip(df[order], 0, cap).astype(np.uint32),
        bloom,
    )
    return out, before


def _with_terms(bloom: np.ndarray, terms: list[str]) -> np.ndarray:
    """The snapshot's Bloom filter with these terms' bits set too, at its own size: the
    positions of esqlog.statistics.term_keys.build_bloom (CRC-32 and Adler-32 double
    hashing), so that Vocabulary.might_hold finds them (tested)."""
    out = bloom.copy()
    mask = np.uint64(out.size * 8 - 1)
    data = [t.encode("utf-8") for t in terms]
    h1 = np.fromiter((zlib.crc32(d) for d in data), dtype=np.uint64, count=len(data))
    h2 = np.fromiter((zlib.adler32(d) | 1 for d in data), dtype=np.uint64, count=len(data))
    for i in range(BLOOM_K):
        pos = (h1 + np.uint64(i) * h2) & mask
        np.bitwise_or.at(
            out,
            (pos >> np.uint64(3)).astype(np.int64),
            np.uint8(1) << (pos & np.uint64(7)).astype(np.uint8),
        )
    return out


def refreshed_stats(
    stats: IdentifierStats,
    vocab: Vocabulary,
    before: Mapping[str, int],
    changes: Changes,
    doc_count: int,
) -> IdentifierStats:
    """The split statistics moved by the changed documents (one shard: see the module doc)."""
    words = list(stats.words)
    word_id = dict(stats.word_id)
    was_part = stats.df_split > 0
    old_count = _stream_counts(changes.old, stats, word_id, {})
    added = _new_splits(changes, word_id)
    new_parts: dict[int, tuple[int, ...]] = {}
    for term, split in added.items():
        for part in (term, *split):
            if part not in word_id:
                word_id[part] = len(words)
                words.append(part)
        new_parts[word_id[term]] = tuple(dict.fromkeys(word_id[p] for p in split))
    new_count = _stream_counts(changes.new, stats, word_id, new_parts)
    n, grown = len(stats.words), len(words)
    df_engine = np.concatenate((stats.df_engine.astype(np.int64), np.zeros(grown - n, np.int64)))
    df_split = np.concatenate((stats.df_split.astype(np.int64), np.zeros(grown - n, np.int64)))
    mask = np.concatenate((stats.mask, np.zeros(grown - n, np.uint64)))
    is_part = np.concatenate((was_part, np.zeros(grown - n, bool)))
    for ids in new_parts.values():
        is_part[list(ids)] = True
    touched = sorted(set(old_count) | set(new_count) | set(range(n, grown)))
    for i in touched:
        if not is_part[i]:
            continue
        # a word that only now became a sub-word was held, in the split stream, by the
        # documents holding it as a term: its df before this run
        word = words[i]
        base = (
            int(df_split[i])
            if i < n and was_part[i]
            else before[word]
            if word in before
            else int(vocab.df_array([word])[0])
        )
        df_split[i] = max(base + new_count.get(i, 0) - old_count.get(i, 0), 0)
    now = vocab.df_array([words[i] for i in touched])
    df_engine[touched] = now
    mask[[i for i, d in zip(touched, now.tolist(), strict=True) if d > 0]] |= np.uint64(1)
    extra = [new_parts.get(i, ()) for i in range(n, grown)]
    ptr = np.concatenate(
        (
            stats.parts_ptr,
            stats.parts_ptr[-1]
            + np.cumsum(np.fromiter(map(len, extra), np.int64, count=len(extra))),
        )
    ).astype(np.int64)
    idx = np.concatenate(
        (stats.parts_idx, np.fromiter(itertools.chain.from_iterable(extra), np.int32))
    ).astype(np.int32)
    split_docs = max(stats.split_docs + len(changes.new) - len(changes.old), 1)
    return _for_saving(
        stats,
        doc_count=doc_count,
        split_docs=split_docs,
        words=words,
        df_engine=np.minimum(df_engine, 2**32 - 1).astype(np.uint32),
        df_split=np.minimum(df_split, 2**32 - 1).astype(np.uint32),
        mask=mask,
        parts_ptr=ptr,
        parts_idx=idx,
    )


def _for_saving(stats: IdentifierStats, **changed: Any) -> IdentifierStats:
    """``stats`` with these fields changed, without rebuilding the lookups queries use
    (word ids, compounds by df): on 570K words that rebuild took 1.7 s of a refresh whose
    result is only written to disk (and read back, rebuilt, by whoever searches). The
    lookups are emptied so that nothing can read stale ones."""
    out = copy.copy(stats)  # no __init__, so no __post_init__
    empty: dict[str, Any] = {
        "word_id": {},
        "local_row": {},
        "excess_of": {},
        "facts": None,
        "comp_ptr": np.zeros(1, np.int64),
        "comp_idx": np.zeros(0, np.int32),
    }
    for name, value in {**changed, **empty}.items():
        object.__setattr__(out, name, value)
    out.keep_local_rows(None)  # computed from the old words
    return out


def _new_splits(changes: Changes, word_id: Mapping[str, int]) -> dict[str, tuple[str, ...]]:
    """term -> its split, for the terms of the new documents that split and are no compound
    known yet: learned from their casings as the full scan learns them."""
    collector = SplitCollector(FIELD)
    for terms, text in zip(changes.new, changes.texts, strict=True):
        collector(0, {"_source": {FIELD: text}}, {t: {"term_freq": f} for t, f in terms.items()})
    collector.finish()
    collector.discard()  # only its splits are read: no postings left on disk
    out: dict[str, tuple[str, ...]] = {}
    for i, term in enumerate(collector.terms):
        if term in word_id:
            continue  # a compound or sub-word already: its split stays that of the scan
        split = collector.splits.get(i) or (() if _PLAIN(term) else split_identifier(term))
        if split:
            out[term] = split
    return out


def _stream_counts(
    docs: list[dict[str, int]],
    stats: IdentifierStats,
    word_id: Mapping[str, int],
    new_parts: Mapping[int, tuple[int, ...]],
) -> Counter[int]:
    """word id -> documents whose split stream holds it (the word or a compound of it)."""
    out: Counter[int] = Counter()
    ptr, idx, n = stats.parts_ptr, stats.parts_idx, len(stats.words)
    for terms in docs:
        held: set[int] = set()
        for term in terms:
            i = word_id.get(term)
            if i is None:
                continue
            held.add(i)
            if i < n:
                held.update(idx[ptr[i] : ptr[i + 1]].tolist())
            else:
                held.update(new_parts.get(i, ()))
        out.update(held)
    return out


def refreshed(
    found: IdentifierCalibration, changes: Changes, doc_count: int, sum_ttf: int, live_docs: int
) -> IdentifierCalibration:
    """The whole triple moved by one run's changes (saved by the caller)."""
    vocab, before = refreshed_vocabulary(found.vocabulary, changes, doc_count, sum_ttf, live_docs)
    stats = refreshed_stats(found.stats, vocab, before, changes, doc_count)
    record = replace(
        found.record,
        doc_count=doc_count,
        sum_ttf=sum_ttf,
        live_docs=live_docs,
        avgdl=sum_ttf / max(doc_count, 1),
        vocabulary_terms=len(vocab),
        refreshed_docs=found.record.refreshed_docs + changes.documents,
    )
    return IdentifierCalibration(record, vocab, stats, 0.0)


def room(calibration: Calibration | None) -> int:
    """Documents a run may change before the full calibration is due again (0: it is)."""
    if calibration is None or calibration.shards != 1:
        return 0
    allowed = int(REFRESH_SHARE * calibration.live_docs) - calibration.refreshed_docs
    return max(allowed, 0)


def index_operations(engine: Engine, index: str) -> int | None:
    """Write operations the index has seen: the sum over primary shards of max_seq_no + 1
    (every index and delete takes a sequence number; kept across restarts). None when the
    engine does not say."""
    found = engine.perform(Request("GET", index_path(index, "_stats", "docs"), {"level": "shards"}))
    total = 0
    for info in (found.get("indices") or {}).values():
        for copies in (info.get("shards") or {}).values():
            for shard in copies:
                if (shard.get("routing") or {}).get("primary"):
                    seq = (shard.get("seq_no") or {}).get("max_seq_no")
                    if not isinstance(seq, int):
                        return None
                    total += seq + 1
    return total


def current_record(path: str | Path, uuid: str, operations: int | None) -> Calibration | None:
    """The calibration at ``path`` when it is of the index with this UUID as it is now, with
    a snapshot and identifiers statistics recorded (checked in full by load_triple); else
    None. "As it is now": no write since FILE was saved (the same count of operations), so
    a run that wrote and stopped before refreshing FILE (killed, a failed bulk, an
    interrupted full calibration) or an ``esqlog index`` without --calibrate is not
    forgotten: the next run calibrates in full."""
    from esqlog.calibration.files import load_calibration
    from esqlog.errors import UsageError

    try:
        record = load_calibration(path)
    except UsageError:
        return None
    complete = record.vocabulary is not None and record.identifiers_applies is not None
    same = (
        record.index_uuid == uuid
        and record.field == FIELD
        and operations is not None
        and record.index_operations == operations
    )
    return record if same and complete else None


def load_triple(path: str | Path, uuid: str) -> IdentifierCalibration | None:
    """The calibration at ``path`` with its snapshot and identifiers statistics, when all
    three are there and belong to the index with this UUID; else None (calibrate in full)."""
    from esqlog.calibration.files import load_calibration
    from esqlog.errors import UsageError
    from esqlog.identifiers.files import load_with_vocabulary

    try:
        record = load_calibration(path)
        if record.index_uuid != uuid or record.field != FIELD or record.vocabulary_path() is None:
            return None
        stats, vocab = load_with_vocabulary(record)
    except UsageError:
        return None
    if stats.shards != 1 or stats.per_shard:
        return None
    return IdentifierCalibration(record, vocab, stats, 0.0)
