"""What the ``identifiers`` mode learns at calibrate time: the split-and-keep stream's statistics.

Why: to score a query word s inside identifiers (esqlog.identifiers) the query side needs,
for a frozen ``standard`` index, (a) each vocabulary term's identifier split, which needs the
original casing that only ``_source`` keeps (``readFile`` is stored as ``readfile``); (b) the
document frequency of every sub-word in the split stream (a document counts for s when it
holds s or any term whose split contains s), that stream's N and h_tok, so q for this mode
is predicted from the stream it scores; (c) per sub-word, its compounds, ordered by df; and
(d) on which shards each term occurs, because Lucene sums a ``span_or``'s idf over the terms
present on the shard that scores it (see esqlog.identifiers).

How: it rides on calibrate's vocabulary scan (one pass over term vectors, here with the
field's ``_source``): esqlog.identifier_scan's ``SplitCollector`` sees every document's
terms and text; :func:`build_identifier_stats` turns that into an :class:`IdentifierStats`.
A term takes the split of the first original casing seen that splits (a term seen only
lower-cased is split at ``_`` and letter/digit boundaries); each occurrence of a term counts
once for each distinct sub-word of its split, which is what a ``span_or`` over the term can
express.
"""

from __future__ import annotations

import io
import itertools
import json
import re
import stat
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from dataclasses import field as dc_field
from pathlib import Path

import numpy as np

from esqlog.atomic import atomic_write
from esqlog.errors import UsageError
from esqlog.families import WordsPerDf, families, family_excess
from esqlog.identifier_scan import MAX_SHARDS, SplitCollector

__all__ = ["MAX_SHARDS", "SplitCollector"]  # re-exported: their home until the scan moved
from esqlog.qlog import CorpusFeatures, get_predictor, validate_q
from esqlog.subwords import split_identifier

#: Below this share of tokens that split, a field reads as prose. Measured by calibrate on
#: the benchmark corpora: man pages 12.0% (dotted abbreviations, version numbers), against
#: Python 22.9%, Go 27.6%, Ruby 29.4%, Java 44.9%; there the default mode costs prose
#: 0.006-0.009 NDCG@10 (BENCHMARKS.md section 7).
APPLIES_SHARE = 0.17
_PLAIN = re.compile(r"[a-z]+").fullmatch


