"""What the ``identifiers`` mode learns at calibrate time: the split-and-keep stream's statistics.

Why: to score a query word s inside identifiers (esqlog.identifiers.query) the query side needs,
for a frozen ``standard`` index, (a) each vocabulary term's identifier split, which needs the
original casing that only ``_source`` keeps (``readFile`` is stored as ``readfile``); (b) the
document frequency of every sub-word in the split stream (a document counts for s when it
holds s or any term whose split contains s), that stream's N and h_tok, so q for this mode
is predicted from the stream it scores; (c) per sub-word, its compounds, ordered by df; and
(d) on which shards each term occurs, because Lucene sums a ``span_or``'s idf over the terms
present on the shard that scores it (see esqlog.identifiers.query); and (e) each shard's own
document count and the per-shard df of every term spread over several shards, so that each
shard can be sent a query of its own, exact in its own statistics, without the dfs phase
(esqlog.identifiers.shards). The file format is esqlog.identifiers.files.

How: it rides on calibrate's vocabulary scan (one pass over term vectors, here with the
field's ``_source``): esqlog.identifiers.scan's ``SplitCollector`` sees every document's
terms and text; :func:`build_identifier_stats` turns that into an :class:`IdentifierStats`.
A term takes the split of the first original casing seen that splits (a term seen only
lower-cased is split at ``_`` and letter/digit boundaries); each occurrence of a term counts
once for each distinct sub-word of its split, which is what a ``span_or`` over the term can
express.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from dataclasses import field as dc_field
from functools import cached_property

import numpy as np

from esqlog.identifiers.families import WordsPerDf, families, family_excess
from esqlog.identifiers.scan import SplitCollector
from esqlog.identifiers.shard_tables import ShardTables, split_words
from esqlog.identifiers.word_facts import WordFacts
from esqlog.scoring.qlog import CorpusFeatures, get_predictor
from esqlog.statistics.mapped_terms import CHUNK, MappedTerms, TermIds, positions_in
from esqlog.statistics.term_table import LazyIndex, TermTable

#: Below this share of tokens that split, a field reads as prose. Measured by calibrate on
#: the benchmark corpora: man pages 12.0% (dotted abbreviations, version numbers), against
#: Python 22.9%, Go 27.6%, Ruby 29.4%, Java 44.9%; there the default mode costs prose
#: 0.006-0.009 NDCG@10 (docs/benchmarks/identifiers.md).
APPLIES_SHARE = 0.17


def inverted_splits(
    parts_ptr: np.ndarray, parts_idx: np.ndarray, df_engine: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """(comp_ptr, comp_idx): the compounds of each sub-word, most frequent first, from each
    word's parts (what a file stores, so that loading it builds nothing)."""
    owner = np.repeat(np.arange(n, dtype=np.int32), np.diff(parts_ptr))
    part = parts_idx.astype(np.int64)
    order = np.lexsort((owner, -df_engine[owner].astype(np.int64), part))
    counts = np.bincount(part, minlength=n)
    return np.concatenate(([0], np.cumsum(counts))).astype(np.int64), owner[order]


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
    #: a list, or a TermTable (esqlog.statistics.term_table) when built by calibrate
    words: Sequence[str]
    df_engine: np.ndarray  # uint32
    df_split: np.ndarray  # uint32
    mask: np.ndarray  # uint64
    parts_ptr: np.ndarray  # int64, len(words) + 1
    parts_idx: np.ndarray  # int32 word ids
    word_id: Mapping[str, int] = dc_field(default_factory=dict, compare=False, repr=False)
    comp_ptr: np.ndarray = dc_field(
        default_factory=lambda: np.zeros(1, np.int64), compare=False, repr=False
    )
    comp_idx: np.ndarray = dc_field(
        default_factory=lambda: np.zeros(0, np.int32), compare=False, repr=False
    )
    words_per_df: WordsPerDf = dc_field(
        default_factory=lambda: WordsPerDf.of(np.zeros(0, np.int64)), compare=False, repr=False
    )
    #: family_excess per df, filled as queries ask: every query asks it of each of its words
    excess_of: dict[int, float] = dc_field(default_factory=dict, compare=False, repr=False)
    #: Each shard's own statistics, for queries sent to one shard at a time
    #: (esqlog.identifiers.shards): the field's document count per shard (deleted documents
    #: included; empty when the file predates them), and the per-shard df of every term
    #: whose documents lie on two or more shards (a term on one shard has its global df
    #: there). A row per such term, a column per shard.
    shard_docs: np.ndarray = dc_field(
        default_factory=lambda: np.zeros(0, np.int64), compare=False, repr=False
    )
    local_terms: Sequence[str] = dc_field(default_factory=list, compare=False, repr=False)
    local_df: np.ndarray = dc_field(
        default_factory=lambda: np.zeros((0, 0), np.uint32), compare=False, repr=False
    )
    local_row: Mapping[str, int] = dc_field(default_factory=dict, compare=False, repr=False)
    #: recent query tokens' splits and words' compounds (esqlog.identifiers.word_facts)
    facts: WordFacts | None = dc_field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        """Index the words and invert the splits: compounds of each sub-word, by df.

        Words held as a TermTable (statistics calibrate builds to write) are indexed on
        first lookup: a dictionary of a million words is hundreds of MiB that writing
        them does not need. The inversion a file stores (esqlog.identifiers.files) is taken
        as read: mapped from the file, it is shared by the processes that load it."""
        object.__setattr__(self, "word_id", index_of(self.words))
        n = len(self.words)
        if self.comp_ptr.size == n + 1 and n:  # read from a file (checked there), not rebuilt
            self._count_dfs()
            return
        comp_ptr, comp_idx = inverted_splits(self.parts_ptr, self.parts_idx, self.df_engine, n)
        object.__setattr__(self, "comp_ptr", comp_ptr)
        object.__setattr__(self, "comp_idx", comp_idx)
        self._count_dfs()

    def _count_dfs(self) -> None:
        object.__setattr__(self, "words_per_df", _words_per_df(self.df_split, self.df_engine))
        object.__setattr__(self, "local_row", index_of(self.local_terms))
        object.__setattr__(self, "facts", WordFacts(self))

    @property
    def per_shard(self) -> bool:
        """Whether each shard's own statistics are known (queries can go to one shard at a
        time, each exact in that shard's statistics: esqlog.identifiers.shards)."""
        return self.shards > 1 and self.shard_docs.size == self.shards

    @cached_property
    def local_row_of_word(self) -> np.ndarray:
        """Each word's row of ``local_df`` (int32, -1: none): a search sent per shard finds
        its compounds' rows by position, with no term hashed again. Read from the file
        (esqlog.identifiers.files), else joined from both tables' hashes when first asked
        (~10 ms on 340K words, 0.4 s on 2.9M)."""
        return positions_in(self.words, self.local_terms, self.local_row).astype(np.int32)

    def keep_local_rows(self, rows: np.ndarray | None) -> None:
        """Take ``rows`` as :attr:`local_row_of_word` (a file's stored map, checked there);
        None forgets any value computed (a copy whose words changed)."""
        if rows is None:
            self.__dict__.pop("local_row_of_word", None)
        else:
            self.__dict__["local_row_of_word"] = rows

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
        ids = self.parts_idx[self.parts_ptr[i] : self.parts_ptr[i + 1]]
        return tuple(self.words[j] for j in ids.tolist())

    def compound_ids(self, subword: str) -> np.ndarray:
        """Word ids of the terms whose split contains ``subword``, most frequent first."""
        i = self.word_id.get(subword)
        if i is None:
            return self.comp_idx[:0]
        return self.comp_idx[self.comp_ptr[i] : self.comp_ptr[i + 1]]

    def compounds_of(self, subword: str) -> list[int]:
        """Word ids of the terms whose split contains ``subword``, most frequent first."""
        i = self.word_id.get(subword)
        if i is None:
            return []
        found: list[int] = self.comp_idx[self.comp_ptr[i] : self.comp_ptr[i + 1]].tolist()
        return found

    def family_excess(self, df: int) -> float:
        """How many times more words have exactly this df than the df values around it,
        where chance would not give it (esqlog.identifiers.families)."""
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


