"""A wrapper in the identifiers mode reads its identifier statistics file once: the per-shard
numbers boost mode weights its one request with are taken from the statistics already loaded
(the same arrays and term table), not read, hashed and indexed a second time. Boost mode,
which loads nothing else, still reads them from the file. No node is reached."""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from esqlog.calibration.record import SCHEMA_VERSION, Calibration
from esqlog.identifiers.files import identifiers_path_for, save_identifier_stats
from esqlog.statistics.analysis import standard_terms
from esqlog.statistics.vocabulary import save_vocabulary
from esqlog.wrapper import WrapOptions, WrapperCore
from esqlog.wrapper import shard_stats as shard_stats_module
from tests.support.split_docs import DOCS, build_per_shard
from tests.support.vocabularies import make_vocabulary

RECORD = dict(
    index="code",
    index_uuid="u1",
    field="body",
    q=0.8,
    h_tok=0.3,
    h_tok_low=0.29,
    h_tok_high=0.31,
    h_tok_method="exact",
    doc_count=len(DOCS),
    live_docs=len(DOCS),
    sum_ttf=99,
    avgdl=10.0,
    shards=3,
    analyzer="standard",
    splits_identifiers=False,
    predictor="paper-linear",
    predictor_version="1",
    engine="opensearch",
    engine_version="3.6.0",
    standard_analysis=True,
    schema=SCHEMA_VERSION,
)


def calibration_on_disk(tmp_path: Path) -> Calibration:
    """A 3-shard calibration with its snapshot and identifier statistics (per shard) beside."""
    df = Counter(t for _, text in DOCS for t in set(standard_terms(text) or []))
    vocab = make_vocabulary(
        dict(df), index="code", index_uuid="u1", doc_count=len(DOCS), live_docs=len(DOCS)
    )
    stem = tmp_path / "code"
    first, digest = save_vocabulary(vocab, tmp_path / "pending.npz")
    vocab_path = first.rename(stem.with_name(f"code.vocab.{digest[:16]}.npz"))
    stats = build_per_shard(index_uuid="u1")
    save_identifier_stats(stats, identifiers_path_for(stem, digest), digest)
    return dataclasses.replace(
        Calibration.from_json(RECORD),
        vocabulary=str(vocab_path),
        vocabulary_sha256=digest,
        vocabulary_terms=len(vocab),
    )


def test_the_identifiers_mode_takes_the_shard_counts_from_the_statistics_it_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cal = calibration_on_disk(tmp_path)
    reads: list[object] = []
    real = shard_stats_module.shard_counts_for_calibration

    def counted(*args: object) -> object:
        reads.append(args)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(shard_stats_module, "shard_counts_for_calibration", counted)
    boost = WrapperCore([cal], WrapOptions(mode="boost"), "opensearch")
    assert len(reads) == 1  # boost reads the per-shard part, from the file
    from_file = boost.shard_stats[("code", "body")]
    core = WrapperCore([cal], WrapOptions(mode="identifiers"), "opensearch")
    assert len(reads) == 1  # not a second time
    assert core.identifiers is not None
    loaded = core.identifiers.stats[("code", "body")]
    counts = core.shard_stats[("code", "body")]
    assert counts.per_shard and counts.local_row is loaded.local_row
    assert counts.local_df is loaded.local_df and counts.shard_docs is loaded.shard_docs
    assert (counts.index_uuid, counts.field, counts.shards) == (
        from_file.index_uuid,
        from_file.field,
        from_file.shards,
    )
    assert dict(counts.local_row) == dict(from_file.local_row) and counts.local_row
    assert np.array_equal(counts.local_df, from_file.local_df)
    assert np.array_equal(counts.shard_docs, from_file.shard_docs)
    for row in range(len(counts.local_row)):
        assert counts.weighted_idf(row) == pytest.approx(from_file.weighted_idf(row))
        assert counts.weighted_idf(row) > 0