@dataclass(frozen=True)
class IdentifierStats:
    """Split statistics of one field: words (compounds and sub-words) with their numbers.

    ``words`` holds every vocabulary term that splits and every sub-word; per word: the
    engine's df (0 when it is not a term of the index), its split-stream df (0 when it is
    not a sub-word of any term), the shards holding it (bit k = shard k) and its parts.
    """

    index: str
    index_uuid: str
    field: str
    shards: int
    doc_count: int  # the engine's N (deleted documents included), for the engine's idf
    split_docs: int  # N of the split stream (live documents scanned)
    split_tokens: int
    h_tok: float  # of the split stream
    q: float  # predicted from the split stream
    split_share: float  # share of the field's tokens that are identifiers which split
    predictor: str
    created_at: str
    words: list[str]
    df_engine: np.ndarray  # uint32
    df_split: np.ndarray  # uint32
    mask: np.ndarray  # uint64
    parts_ptr: np.ndarray  # int64, len(words) + 1
    parts_idx: np.ndarray  # int32 word ids
    word_id: dict[str, int] = dc_field(default_factory=dict, compare=False, repr=False)
    comp_ptr: np.ndarray = dc_field(default_factory=lambda: np.zeros(1, np.int64),
                                    compare=False, repr=False)
    comp_idx: np.ndarray = dc_field(default_factory=lambda: np.zeros(0, np.int32),
                                    compare=False, repr=False)
    words_per_df: WordsPerDf = dc_field(
        default_factory=lambda: WordsPerDf.of(np.zeros(0, np.int64)), compare=False, repr=False)
    #: family_excess per df, filled as queries ask: every query asks it of each of its words
    excess_of: dict[int, float] = dc_field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        """Index the words and invert the splits: compounds of each sub-word, by df."""
        object.__setattr__(self, "word_id", {w: i for i, w in enumerate(self.words)})
        n = len(self.words)
        owner = np.repeat(np.arange(n, dtype=np.int32), np.diff(self.parts_ptr))
        part = self.parts_idx.astype(np.int64)
        order = np.lexsort((owner, -self.df_engine[owner].astype(np.int64), part))
        counts = np.bincount(part, minlength=n)
        object.__setattr__(self, "comp_ptr", np.concatenate(([0], np.cumsum(counts))))
        object.__setattr__(self, "comp_idx", owner[order])
        own = np.where(self.df_split > 0, self.df_split, self.df_engine).astype(np.int64)
        object.__setattr__(self, "words_per_df", WordsPerDf.of(own))

    @property
    def applies(self) -> bool:
        """Whether the field is code enough for the mode (see APPLIES_SHARE)."""
        return self.split_share >= APPLIES_SHARE

    @property
    def subwords(self) -> int:
        return int(np.count_nonzero(self.df_split))

    @property
    def compounds(self) -> int:
        return int(np.count_nonzero(np.diff(self.parts_ptr)))

    def parts_of(self, term: str) -> tuple[str, ...]:
        """The learned split of a vocabulary term (() when it does not split)."""
        i = self.word_id.get(term)
        if i is None:
            return ()
        ids = self.parts_idx[self.parts_ptr[i]:self.parts_ptr[i + 1]]
        return tuple(self.words[j] for j in ids.tolist())

    def compound_ids(self, subword: str) -> np.ndarray:
        """Word ids of the terms whose split contains ``subword``, most frequent first."""
        i = self.word_id.get(subword)
        if i is None:
            return self.comp_idx[:0]
        return self.comp_idx[self.comp_ptr[i]:self.comp_ptr[i + 1]]

    def compounds_of(self, subword: str) -> list[int]:
        """Word ids of the terms whose split contains ``subword``, most frequent first."""
        i = self.word_id.get(subword)
        if i is None:
            return []
        found: list[int] = self.comp_idx[self.comp_ptr[i]:self.comp_ptr[i + 1]].tolist()
        return found

    def family_excess(self, df: int) -> float:
        """How many times more words have exactly this df than the df values around it,
        where chance would not give it (esqlog.families)."""
        found = self.excess_of.get(df)
        if found is None:
            found = self.excess_of[df] = family_excess(self.words_per_df, df)
        return found

    def families(self, excess: float) -> list[tuple[int, int, float]]:
        """Every df spike of at least ``excess``: (df, words of that df, excess), by df."""
        return families(self.words_per_df, excess)

    def split_df(self, word: str) -> int | None:
        """Split-stream df of a sub-word; None for a word that is no sub-word."""
        i = self.word_id.get(word)
        if i is None or not self.df_split[i]:
            return None
        return int(self.df_split[i])


