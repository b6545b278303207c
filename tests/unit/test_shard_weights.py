"""Boost mode's one request weighted by the shards' own statistics (esqlog.wrapper.shard_stats).

The engine multiplies a boost by the scoring shard's idf; the weighted scale divides each
term's weight by its shards' idfs averaged by df, so on the shard holding every match of a
term the engine's score is the global q-log weight exactly, and a term spread evenly is
near it everywhere. The engine tests check the scores the engines return
(tests/engine/test_boost_fan_out.py); these check the arithmetic and its guards.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from esqlog.identifiers.shard_counts import ShardCounts
from esqlog.statistics.terms import FieldStats, TextStats
from esqlog.wrapper.shard_stats import shard_scales, weighted_scale


def _idf(n: int, big_n: int) -> float:
    return math.log1p((big_n - n + 0.5) / (n + 0.5))


def _counts(docs: list[int], rows: dict[str, list[int]]) -> ShardCounts:
    return ShardCounts(
        "u",
        "body",
        len(docs),
        np.asarray(docs, np.int64),
        np.asarray(list(rows.values()) or np.zeros((0, len(docs))), np.uint32),
        {t: i for i, t in enumerate(rows)},
    )


def _text(df: dict[str, int], big_n: int) -> dict[tuple[str, str], TextStats]:
    return {
        ("body", " ".join(df)): TextStats(
            tuple(df), tuple(range(len(df))), df, FieldStats(big_n, big_n * 10, 0)
        )
    }


def test_a_term_on_several_shards_is_divided_by_its_df_weighted_idf() -> None:
    docs = [1000, 1200, 800]
    counts = _counts(docs, {"read": [30, 10, 0], "the": [900, 1100, 700]})
    scale = weighted_scale(_text({"read": 40, "the": 2700}, 3000), {"body": counts}, 3)
    assert scale is not None
    seen = (30 * _idf(30, 1000) + 10 * _idf(10, 1200)) / 40
    assert scale[("body", "read")] == pytest.approx(_idf(40, 3000) / seen, rel=1e-12)
    # the engine's score of "read" on shard 0 is boost * idf_0 = w * idf_0 / seen
    # a common term: its shards' idfs averaged by df (900, 1100, 700), not a plain mean
    by_df = (900 * _idf(900, 1000) + 1100 * _idf(1100, 1200) + 700 * _idf(700, 800)) / 2700
    plain = (_idf(900, 1000) + _idf(1100, 1200) + _idf(700, 800)) / 3
    assert scale[("body", "the")] == pytest.approx(_idf(2700, 3000) / by_df, rel=1e-12)
    assert scale[("body", "the")] != pytest.approx(_idf(2700, 3000) / plain, rel=1e-3)


def test_a_term_on_one_shard_is_nearly_exact_there() -> None:
    """Not in local_df: its global df lies on one shard; the scale is the index's idf over
    the mean of idf(df, N_k), exact when the shards are of one size."""
    counts = _counts([1000, 1000, 1000], {})
    scale = weighted_scale(_text({"yaml": 2}, 3000), {"body": counts}, 3)
    assert scale is not None
    assert scale[("body", "yaml")] * _idf(2, 1000) == pytest.approx(_idf(2, 3000), rel=1e-12)
    assert scale[("body", "yaml")] > 1.1  # the plain no-dfs search under-weights it ~ln(3)


def test_a_one_shard_term_larger_than_a_small_shard_is_capped_by_that_shard() -> None:
    """Which shard holds a one-shard term is not recorded; a shard of 200 documents cannot
    hold 500 of them, so its idf is that of a term in all its 200 documents, not a negative
    one, and the scale stays positive and near the other shards'."""
    counts = _counts([1000, 200, 1800], {})
    scale = weighted_scale(_text({"yaml": 500}, 3000), {"body": counts}, 3)
    assert scale is not None
    seen = (_idf(500, 1000) + _idf(200, 200) + _idf(500, 1800)) / 3
    assert scale[("body", "yaml")] == pytest.approx(_idf(500, 3000) / seen, rel=1e-12)


def test_no_statistics_for_the_shard_count_means_the_dfs_way() -> None:
    counts = _counts([1000, 1000], {})
    assert weighted_scale(_text({"a": 1}, 2000), {"body": counts}, 3) is None
    assert weighted_scale(_text({"a": 1}, 2000), {}, 2) is None


def test_a_term_matching_nothing_gets_no_scale() -> None:
    counts = _counts([1000, 1000], {})
    scale = weighted_scale(_text({"zzz": 0}, 2000), {"body": counts}, 2)
    assert scale == {}


@given(st.lists(st.integers(0, 500), min_size=2, max_size=6))
def test_the_weighted_idf_lies_between_the_shards_idfs(per: list[int]) -> None:
    """A df-weighted mean: the engine's score on each shard errs by that shard's idf over
    a value between the smallest and largest idf the term has where it occurs."""
    docs = [1000] * len(per)
    held = [p for p in per if p]
    if len(held) < 2:
        return
    counts = _counts(docs, {"t": per})
    total = sum(per)
    scale = weighted_scale(_text({"t": total}, sum(docs)), {"body": counts}, len(docs))
    assert scale is not None
    seen = _idf(total, sum(docs)) / scale[("body", "t")]
    idfs = [_idf(p, 1000) for p in held]
    assert min(idfs) - 1e-9 <= seen <= max(idfs) + 1e-9


def test_on_the_shard_holding_a_term_the_fan_out_and_weighted_scales_agree() -> None:
    """Matches on shard 1 only, though listed per shard: both make the engine's score there
    the global weight (the fan-out exactly, the weighted scale because the df weights put
    all of the mean on that shard)."""
    counts = _counts([1000, 1000, 1000], {"t": [0, 25, 0]})
    stats = _text({"t": 25}, 3000)
    fan = shard_scales(stats, {"body": counts}, 3)
    scale = weighted_scale(stats, {"body": counts}, 3)
    assert fan is not None and scale is not None
    assert scale[("body", "t")] == pytest.approx(fan[1][("body", "t")], rel=1e-12)


def test_per_shard_counts_of_a_recreated_index_are_not_used() -> None:
    """The per-shard statistics were recorded for one index UUID: once the index is deleted
    and created again under the same name (a new UUID) they describe documents that are
    gone, and the one-request boost must fall back to the dfs search."""
    from types import SimpleNamespace

    from esqlog.wrapper.boost_fan_out import usable_shard_counts

    counts = _counts([1000, 1200, 800], {"read": [30, 10, 0]})  # recorded for UUID "u"
    core = SimpleNamespace(
        shard_stats={("code", "body"): counts}, snapshot_for=lambda index, field: object()
    )
    call = SimpleNamespace(index="code", get=lambda key: None)
    stats = _text({"read": 40}, 3000)
    same = SimpleNamespace(index="code", uuid="u", shards=3)
    recreated = SimpleNamespace(index="code", uuid="v", shards=3)
    assert usable_shard_counts(core, call, same, stats) == {"body": counts}  # type: ignore[arg-type]
    assert not usable_shard_counts(core, call, recreated, stats)  # type: ignore[arg-type]
