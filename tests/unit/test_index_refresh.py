"""The snapshot refresh of esqlog index (esqlog.indexing.refresh) without an engine: df moved
by the changed documents, new terms found by the Bloom filter, the staleness budget."""

from __future__ import annotations

import numpy as np

from esqlog.calibration.record import Calibration
from esqlog.indexing.refresh import Changes, _with_terms, refreshed_vocabulary, room
from esqlog.statistics.vocabulary import Vocabulary, build_bloom, term_hash

TERMS = {"readfile": 3, "writefile": 1, "buffer": 7}


def _vocabulary() -> Vocabulary:
    names = list(TERMS)
    keys = np.array([term_hash(t) for t in names], dtype=np.uint64)
    order = np.argsort(keys)
    df = np.array([TERMS[t] for t in names], dtype=np.uint32)[order]
    return Vocabulary("code", "uuid", "content", 10, 100, 10, "2026-12-02", keys[order], df,
                      build_bloom(names))


def test_df_moves_by_the_changed_documents_and_new_terms_are_found() -> None:
    changes = Changes(old=[{"writefile": 1, "buffer": 2}],
                      new=[{"frobnicatewidget": 1, "buffer": 1}, {"buffer": 3}])
    vocab, before = refreshed_vocabulary(_vocabulary(), changes, 11, 104, 11)
    assert before == {"writefile": 1, "buffer": 7, "frobnicatewidget": 0}
    assert vocab.df_of(["readfile", "writefile", "buffer", "frobnicatewidget", "absent"]) == {
        "readfile": 3, "writefile": 0, "buffer": 8, "frobnicatewidget": 1, "absent": 0}
    assert vocab.might_hold("frobnicatewidget") and len(vocab) == 4
    assert (vocab.doc_count, vocab.sum_ttf, vocab.live_docs) == (11, 104, 11)
    assert np.all(np.diff(vocab.hashes.astype(np.float64)) > 0)  # still sorted, unique


def test_bloom_bits_are_build_blooms() -> None:
    terms = [f"term{k}" for k in range(40)]
    built = build_bloom(terms)
    assert np.array_equal(_with_terms(np.zeros_like(built), terms), built)


def test_the_refresh_budget_is_five_percent_of_live_documents_on_one_shard() -> None:
    base = dict(index="code", index_uuid="u", field="content", q=0.7, h_tok=0.04,
                h_tok_low=0.04, h_tok_high=0.04, h_tok_method="exact", doc_count=2000,
                live_docs=2000, sum_ttf=10, avgdl=1.0, shards=1, analyzer="standard",
                splits_identifiers=False, predictor="p", predictor_version="1", engine="e",
                engine_version="1")
    assert room(Calibration(**base)) == 100  # type: ignore[arg-type]
    assert room(Calibration(**{**base, "refreshed_docs": 60})) == 40  # type: ignore[arg-type]
    assert room(Calibration(**{**base, "refreshed_docs": 200})) == 0  # type: ignore[arg-type]
    assert room(Calibration(**{**base, "shards": 3})) == 0  # type: ignore[arg-type]
    assert room(None) == 0