def _words_per_df(df_split: np.ndarray, df_engine: np.ndarray) -> WordsPerDf:
    """WordsPerDf of each word's own df (the split stream's, else the engine's), counted
    CHUNK words at a time: whole-array temporaries of a million words, once freed, stay
    in each process's heap."""
    values, counts = [], []
    for at in range(0, df_split.size, CHUNK):
        split, engine = df_split[at : at + CHUNK], df_engine[at : at + CHUNK]
        own = np.where(split > 0, split, engine).astype(np.int64)
        v, c = np.unique(own[own > 0], return_counts=True)
        values.append(v)
        counts.append(c)
    if not values:
        return WordsPerDf.of(np.zeros(0, np.int64))
    distinct, where = np.unique(np.concatenate(values), return_inverse=True)
    total = np.bincount(where, weights=np.concatenate(counts)).astype(np.int64)
    return WordsPerDf(
        distinct.astype(np.int64), np.concatenate(([0], np.cumsum(total))).astype(np.int64)
    )


def index_of(terms: Sequence[str]) -> Mapping[str, int]:
    """term -> its position: a dictionary now, or one built on first use (TermTable)."""
    if isinstance(terms, MappedTerms):
        return TermIds(terms)  # a file's words read in place: no dictionary per process
    if isinstance(terms, TermTable):
        return LazyIndex(terms)
    return {t: i for i, t in enumerate(terms)}


