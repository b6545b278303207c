"""The identifiers mode's statistics on disk: NAME.idents.<sha16>.npz beside the snapshot.

Why a module of its own: the file is untrusted input (a calibration directory can be
edited, truncated or swapped), so reading it is bounded and every array is checked before
an :class:`~esqlog.identifiers.split_stats.IdentifierStats` is built from it; writing is atomic
(esqlog.atomic). Format 2 added each shard's own statistics (esqlog.identifiers.shards);
format 3 adds the file's checksum of its own arrays; format 4 the arrays that let the words
be read in place (esqlog.statistics.mapped_terms), so that the file is memory-mapped and
shared by every process that loads it; format 5 the same for the terms of the per-shard
statistics (at a million documents, 1.1 million terms: a list and a dictionary of them were
~165 MiB and over a second of every process's load). Formats 3 and 4 still load (the terms
they do not index decoded into each process). Files of formats 1 and 2 are refused with the
command that rewrites them: without a checksum a damaged file cannot be told from a good one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from esqlog.atomic import atomic_write
from esqlog.calibration.record import Calibration
from esqlog.errors import UsageError
from esqlog.identifiers.file_checks import (
    ARRAYS,
    WORD_ROWS,
    array_problem,
    inverse_problem,
    local_problem,
    rows_problem,
)
from esqlog.identifiers.scan import MAX_SHARDS
from esqlog.identifiers.shard_counts import ShardCounts
from esqlog.identifiers.split_stats import IdentifierStats, index_of, inverted_splits
from esqlog.statistics.heap import release_freed_memory
from esqlog.statistics.mapped_terms import (
    MappedTerms,
    check_utf8,
    index_arrays,
    index_problem,
    positions_in,
)
from esqlog.statistics.npz import (
    MAX_META_BYTES,
    Member,
    Rule,
    array_digest,
    count,
    finite,
    flat_json,
    meta_problem,
    npz_bytes,
    pieces_digest,
    plain_text,
    read_npz,
)
from esqlog.statistics.term_table import TermTable
from esqlog.statistics.vocabulary import Vocabulary, load_vocabulary

FORMAT = "esqlog-identifiers/6"
#: format 5: each word's per-shard row not stored (joined from the hashes when first asked)
LOCAL_INDEXED_FORMAT = "esqlog-identifiers/5"
#: format 4: the words indexed in place, the per-shard terms decoded at every load
WORDS_INDEXED_FORMAT = "esqlog-identifiers/4"
#: format 3: no word index; its words are decoded into a list at every load
LISTED_FORMAT = "esqlog-identifiers/3"
#: formats 1 and 2 carry no checksum of their own: refused, with the command that rewrites them
UNCHECKED_FORMATS = ("esqlog-identifiers/1", "esqlog-identifiers/2")
MAX_FILE_BYTES = 1 << 30
_SHA256 = re.compile(r"[0-9a-f]{64}").fullmatch
_TEXT_KEYS = ("index", "index_uuid", "field", "predictor", "created_at")
_META_RULES: dict[str, Rule] = {
    **dict.fromkeys(_TEXT_KEYS, plain_text),
    "shards": count(1, MAX_SHARDS),
    "doc_count": count(1),  # the engine's N: a field with text has documents
    "split_docs": count(1),
    "split_tokens": count(0),
    "h_tok": finite(0.0, 1.0),
    "q": finite(0.0, 2.0),
    "split_share": finite(0.0, 1.0),
    "sha256": lambda v: None if isinstance(v, str) and _SHA256(v) else "is not a SHA-256",
    "vocabulary_sha256": lambda v: None if v is None else plain_text(v),
}
_META_KEYS = (
    "index",
    "index_uuid",
    "field",
    "shards",
    "doc_count",
    "split_docs",
    "split_tokens",
    "h_tok",
    "q",
    "split_share",
    "predictor",
    "created_at",
)
_TEXTS = ("words", "local_words")  # newline-joined UTF-8
_MEMBERS = {
    **{k: Member((np.dtype(t).str,), 1) for k, t in ARRAYS.items()},
    **{k: Member(("|u1",), 1) for k in _TEXTS},
    "meta": Member(("|u1",), 1, max_bytes=MAX_META_BYTES),
    "local_df": Member(("<u4",), 2),
    "shard_docs": Member(("<i8",), 1),
}
_INDEX = {
    "word_starts": Member(("<i8",), 1),
    "word_keys": Member(("<u8",), 1),
    "word_order": Member(("<i4",), 1),
    "comp_ptr": Member(("<i8",), 1),
    "comp_idx": Member(("<i4",), 1),
}
#: the per-shard terms' index (format 5): the words' index members, prefixed
LOCAL = "local_"
_LOCAL_INDEX = {LOCAL + k: m for k, m in _INDEX.items() if k.startswith("word_")}
_MEMBERS_OF = {
    LISTED_FORMAT: _MEMBERS,
    WORDS_INDEXED_FORMAT: {**_MEMBERS, **_INDEX},
    LOCAL_INDEXED_FORMAT: {**_MEMBERS, **_INDEX, **_LOCAL_INDEX},
    FORMAT: {**_MEMBERS, **_INDEX, **_LOCAL_INDEX, WORD_ROWS: Member(("<i4",), 1)},
}
#: each format's checksum of its own arrays: formats 5 and 6 hash 16 MiB pieces on several cores
_DIGEST_OF = {LOCAL_INDEXED_FORMAT: pieces_digest, FORMAT: pieces_digest}
_FIX = "recalibrate with esqlog calibrate --vocabulary --identifiers --out FILE"


def identifiers_path_for(stem: Path, digest: str) -> Path:
    """Where the split statistics of the snapshot with checksum ``digest`` live:
    NAME.idents.<sha16>.npz beside NAME.vocab.<sha16>.npz (``stem`` is folder/NAME)."""
    return stem.with_name(f"{stem.name}.idents.{digest[:16]}.npz")


def save_identifier_stats(
    stats: IdentifierStats, path: str | Path, vocabulary_sha256: str | None = None
) -> tuple[Path, int]:
    """Write atomically (esqlog.atomic); returns the path and its size in bytes.

    ``vocabulary_sha256`` binds the file to the df snapshot of the same scan: loading
    refuses a pair from two different calibrations. The metadata carries the SHA-256 of
    every other array (esqlog.statistics.npz.pieces_digest), which a reader checks before it
    parses any of them: the file has no checksum in the calibration record, so it holds its own.
    """
    # each word's per-shard row first, from the tables themselves (a refreshed copy's lookups
    # are emptied, not recomputed): the join's temporaries are gone before the arrays below
    rows = positions_in(stats.words, stats.local_terms, index_of(stats.local_terms))
    rows = rows.astype(np.int32)
    arrays = {
        "words": _joined(stats.words),
        "local_words": _joined(stats.local_terms),
        "local_df": stats.local_df.astype(np.uint32),
        "shard_docs": stats.shard_docs.astype(np.int64),
        **{name: getattr(stats, name).astype(dtype) for name, dtype in ARRAYS.items()},
    }
    arrays |= index_arrays(stats.words)
    arrays |= {LOCAL + k: a for k, a in index_arrays(stats.local_terms).items()}
    comp_ptr, comp_idx = stats.comp_ptr, stats.comp_idx
    if comp_ptr.size != len(stats.words) + 1:  # not built (esqlog index's refresh skips it)
        comp_ptr, comp_idx = inverted_splits(
            stats.parts_ptr, stats.parts_idx, stats.df_engine, len(stats.words)
        )
    arrays |= {"comp_ptr": comp_ptr.astype(np.int64), "comp_idx": comp_idx.astype(np.int32)}
    arrays[WORD_ROWS] = rows
    arrays = {k: np.ascontiguousarray(a) for k, a in arrays.items()}  # saved in C order
    # the arrays' own buffers, not copies: at a million documents a copy of every array
    # was ~180 MiB more at the moment the build's statistics are all in memory
    digest = pieces_digest({k: (a.dtype.str, a.shape, a.data) for k, a in arrays.items()})
    meta = {
        "format": FORMAT,
        "vocabulary_sha256": vocabulary_sha256,
        "sha256": digest,
        **{k: getattr(stats, k) for k in _META_KEYS},
    }
    payload = npz_bytes(
        {"meta": np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8), **arrays}
    )
    return atomic_write(path, payload), len(payload)


def _joined(words: Sequence[str]) -> np.ndarray:
    """The words newline-joined in UTF-8 (from a TermTable's bytes, without decoding)."""
    if isinstance(words, TermTable):
        return words.joined()
    return np.frombuffer("\n".join(words).encode("utf-8"), dtype=np.uint8)


def load_identifier_stats(
    path: str | Path, vocabulary_sha256: str | None = None
) -> IdentifierStats:
    """Read and validate a split-statistics file (untrusted input: bounded, checked).

    The zip directory and array headers are checked before any array is read
    (esqlog.statistics.npz.read_npz), the metadata's fields have their types and ranges, and the
    arrays' own checksum is compared before they are parsed.
    """
    raw, meta, name = _checked(path, vocabulary_sha256)
    try:
        local_terms = _words(raw, name, LOCAL)
        words = _words(raw, name)
    except UnicodeDecodeError:
        raise UsageError(
            f"identifier statistics file {name} is damaged (words are not UTF-8)", _FIX
        ) from None
    arrays: dict[str, Any] = {k: raw[k].array() for k in ARRAYS}
    local_df, shard_docs = raw["local_df"].array(), raw["shard_docs"].array()
    inverse = {k: raw[k].array() for k in ("comp_ptr", "comp_idx") if k in raw}
    rows = raw[WORD_ROWS].array() if WORD_ROWS in raw else None
    problem = (
        array_problem(arrays, len(words), meta["doc_count"])
        or local_problem(local_terms, local_df, shard_docs, meta["shards"])
        or inverse_problem(inverse, arrays["parts_idx"].size, len(words))
        or rows_problem(rows, len(words), len(local_terms))
    )
    if problem:
        raise UsageError(f"identifier statistics file {name} is inconsistent ({problem})", _FIX)
    stats = IdentifierStats(
        **{k: meta[k] for k in _META_KEYS},
        words=words,
        local_terms=local_terms,
        local_df=local_df,
        shard_docs=shard_docs,
        **arrays,
        **inverse,
    )
    if rows is not None:
        stats.keep_local_rows(rows)
    release_freed_memory()  # the checks' temporaries: not kept in each process's heap
    return stats


def load_shard_counts(path: str | Path, vocabulary_sha256: str | None = None) -> ShardCounts:
    """Only each shard's own statistics from a split-statistics file, checked as
    :func:`load_identifier_stats` checks the whole file (the checksum covers every array)."""
    raw, meta, name = _checked(path, vocabulary_sha256)
    try:
        local_terms = _words(raw, name, LOCAL)
    except UnicodeDecodeError:
        raise UsageError(
            f"identifier statistics file {name} is damaged (words are not UTF-8)", _FIX
        ) from None
    local_df, shard_docs = raw["local_df"].array(), raw["shard_docs"].array()
    problem = local_problem(local_terms, local_df, shard_docs, meta["shards"])
    if problem:
        raise UsageError(f"identifier statistics file {name} is inconsistent ({problem})", _FIX)
    return ShardCounts(
        meta["index_uuid"],
        meta["field"],
        meta["shards"],
        shard_docs,
        local_df,
        index_of(local_terms),
    )


def _checked(
    path: str | Path, vocabulary_sha256: str | None
) -> tuple[Mapping[str, Any], dict[str, Any], str]:
    """(members, metadata, quoted name) of a file whose format, metadata, calibration and
    checksum are all as written; else one UsageError naming what is wrong."""
    source = Path(path)
    name = repr(str(source))
    raw = read_npz(
        source,
        MAX_FILE_BYTES,
        "identifier statistics file",
        _FIX,
        {
            k: m if k == "meta" else replace(m, required=False)
            for k, m in _MEMBERS_OF[FORMAT].items()
        },
        mapped=True,
    )
    meta = flat_json(raw["meta"].data) if "meta" in raw else None
    found = meta.get("format") if meta is not None else None
    if found in UNCHECKED_FORMATS:
        raise UsageError(
            f"identifier statistics file {name} is of the older format "
            f"{found}, which has no checksum",
            _FIX,
        )
    if meta is None:
        raise UsageError(
            f"identifier statistics file {name} has an unknown format (its "
            "metadata is not a flat JSON object of finite values)",
            _FIX,
        )
    if found not in _MEMBERS_OF or set(raw) != set(_MEMBERS_OF[found]):
        raise UsageError(f"identifier statistics file {name} has an unknown format", _FIX)
    problem = meta_problem(meta, _META_RULES)
    if problem:
        raise UsageError(
            f"identifier statistics file {name} has incomplete metadata ({problem})", _FIX
        )
    if vocabulary_sha256 is not None and meta["vocabulary_sha256"] != vocabulary_sha256:
        raise UsageError(
            f"identifier statistics file {name} belongs to another calibration "
            "(its vocabulary snapshot differs)",
            _FIX,
        )
    own = {k: (r.dtype.str, r.shape, r.data) for k, r in raw.items() if k != "meta"}
    if _DIGEST_OF.get(found, array_digest)(own) != meta["sha256"]:
        raise UsageError(
            f"identifier statistics file {name} is damaged (its checksum differs)", _FIX
        )
    return raw, meta, name


def _words(raw: Mapping[str, Any], name: str, prefix: str = "") -> Sequence[str]:
    """The words (``prefix`` "local_": the per-shard terms): read in place when the file
    indexes them (format 4 its words, 5 both; checked), else decoded into a list."""
    if prefix + "word_starts" not in raw:
        return _lines(raw[prefix + "words"].data)
    blob, starts, keys, order = (
        raw[prefix + k].array() for k in ("words", "word_starts", "word_keys", "word_order")
    )
    problem = index_problem(blob, starts, keys, order)
    if problem:
        raise UsageError(
            f"identifier statistics file {name} is inconsistent ({prefix}{problem})", _FIX
        )
    check_utf8(raw[prefix + "words"].data)  # checked once, decoded per word when asked
    return MappedTerms(blob, starts, keys, order)


def _lines(data: memoryview) -> list[str]:
    text = bytes(data).decode("utf-8")
    return text.split("\n") if text else []


def load_with_vocabulary(calibration: Calibration) -> tuple[IdentifierStats, Vocabulary]:
    """The split statistics and the vocabulary snapshot a calibration names, each checked
    against the snapshot's checksum; a UsageError where it names none or either is unusable."""
    path = calibration.vocabulary_path()
    stats = load_for_calibration(path, calibration.vocabulary_sha256)
    assert path is not None  # load_for_calibration refuses a calibration without one
    return stats, load_vocabulary(path, calibration.vocabulary_sha256)


def load_for_calibration(
    vocabulary_path: Path | None, vocabulary_sha256: str | None
) -> IdentifierStats:
    """The split statistics written beside a calibration's vocabulary snapshot."""
    return load_identifier_stats(_beside(vocabulary_path), vocabulary_sha256)


def shard_counts_for_calibration(
    vocabulary_path: Path | None, vocabulary_sha256: str | None
) -> ShardCounts:
    """Each shard's own statistics from the file beside a calibration's snapshot."""
    return load_shard_counts(_beside(vocabulary_path), vocabulary_sha256)


def companion_of(vocabulary_path: Path) -> Path | None:
    """NAME.idents.<sha16>.npz beside NAME.vocab.<sha16>.npz (the same snapshot's
    companion); None for a snapshot not named so (it can have none)."""
    name = re.sub(r"\.vocab(\.[0-9a-f]{16})\.npz$", r".idents\1.npz", vocabulary_path.name)
    return None if name == vocabulary_path.name else vocabulary_path.with_name(name)


def _beside(vocabulary_path: Path | None) -> Path:
    """The companion of the snapshot, or one line saying why there is none."""
    if vocabulary_path is None:
        raise UsageError(
            "the calibration has no vocabulary snapshot, so no identifier statistics",
            "re-run esqlog calibrate --vocabulary --identifiers",
        )
    companion = companion_of(vocabulary_path)
    if companion is None:
        raise UsageError(
            f"the vocabulary snapshot {vocabulary_path.name!r} has no identifier "
            "statistics beside it",
            "re-run esqlog calibrate --vocabulary --identifiers",
        )
    return companion
