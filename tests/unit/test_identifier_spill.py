"""The identifiers scan within a memory limit (esqlog.identifiers.memory, .postings,
.term_totals), I/O-free apart from the temporary postings files.

A limit small enough to write the postings out at every page, and to read them back a
few documents at a time, must give exactly the tables of an unlimited one: same words,
same arrays, same per-shard statistics, whether one collector reads every shard or
collectors read them apart and are merged in shard order (the worker processes' path).
"""

from __future__ import annotations

import pickle
import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from esqlog.errors import UsageError
from esqlog.identifiers import scan as identifier_scan
from esqlog.identifiers.memory import MIN_MEMORY_LIMIT, MemoryLimit, parse_memory_limit
from esqlog.identifiers.postings import PostingLog
from esqlog.identifiers.scan import SplitCollector, absorb
from esqlog.identifiers.shard_task import merge_shards
from esqlog.identifiers.split_stats import IdentifierStats
from esqlog.statistics.analysis import standard_terms
from esqlog.statistics.vocabulary_scan import ShardScan
from tests.support.collected_stats import collected_stats

WORDS = [
    "read",
    "File",
    "readFile",
    "ReadFile",
    "read_file",
    "HTTPServer",
    "http",
    "server",
    "getURL",
    "url",
    "utf8",
    "UTF8String",
    "os.ReadFile",
    "web",
    "WebSocket",
    "socket",
    "XMLHttpRequest",
    "fooBar",
    "foobAr",
    "FOObar",
    "base64",
    "v2",
    "the",
    "error",
    "",
]
UNLIMITED = MemoryLimit(1 << 40)
TINY = MemoryLimit(MIN_MEMORY_LIMIT)

Doc = tuple[int, str]
docs_strategy = st.lists(
    st.tuples(st.integers(0, 2), st.lists(st.sampled_from(WORDS), max_size=10).map(" ".join)),
    min_size=1,
    max_size=60,
).map(lambda d: sorted(d, key=lambda x: x[0]))


def _feed(collector: SplitCollector, docs: list[Doc]) -> None:
    for shard, text in docs:
        counts = Counter(standard_terms(text))
        collector(
            shard,
            {"_source": {"body": text}},
            {t: {"term_freq": c, "doc_freq": 1 + len(t) % 3} for t, c in counts.items()},
        )
        collector.field_statistics(shard, 10)


def _same(a: IdentifierStats, b: IdentifierStats) -> None:
    assert a.words == b.words and a.local_terms == b.local_terms
    for name in (
        "df_engine",
        "df_split",
        "mask",
        "parts_ptr",
        "parts_idx",
        "local_df",
        "shard_docs",
    ):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert (a.h_tok, a.q, a.split_tokens, a.split_docs, a.split_share) == (
        b.h_tok,
        b.q,
        b.split_tokens,
        b.split_docs,
        b.split_share,
    )


def _one(docs: list[Doc], memory: MemoryLimit, spill: Path) -> IdentifierStats:
    collector = SplitCollector("body", memory, spill_dir=spill)
    _feed(collector, docs)
    try:
        return collected_stats(collector, docs)
    finally:
        collector.discard()


def _apart(docs: list[Doc], memory: MemoryLimit, spill: Path) -> IdentifierStats:
    """Each shard in a collector of its own, merged in shard order (the processes' path)."""
    merged = SplitCollector("body", memory, processes=3, spill_dir=spill)
    for shard in range(3):
        part = SplitCollector("body", memory, processes=3, spill_dir=spill)
        _feed(part, [d for d in docs if d[0] == shard])
        part.finish()
        part.postings.flush()
        absorb(merged, part)
    try:
        return collected_stats(merged, docs)
    finally:
        merged.discard()