def build_identifier_stats(
    collector: SplitCollector,
    engine_df: Mapping[str, int] | Sequence[int] | np.ndarray,
    *,
    index: str,
    index_uuid: str,
    field: str,
    shards: int,
    doc_count: int,
    created_at: str,
    predictor: str,
) -> IdentifierStats:
    """The split statistics from what the collector saw during the scan (its term ids and
    splits are taken over: the collector serves no second build).

    ``engine_df``: the global df of each collected term (aligned with ``collector.terms``,
    or a mapping), from the vocabulary snapshot of the same scan.
    """
    # the collector's tables as arrays, taken over (no Python object per term: at a
    # million documents those were most of the calibration's peak, see
    # docs/benchmarks/calibrate-speed.md and esqlog.identifiers.shard_tables)
    tables = collector.tables()
    terms = tables.terms
    t_count = len(terms)
    if isinstance(engine_df, Mapping):
        tdf = np.fromiter((engine_df.get(t, 0) for t in terms), dtype=np.int64, count=t_count)
    else:
        tdf = np.asarray(engine_df, dtype=np.int64)
    words, ptr, parts_idx = _distinct_parts(tables, t_count)
    n_words = len(words)
    is_part = np.zeros(n_words, dtype=bool)
    is_part[parts_idx] = True
    df_stream = split_stream_df(
        tables.postings.chunks(collector.memory.chunk_postings), ptr, parts_idx, is_part, n_words
    )
    term_ttf, term_mask, _ = tables.totals.view(t_count)
    ttf = np.zeros(n_words, dtype=np.int64)
    ttf[:t_count] = term_ttf
    stream_ttf = ttf.copy()
    owners = np.repeat(np.arange(n_words), np.diff(ptr))
    np.add.at(stream_ttf, parts_idx, ttf[owners])
    del owners
    tokens = int(stream_ttf.sum())
    has_parts = np.diff(ptr) > 0
    split_share = float(ttf[has_parts].sum() / max(int(ttf.sum()), 1))
    split_docs = tables.docs
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
    mask[:t_count] = term_mask
    shard_docs, local_terms, local_df = _local_statistics(tables, shards)
    # what the file keeps, then the build's own arrays and the collector's tables let
    # go: IdentifierStats inverts the splits next, on top of whatever is still held
    kept_arrays = {
        "words": words.take(kept),
        "df_engine": df_engine[kept].astype(np.uint32),
        "df_split": np.where(is_part[kept], df_stream[kept], 0).astype(np.uint32),
        "mask": mask[kept],
        "parts_ptr": new_ptr.astype(np.int64),
        "parts_idx": new_parts.astype(np.int32),
    }
    del words, df_engine, df_stream, mask, is_part, new_ptr, new_parts, new_id, keep, kept
    del ttf, stream_ttf, ptr, parts_idx, tdf, has_parts, tables, terms
    collector.release()
    return IdentifierStats(
        index=index,
        index_uuid=index_uuid,
        field=field,
        shards=shards,
        doc_count=doc_count,
        split_docs=split_docs,
        split_tokens=tokens,
        h_tok=h_tok,
        q=round(q, 4),
        split_share=split_share,
        predictor=chosen.name,
        created_at=created_at,
        shard_docs=shard_docs,
        local_terms=local_terms,
        local_df=local_df,
        **kept_arrays,
    )


