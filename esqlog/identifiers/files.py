"""The identifiers mode's statistics on disk: NAME.idents.<sha16>.npz beside the snapshot.

Why a module of its own: the file is untrusted input (a calibration directory can be
edited, truncated or swapped), so reading it is bounded and every array is checked before
an :class:`~esqlog.identifiers.split_stats.IdentifierStats` is built from it; writing is atomic
(esqlog.atomic). Format 2 adds each shard's own statistics (esqlog.identifiers.shards);
format 1 files still load, without them (their searches use dfs).
"""

from __future__ import annotations

import io
import json
import re
import stat
import zipfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from esqlog.atomic import atomic_write
from esqlog.errors import UsageError
from esqlog.identifiers.scan import MAX_SHARDS
from esqlog.identifiers.split_stats import IdentifierStats
from esqlog.scoring.qlog import validate_q

FORMAT = "esqlog-identifiers/2"
#: files of format 1 lack each shard's statistics: still read, they search with dfs
FORMATS = ("esqlog-identifiers/1", FORMAT)
MAX_FILE_BYTES = 1 << 30
_META_KEYS = ("index", "index_uuid", "field", "shards", "doc_count", "split_docs",
              "split_tokens", "h_tok", "q", "split_share", "predictor", "created_at")
_ARRAYS = {"df_engine": np.uint32, "df_split": np.uint32, "mask": np.uint64,
           "parts_ptr": np.int64, "parts_idx": np.int32}


def identifiers_path_for(stem: Path, digest: str) -> Path:
    """Where the split statistics of the snapshot with checksum ``digest`` live:
    NAME.idents.<sha16>.npz beside NAME.vocab.<sha16>.npz (``stem`` is folder/NAME)."""
    return stem.with_name(f"{stem.name}.idents.{digest[:16]}.npz")


def save_identifier_stats(stats: IdentifierStats, path: str | Path,
                          vocabulary_sha256: str | None = None) -> tuple[Path, int]:
    """Write atomically (esqlog.atomic); returns the path and its size in bytes.

    ``vocabulary_sha256`` binds the file to the df snapshot of the same scan: loading
    refuses a pair from two different calibrations.
    """
    blob = "\n".join(stats.words).encode("utf-8")
    meta = {"format": FORMAT, "vocabulary_sha256": vocabulary_sha256,
            **{k: getattr(stats, k) for k in _META_KEYS}}
    buffer = io.BytesIO()
    np.savez(buffer, meta=np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8),
             words=np.frombuffer(blob, dtype=np.uint8),
             local_words=np.frombuffer("\n".join(stats.local_terms).encode("utf-8"),
                                       dtype=np.uint8),
             local_df=stats.local_df.astype(np.uint32), shard_docs=stats.shard_docs,
             **{name: getattr(stats, name) for name in _ARRAYS})
    payload = buffer.getvalue()
    return atomic_write(path, payload), len(payload)


