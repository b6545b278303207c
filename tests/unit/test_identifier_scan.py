"""The vocabulary-scan hook of the identifiers mode (esqlog.identifiers.scan), I/O-free.

Paging must not change what is learned: the same documents give the same statistics in
one batch or many, after restarts; and its df/ttf count equals the scan's own.
"""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest

from esqlog.identifiers import scan as identifier_scan
from esqlog.identifiers.scan import SplitCollector
from esqlog.identifiers.split_stats import IdentifierStats
from esqlog.scoring.subwords import split_identifier
from esqlog.statistics.analysis import standard_terms
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
]


def _docs(n: int, seed: int = 7) -> list[tuple[int, str]]:
    rng = random.Random(seed)
    return [
        (rng.randrange(3), " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12))))
        for _ in range(n)
    ]


def _feed(collector: SplitCollector, docs: list[tuple[int, str]]) -> None:
    for shard, text in docs:
        counts = Counter(standard_terms(text))
        collector(
            shard, {"_source": {"body": text}}, {t: {"term_freq": c} for t, c in counts.items()}
        )


def _same(a: IdentifierStats, b: IdentifierStats) -> None:
    assert a.words == b.words
    for name in ("df_engine", "df_split", "mask", "parts_ptr", "parts_idx"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert a.h_tok == pytest.approx(b.h_tok) and a.split_tokens == b.split_tokens


def test_pages_equal_one_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    docs = _docs(500)
    whole = SplitCollector("body")
    _feed(whole, docs)
    first = collected_stats(whole, docs)
    monkeypatch.setattr(identifier_scan, "BATCH", 7)  # many pages, a partial last one
    paged = SplitCollector("body")
    _feed(paged, docs)
    second = collected_stats(paged, docs)
    _same(first, second)
    assert second.parts_of("readfile") == ("read", "file")
    # the first casing that splits wins, in document order, as one token at a time would
    seen = next(w for _, text in docs for w in text.split() if w.lower() == "foobar")
    assert first.parts_of("foobar") == split_identifier(seen)
    assert len({split_identifier(w) for w in ("fooBar", "foobAr", "FOObar")}) == 3


def test_restart_forgets_what_a_failed_scan_saw(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(identifier_scan, "BATCH", 5)
    docs = _docs(120, seed=3)
    collector = SplitCollector("body")
    _feed(collector, _docs(60, seed=99))  # a scan that failed half-way
    collector.restart()
    _feed(collector, docs)
    fresh = SplitCollector("body")
    _feed(fresh, docs)
    _same(collected_stats(collector, docs), collected_stats(fresh, docs))


def test_a_malformed_term_vector_fails_the_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(identifier_scan, "BATCH", 2)
    collector = SplitCollector("body")
    with pytest.raises(TypeError):
        for _ in range(50):  # a term vector entry that is no object
            collector(0, {"_source": {"body": "read"}}, {"read": None})  # type: ignore[dict-item]
        collector.finish()


def test_term_statistics_equal_the_scans_own_per_term_count() -> None:
    """The scan leaves df and ttf to the hook (keeps_term_stats): per shard the largest df a
    term vector reported, summed over shards, and the summed tf, in first-seen order."""
    rng = random.Random(3)
    docs = sorted(_docs(400, seed=11))  # the scan reads shard by shard
    collector = SplitCollector("body")
    want_df: dict[str, int] = {}
    want_ttf: dict[str, int] = {}
    for shard in range(3):
        shard_df: dict[str, int] = {}
        for s, text in docs:
            if s != shard:
                continue
            counts = Counter(standard_terms(text))
            terms = {t: {"term_freq": c, "doc_freq": rng.randint(1, 50)} for t, c in counts.items()}
            if rng.random() < 0.05:  # a vector without statistics takes the slow path
                terms = {t: {"term_freq": c} for t, c in counts.items()}
            collector(shard, {"_source": {"body": text}}, terms)
            for term, info in terms.items():
                shard_df[term] = max(shard_df.get(term, 0), int(info.get("doc_freq") or 0))
                want_ttf[term] = want_ttf.get(term, 0) + int(info.get("term_freq", 0))
        for term, n in shard_df.items():
            want_df[term] = want_df.get(term, 0) + n
    got_df, got_ttf = collector.term_statistics()
    assert list(got_df.items()) == list(want_df.items())
    assert got_ttf == want_ttf
    assert collector.global_df is not None
    assert collector.global_df.tolist() == list(want_df.values())