def _distinct_parts(
    tables: ShardTables,
    t_count: int,
) -> tuple[TermTable, np.ndarray, np.ndarray]:
    """(words, ptr, parts_idx): every word (the terms, then the sub-words only splits hold)
    and each term's parts as a CSR, a part repeated within one term (getGet) counted once.

    A function of its own so that its intermediates, each as large as all the splits'
    parts, are gone before the build allocates its per-word arrays."""
    words, flat = split_words(tables)
    n_words = len(words)
    lengths = np.diff(tables.split_ptr)
    owner_of = np.repeat(np.arange(t_count, dtype=np.int64), lengths)
    # a part repeated within one term (getGet) counts once: keep first occurrences, in order
    _, first = np.unique(owner_of * n_words + flat, return_index=True)
    first.sort()
    parts_idx = flat[first]
    counts = np.bincount(owner_of[first], minlength=n_words)
    del flat, owner_of, first, lengths  # each as large as all the splits' parts
    ptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    return words, ptr, parts_idx


def split_stream_df(
    chunks: Iterable[tuple[np.ndarray, np.ndarray]],
    ptr: np.ndarray,
    parts_idx: np.ndarray,
    is_part: np.ndarray,
    n_words: int,
) -> np.ndarray:
    """Split-stream df of every word: documents holding the word or a term whose split
    contains it, from the documents' term ids read back in chunks of whole documents
    (esqlog.identifiers.postings). A document is counted within one chunk, so the sum
    over chunks is the df over all documents, whatever the chunk size.

    Per chunk: (doc, word) pairs from each term and each of its parts, deduplicated. A
    document lists each of its terms once, so only pairs of words that are also some
    term's part can repeat: the rest are counted as they are, and only those are sorted
    (the sort was the build's largest cost).
    """
    df_stream = np.zeros(n_words, dtype=np.int64)
    sizes = np.diff(ptr)
    for doc_terms, lengths in chunks:
        doc_of = np.repeat(np.arange(lengths.size, dtype=np.int64), lengths)
        n_parts = sizes[doc_terms]
        starts = np.repeat(ptr[doc_terms], n_parts)
        offsets = np.arange(int(n_parts.sum())) - np.repeat(np.cumsum(n_parts) - n_parts, n_parts)
        part_words = parts_idx[starts + offsets] if parts_idx.size else np.zeros(0, np.int64)
        del starts, offsets
        shared = is_part[doc_terms]
        df_stream += np.bincount(doc_terms[~shared], minlength=n_words)
        keys = np.concatenate(
            (
                doc_of[shared] * n_words + doc_terms[shared],
                np.repeat(doc_of, n_parts) * n_words + part_words,
            )
        )
        del doc_of, n_parts, part_words, shared
        keys.sort()
        distinct = keys[np.concatenate(([True], keys[1:] != keys[:-1]))] if keys.size else keys
        df_stream += np.bincount(distinct % n_words, minlength=n_words)
    return df_stream


def _local_statistics(
    tables: ShardTables, shards: int
) -> tuple[np.ndarray, Sequence[str], np.ndarray]:
    """(documents per shard, terms on several shards, their df per shard), from the scan.

    Every term of the vocabulary is covered, not only the words kept for splitting: a
    query's own plain word is scored on each shard too. A term whose documents lie on one
    shard needs no row (its global df is that shard's). Empty when a shard's document
    count was not seen (a scan without field statistics)."""
    docs = tables.shard_docs
    n = len(tables.terms)
    per = tables.totals.view(n)[2] if shards > 1 else {}
    if shards <= 1 or any(k not in docs for k in per):
        return np.zeros(0, np.int64), [], np.zeros((0, shards), np.uint32)
    spread = np.zeros(n, np.int64)
    for best in per.values():
        spread += best > 0
    rows = np.flatnonzero(spread > 1)
    shard_docs = np.asarray([docs.get(k, 0) for k in range(shards)], np.int64)
    local = np.zeros((rows.size, shards), np.uint32)
    for k, best in per.items():
        local[:, k] = np.minimum(best[rows], shard_docs[k])  # as the snapshot caps at N
    return shard_docs, tables.terms.take(rows), local