def load_identifier_stats(path: str | Path,
                          vocabulary_sha256: str | None = None) -> IdentifierStats:
    """Read and validate a split-statistics file (untrusted input: bounded, checked)."""
    source = Path(path)
    fix = "re-run esqlog calibrate --vocabulary --identifiers --out FILE"
    name = repr(str(source))
    try:
        info = source.stat()
    except OSError:
        raise UsageError(f"identifier statistics file {name} does not exist", fix) from None
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
        raise UsageError(f"identifier statistics file {name} is not a regular file under "
                         f"{MAX_FILE_BYTES >> 20} MB", fix)
    try:
        payload = source.read_bytes()
        with zipfile.ZipFile(io.BytesIO(payload)) as archive:
            if sum(i.file_size for i in archive.infolist()) > MAX_FILE_BYTES:
                raise ValueError("archive expands too far")
        with np.load(io.BytesIO(payload), allow_pickle=False) as data:
            meta = json.loads(bytes(data["meta"]).decode("utf-8"))
            words = bytes(data["words"]).decode("utf-8")
            arrays = {k: data[k] for k in _ARRAYS}
            local = ((bytes(data["local_words"]).decode("utf-8"), data["local_df"],
                      data["shard_docs"]) if meta.get("format") == FORMAT else None)
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile,
            UnicodeDecodeError) as exc:
        raise UsageError(f"identifier statistics file {name} is not an esqlog identifier "
                         f"statistics file ({type(exc).__name__})", fix) from None
    if not isinstance(meta, dict) or meta.get("format") not in FORMATS:
        raise UsageError(f"identifier statistics file {name} has an unknown format", fix)
    if vocabulary_sha256 is not None and meta.get("vocabulary_sha256") != vocabulary_sha256:
        raise UsageError(f"identifier statistics file {name} belongs to another calibration "
                         "(its vocabulary snapshot differs)", fix)
    word_list = words.split("\n") if words else []
    problem = _array_problem(arrays, len(word_list))
    local_terms = (local[0].split("\n") if local[0] else []) if local else []
    if local is not None and not problem:
        problem = _local_problem(local_terms, local[1], local[2], meta.get("shards"))
    if problem:
        raise UsageError(f"identifier statistics file {name} is inconsistent ({problem})", fix)
    try:
        values = {k: meta[k] for k in _META_KEYS}
        extra = {} if local is None else {
            "local_terms": local_terms, "local_df": local[1], "shard_docs": local[2]}
        record = IdentifierStats(**values, words=word_list, **extra,
                                 **{k: arrays[k] for k in _ARRAYS})
        validate_q(record.q)
        if not 1 <= record.shards <= MAX_SHARDS or record.split_docs < 1:
            raise ValueError("shards or document count out of range")
    except (KeyError, TypeError, ValueError) as exc:
        raise UsageError(f"identifier statistics file {name} has incomplete metadata "
                         f"({type(exc).__name__})", fix) from None
    return record


def _array_problem(arrays: Mapping[str, np.ndarray], n_words: int) -> str | None:
    """What is wrong with the arrays of a file, or None."""
    for key, dtype in _ARRAYS.items():
        if arrays[key].dtype != dtype or arrays[key].ndim != 1:
            return f"{key} is not a {np.dtype(dtype).name} vector"
    for key in ("df_engine", "df_split", "mask"):
        if arrays[key].size != n_words:
            return f"{key} has {arrays[key].size} entries for {n_words} words"
    ptr, idx = arrays["parts_ptr"], arrays["parts_idx"]
    if ptr.size != n_words + 1 or ptr[0] != 0 or ptr[-1] != idx.size or np.any(np.diff(ptr) < 0):
        return "parts_ptr is not a valid offset vector"
    if idx.size and (idx.min() < 0 or idx.max() >= n_words):
        return "parts_idx points outside the words"
    return None


def _local_problem(terms: list[str], local_df: np.ndarray, shard_docs: np.ndarray,
                   shards: object) -> str | None:
    """What is wrong with a file's per-shard statistics, or None."""
    if not isinstance(shards, int) or not 1 <= shards <= MAX_SHARDS:
        return "shards is not a shard count"
    if shard_docs.dtype != np.int64 or shard_docs.ndim != 1 or shard_docs.size not in (
            0, shards) or (shard_docs.size and shard_docs.min() < 0):
        return "shard_docs is not a document count per shard"
    if local_df.dtype != np.uint32 or local_df.shape != (len(terms), shards):
        return f"local_df is not a {len(terms)} x {shards} uint32 matrix"
    if shard_docs.size and local_df.size and np.any(local_df > shard_docs[None, :]):
        return "local_df exceeds a shard's document count"
    if not shard_docs.size and local_df.size:
        return "local_df without shard document counts"
    return None


def load_for_calibration(vocabulary_path: Path | None,
                         vocabulary_sha256: str | None) -> IdentifierStats:
    """The split statistics written beside a calibration's vocabulary snapshot."""
    if vocabulary_path is None:
        raise UsageError("the calibration has no vocabulary snapshot, so no identifier "
                         "statistics", "re-run esqlog calibrate --vocabulary --identifiers")
    # NAME.vocab.<sha16>.npz -> NAME.idents.<sha16>.npz (the same snapshot's companion)
    name = re.sub(r"\.vocab(\.[0-9a-f]{16})\.npz$", r".idents\1.npz", vocabulary_path.name)
    if name == vocabulary_path.name:
        raise UsageError(f"the vocabulary snapshot {vocabulary_path.name!r} has no identifier "
                         "statistics beside it", "re-run esqlog calibrate --vocabulary "
                         "--identifiers")
    return load_identifier_stats(vocabulary_path.with_name(name), vocabulary_sha256)
