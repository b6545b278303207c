"""The snapshot refresh of esqlog index (esqlog.indexing.refresh) without an engine: df moved
by the changed documents, new terms found by the Bloom filter, the staleness budget."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from esqlog.calibration.record import Calibration
from esqlog.identifiers.split_stats import IdentifierStats
from esqlog.indexing.refresh import (
    Changes,
    _with_terms,
    refreshed_stats,
    refreshed_vocabulary,
    room,
    track,
)
from esqlog.statistics.analysis import standard_terms
from esqlog.statistics.term_keys import build_bloom, term_hash
from esqlog.statistics.vocabulary import Vocabulary
from tests.support.split_docs import DOCS, build

TERMS = {"readfile": 3, "writefile": 1, "buffer": 7}


def _vocabulary() -> Vocabulary:
    names = list(TERMS)
    keys = np.array([term_hash(t) for t in names], dtype=np.uint64)
    order = np.argsort(keys)
    df = np.array([TERMS[t] for t in names], dtype=np.uint32)[order]
    return Vocabulary(
        "code", "uuid", "content", 10, 100, 10, "2026-12-02", keys[order], df, build_bloom(names)
    )


def test_df_moves_by_the_changed_documents_and_new_terms_are_found() -> None:
    changes = Changes(
        old=[{"writefile": 1, "buffer": 2}],
        new=[{"frobnicatewidget": 1, "buffer": 1}, {"buffer": 3}],
    )
    vocab, before = refreshed_vocabulary(_vocabulary(), changes, 11, 104, 11)
    assert before == {"writefile": 1, "buffer": 7, "frobnicatewidget": 0}
    assert vocab.df_of(["readfile", "writefile", "buffer", "frobnicatewidget", "absent"]) == {
        "readfile": 3,
        "writefile": 0,
        "buffer": 8,
        "frobnicatewidget": 1,
        "absent": 0,
    }
    assert vocab.might_hold("frobnicatewidget") and len(vocab) == 4
    assert (vocab.doc_count, vocab.sum_ttf, vocab.live_docs) == (11, 104, 11)
    assert np.all(np.diff(vocab.hashes.astype(np.float64)) > 0)  # still sorted, unique


def test_bloom_bits_are_build_blooms() -> None:
    terms = [f"term{k}" for k in range(40)]
    built = build_bloom(terms)
    assert np.array_equal(_with_terms(np.zeros_like(built), terms), built)


def test_the_refresh_budget_is_five_percent_of_live_documents_on_one_shard() -> None:
    base = dict(
        index="code",
        index_uuid="u",
        field="content",
        q=0.7,
        h_tok=0.04,
        h_tok_low=0.04,
        h_tok_high=0.04,
        h_tok_method="exact",
        doc_count=2000,
        live_docs=2000,
        sum_ttf=10,
        avgdl=1.0,
        shards=1,
        analyzer="standard",
        splits_identifiers=False,
        predictor="p",
        predictor_version="1",
        engine="e",
        engine_version="1",
    )
    assert room(Calibration(**base)) == 100  # type: ignore[arg-type]
    assert room(Calibration(**{**base, "refreshed_docs": 60})) == 40  # type: ignore[arg-type]
    assert room(Calibration(**{**base, "refreshed_docs": 200})) == 0  # type: ignore[arg-type]
    assert room(Calibration(**{**base, "shards": 3})) == 0  # type: ignore[arg-type]
    assert room(None) == 0


def _scratch(texts: list[str]) -> tuple[Vocabulary, IdentifierStats]:
    """The snapshot and split statistics a full calibration of these documents records."""
    docs = [(0, t) for t in texts]
    df = Counter(t for text in texts for t in set(standard_terms(text) or []))
    names = sorted(df)
    keys = np.array([term_hash(t) for t in names], dtype=np.uint64)
    order = np.argsort(keys)
    vocab = Vocabulary(
        "code",
        "uuid",
        "content",
        len(texts),
        100,
        len(texts),
        "now",
        keys[order],
        np.array([df[t] for t in names], np.uint32)[order],
        build_bloom(names),
    )
    return vocab, build(shards=1, docs=docs)


def _terms(text: str) -> dict[str, int]:
    return dict(Counter(standard_terms(text)))


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ([], ["func readConfig() { return os.ReadFile(path) }"]),  # an add
        (["ReadFile reads a file; read_all reads everything"], []),  # a delete
        (["read the whole file into memory"], ["readFile the whole file into memory"]),  # an edit
    ],
)
def test_a_refresh_moves_split_dfs_as_a_full_calibration_counts_them(
    old: list[str], new: list[str]
) -> None:
    """Adding a document moves a word's split df up, deleting one moves it down: after the
    refresh every word of the full calibration of the same documents has its df."""
    before_texts = [text for _, text in DOCS]
    after_texts = [t for t in before_texts if t not in old] + new
    vocab, stats = _scratch(before_texts)
    changes = Changes(
        old=[_terms(t) for t in old],
        new=[_terms(t) for t in new],
        texts=list(new),
        new_ids=[f"n{k}" for k in range(len(new))],
    )
    moved, df_before = refreshed_vocabulary(vocab, changes, len(after_texts), 100, len(after_texts))
    assert stats.local_row_of_word.size == len(stats.words)  # a lookup of the old words...
    got = refreshed_stats(stats, moved, df_before, changes, len(after_texts))
    assert "local_row_of_word" not in got.__dict__  # ...not carried into the new ones
    _, want = _scratch(after_texts)
    got_split = dict(zip(got.words, got.df_split.tolist(), strict=True))
    got_engine = dict(zip(got.words, got.df_engine.tolist(), strict=True))
    checked = 0
    for i, word in enumerate(want.words):
        if want.df_split[i] > 0:
            assert got_split.get(word) == int(want.df_split[i]), word
            checked += 1
        assert got_engine.get(word, 0) == int(want.df_engine[i]), word
    assert checked > 5 and got.split_docs == want.split_docs


class _NoEngine:
    def perform(self, request: object) -> dict[str, object]:
        raise AssertionError("no document existed: nothing to read")


@pytest.mark.parametrize(("documents", "overflow"), [(4, False), (5, False), (6, True)])
def test_a_run_of_exactly_the_limit_is_still_tracked(documents: int, overflow: bool) -> None:
    changes = Changes()
    actions = [{"_op_type": "index", "_id": f"d{k}", "_source": {}} for k in range(documents)]
    out = list(track(_NoEngine(), "code", iter(actions), set(), 5, changes))  # type: ignore[arg-type]
    assert out == actions  # every action still written, tracked or not
    assert changes.overflow is overflow
    assert changes.new_ids == ([] if overflow else [a["_id"] for a in actions])