def build_identifier_stats(
    collector: SplitCollector, engine_df: Mapping[str, int] | Sequence[int] | np.ndarray, *,
    index: str,
    index_uuid: str, field: str, shards: int, doc_count: int, created_at: str,
    predictor: str,
) -> IdentifierStats:
    """The split statistics from what the collector saw during the scan.

    ``engine_df``: the global df of each collected term (aligned with ``collector.terms``,
    or a mapping), from the vocabulary snapshot of the same scan.
    """
    collector.finish()  # the scan's last page may still be queued
    terms = collector.terms
    t_count = len(terms)
    if isinstance(engine_df, Mapping):
        tdf = np.fromiter((engine_df.get(t, 0) for t in terms), dtype=np.int64, count=t_count)
    else:
        tdf = np.asarray(engine_df, dtype=np.int64)
    learned = collector.splits
    # each term's parts (a term seen only lower-cased splits at _, dots and letter/digit
    # boundaries; plain lower-case words cannot split); vectorised below, since this runs
    # over the whole vocabulary
    plain = _PLAIN
    split_of = [learned.get(i) or (() if plain(t) else split_identifier(t))
                for i, t in enumerate(terms)]
    word_id = dict(collector.term_id)
    words = list(terms)
    for part in itertools.chain.from_iterable(split_of):
        if part not in word_id:
            word_id[part] = len(words)
            words.append(part)
    n_words = len(words)
    lengths = np.fromiter(map(len, split_of), dtype=np.int64, count=t_count)
    flat = np.fromiter(map(word_id.__getitem__, itertools.chain.from_iterable(split_of)),
                       dtype=np.int64, count=int(lengths.sum()))
    owner_of = np.repeat(np.arange(t_count, dtype=np.int64), lengths)
    # a part repeated within one term (getGet) counts once: keep first occurrences, in order
    _, first = np.unique(owner_of * n_words + flat, return_index=True)
    first.sort()
    parts_idx = flat[first]
    counts = np.bincount(owner_of[first], minlength=n_words)
    ptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    # split-stream df: (doc, word) pairs from each term and each of its parts, deduplicated
    doc_terms = np.frombuffer(collector.doc_terms, dtype=np.int32).astype(np.int64)
    doc_ptr = np.frombuffer(collector.doc_ptr, dtype=np.int64)
    doc_of = np.repeat(np.arange(doc_ptr.size - 1, dtype=np.int64), np.diff(doc_ptr))
    n_parts = np.diff(ptr)[doc_terms]
    starts = np.repeat(ptr[doc_terms], n_parts)
    offsets = np.arange(int(n_parts.sum())) - np.repeat(np.cumsum(n_parts) - n_parts, n_parts)
    part_words = parts_idx[starts + offsets] if parts_idx.size else np.zeros(0, np.int64)
    # A document lists each of its terms once, so only pairs of words that are also some
    # term's part can repeat: the rest are counted as they are, and only those are sorted
    # (the sort was the build's largest cost).
    is_part = np.zeros(n_words, dtype=bool)
    is_part[parts_idx] = True
    shared = is_part[doc_terms]
    df_stream = np.bincount(doc_terms[~shared], minlength=n_words)
    keys = np.concatenate((doc_of[shared] * n_words + doc_terms[shared],
                           np.repeat(doc_of, n_parts) * n_words + part_words))
    keys.sort()
    distinct = keys[np.concatenate(([True], keys[1:] != keys[:-1]))] if keys.size else keys
    df_stream += np.bincount(distinct % n_words, minlength=n_words)
    ttf = np.zeros(n_words, dtype=np.int64)
    ttf[:t_count] = np.bincount(doc_terms, weights=np.frombuffer(collector.doc_tf, np.int32),
                                minlength=t_count).astype(np.int64)
    stream_ttf = ttf.copy()
    owners = np.repeat(np.arange(n_words), np.diff(ptr))
    np.add.at(stream_ttf, parts_idx, ttf[owners])
    tokens = int(stream_ttf.sum())
    has_parts = np.diff(ptr) > 0
    split_share = float(ttf[has_parts].sum() / max(int(ttf.sum()), 1))
    split_docs = len(collector.doc_ptr) - 1
    h_tok = float(stream_ttf[df_stream == 1].sum() / tokens) if tokens else 0.0
    chosen = get_predictor(predictor)
    q = chosen.predict(CorpusFeatures(h_tok, doc_count, tokens / max(split_docs, 1)))
    keep = is_part | (np.diff(ptr) > 0)  # only sub-words and compounds are stored
    new_id = np.cumsum(keep) - 1
    kept = np.flatnonzero(keep)
    new_ptr = np.concatenate(([0], np.cumsum(np.diff(ptr)[kept])))
    new_parts = new_id[parts_idx]  # every word with parts is kept, in order
    df_engine = np.zeros(n_words, dtype=np.int64)
    df_engine[:t_count] = tdf
    mask = np.zeros(n_words, dtype=np.uint64)
    shard_bit = np.left_shift(np.uint64(1), np.frombuffer(collector.doc_shard, np.int8)
                              .astype(np.uint64))
    np.bitwise_or.at(mask, doc_terms, shard_bit[doc_of])
    return IdentifierStats(
        index=index, index_uuid=index_uuid, field=field, shards=shards, doc_count=doc_count,
        split_docs=split_docs, split_tokens=tokens, h_tok=h_tok, q=round(q, 4),
        split_share=split_share,
        predictor=chosen.name, created_at=created_at, words=[words[i] for i in kept],
        df_engine=df_engine[kept].astype(np.uint32),
        df_split=np.where(is_part[kept], df_stream[kept], 0).astype(np.uint32),
        mask=mask[kept], parts_ptr=new_ptr.astype(np.int64),
        parts_idx=new_parts.astype(np.int32))


# --- files ----------------------------------------------------------------------------------

FORMAT = "esqlog-identifiers/1"
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
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile,
            UnicodeDecodeError) as exc:
        raise UsageError(f"identifier statistics file {name} is not an esqlog identifier "
                         f"statistics file ({type(exc).__name__})", fix) from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise UsageError(f"identifier statistics file {name} has an unknown format", fix)
    if vocabulary_sha256 is not None and meta.get("vocabulary_sha256") != vocabulary_sha256:
        raise UsageError(f"identifier statistics file {name} belongs to another calibration "
                         "(its vocabulary snapshot differs)", fix)
    word_list = words.split("\n") if words else []
    problem = _array_problem(arrays, len(word_list))
    if problem:
        raise UsageError(f"identifier statistics file {name} is inconsistent ({problem})", fix)
    try:
        values = {k: meta[k] for k in _META_KEYS}
        record = IdentifierStats(**values, words=word_list,
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
