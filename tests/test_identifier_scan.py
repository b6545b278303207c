"""The vocabulary-scan hook of the identifiers mode (esqlog.identifier_scan), I/O-free.

Its worker thread must not change what is learned: the same documents give the same
statistics inline and in the background, across page boundaries, restarts and failures.
"""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest

from esqlog import identifier_scan
from esqlog.analysis import standard_terms
from esqlog.identifier_scan import SplitCollector
from esqlog.identifier_stats import IdentifierStats, build_identifier_stats
from esqlog.subwords import split_identifier

WORDS = ["read", "File", "readFile", "ReadFile", "read_file", "HTTPServer", "http", "server",
         "getURL", "url", "utf8", "UTF8String", "os.ReadFile", "web", "WebSocket", "socket",
         "XMLHttpRequest", "fooBar", "foobAr", "FOObar", "base64", "v2", "the", "error"]


def _docs(n: int, seed: int = 7) -> list[tuple[int, str]]:
    rng = random.Random(seed)
    return [(rng.randrange(3), " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12))))
            for _ in range(n)]


def _feed(collector: SplitCollector, docs: list[tuple[int, str]]) -> None:
    for shard, text in docs:
        counts = Counter(standard_terms(text))
        collector(shard, {"_source": {"body": text}},
                  {t: {"term_freq": c} for t, c in counts.items()})


def _stats(collector: SplitCollector, docs: list[tuple[int, str]]) -> IdentifierStats:
    collector.finish()
    df = Counter(t for _, text in docs for t in set(standard_terms(text) or []))
    return build_identifier_stats(collector, dict(df), index="i", index_uuid="u",
                                  field="body", shards=3, doc_count=len(docs),
                                  created_at="now", predictor="esqlog-linear")


def _same(a: IdentifierStats, b: IdentifierStats) -> None:
    assert a.words == b.words
    for name in ("df_engine", "df_split", "mask", "parts_ptr", "parts_idx"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert a.h_tok == pytest.approx(b.h_tok) and a.split_tokens == b.split_tokens


def test_background_equals_inline_across_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(identifier_scan, "BATCH", 7)  # many hand-overs, a partial last one
    docs = _docs(500)
    inline, background = SplitCollector("body", background=False), SplitCollector("body")
    _feed(inline, docs)
    _feed(background, docs)
    first, second = _stats(inline, docs), _stats(background, docs)
    _same(first, second)
    assert second.parts_of("readfile") == ("read", "file")
    # the first casing that splits wins, in document order, as one token at a time would
    seen = next(w for _, text in docs for w in text.split() if w.lower() == "foobar")
    assert first.parts_of("foobar") == split_identifier(seen)
    assert len({split_identifier(w) for w in ("fooBar", "foobAr", "FOObar")}) == 3


def test_restart_forgets_what_the_worker_saw(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(identifier_scan, "BATCH", 5)
    docs = _docs(120, seed=3)
    collector = SplitCollector("body")
    _feed(collector, _docs(60, seed=99))  # a scan that failed half-way
    collector.restart()
    _feed(collector, docs)
    fresh = SplitCollector("body", background=False)
    _feed(fresh, docs)
    _same(_stats(collector, docs), _stats(fresh, docs))


def test_a_worker_failure_is_raised_in_the_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(identifier_scan, "BATCH", 2)
    collector = SplitCollector("body")
    with pytest.raises(TypeError):
        for _ in range(50):  # a term vector without term_freq fails in the worker
            collector(0, {"_source": {"body": "read"}}, {"read": None})  # type: ignore[dict-item]
        collector.finish()
    collector.close()
    assert collector._worker is None