def _tables_apart(docs: list[Doc], memory: MemoryLimit, spill: Path) -> IdentifierStats:
    """Each shard's collector turned into arrays and pickled (a worker process's hand-off),
    merged in shard order by esqlog.identifiers.shard_task.merge_shards."""
    merged = SplitCollector("body", memory, processes=3, spill_dir=spill)
    parts = {}
    for shard in range(3):
        part = SplitCollector("body", memory, processes=3, spill_dir=spill)
        _feed(part, [d for d in docs if d[0] == shard])
        part.finish()
        part.postings.flush()
        parts[shard] = (ShardScan({}, {}), pickle.loads(pickle.dumps(part.tables())))
    merge_shards(parts, 3, merged, "i", "body")
    try:
        return collected_stats(merged, docs)
    finally:
        merged.discard()


@settings(max_examples=40, deadline=None)
@given(docs=docs_strategy, batch=st.integers(1, 9))
def test_tiny_limit_gives_the_unlimited_tables(
    tmp_path_factory: pytest.TempPathFactory, docs: list[Doc], batch: int
) -> None:
    spill = tmp_path_factory.mktemp("spill")
    expected = _one(docs, UNLIMITED, spill)
    original = identifier_scan.BATCH
    identifier_scan.BATCH = batch  # pages of a few documents: a flush at nearly each one
    try:
        _same(_one(docs, TINY, spill), expected)
        _same(_apart(docs, TINY, spill), expected)
        _same(_apart(docs, UNLIMITED, spill), expected)
        _same(_tables_apart(docs, TINY, spill), expected)
    finally:
        identifier_scan.BATCH = original
    assert not list(spill.iterdir())  # every postings file deleted after the build


def test_tiny_limit_spills_and_reads_back_in_small_chunks(tmp_path: Path) -> None:
    rng = random.Random(3)
    docs = [(0, " ".join(rng.choice(WORDS) for _ in range(8))) for _ in range(300)]
    collector = SplitCollector("body", TINY, spill_dir=tmp_path)
    _feed(collector, docs)
    collector.finish()
    assert collector.postings.segments  # written out, not kept in memory
    chunks = list(collector.postings.chunks(TINY.chunk_postings))
    assert len(chunks) > 1
    assert sum(lengths.size for _, lengths in chunks) == collector.docs == 300
    collector.discard()
    assert not list(tmp_path.iterdir())


def test_chunks_cut_at_whole_documents(tmp_path: Path) -> None:
    log = PostingLog(buffer_bytes=8, spill_dir=tmp_path)
    lengths = [3, 0, 5, 1, 7, 2]
    ids = np.arange(sum(lengths), dtype=np.int32)
    log.append(ids, np.asarray(lengths, np.int32))
    log.append(np.asarray([40], np.int32), np.asarray([1], np.int32))  # buffered, unwritten
    seen = list(log.chunks(4))
    assert [n for _, ls in seen for n in ls.tolist()] == [*lengths, 1]
    assert [t for chunk, _ in seen for t in chunk.tolist()] == [*ids.tolist(), 40]
    for chunk, ls in seen:  # whole documents: ids and lengths agree; at most 4 ids, or one doc
        assert chunk.size == ls.sum() and (chunk.size <= 4 or ls.size == 1)
    log.discard()
    assert not list(tmp_path.iterdir())


def test_restart_deletes_the_postings_written(tmp_path: Path) -> None:
    collector = SplitCollector("body", TINY, spill_dir=tmp_path)
    _feed(collector, [(0, "readFile WebSocket")] * 600)
    collector.finish()
    assert list(tmp_path.iterdir())
    collector.restart()
    assert not list(tmp_path.iterdir()) and collector.docs == 0


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("256M", 256 << 20),
        ("1G", 1 << 30),
        ("64k", 64 << 10),
        ("512", 512 << 20),
        (" 2 GiB ", 2 << 30),
    ],
)
def test_memory_limit_sizes(text: str, size: int) -> None:
    assert parse_memory_limit(text).limit == size


@pytest.mark.parametrize("text", ["", "lots", "1T", "-5M", "0"])
def test_memory_limit_refuses_what_is_no_size(text: str) -> None:
    with pytest.raises(UsageError):
        parse_memory_limit(text)
