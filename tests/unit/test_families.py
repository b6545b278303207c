"""Generated families as df spikes (esqlog.identifiers.families): the spike test and its chance
guard."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from esqlog.identifiers.families import (
    FAMILY_MIN_WORDS,
    WordsPerDf,
    families,
    family_excess,
    poisson_tail,
)


def test_poisson_tail_equals_one_minus_the_cdf() -> None:
    for count, mean in ((3, 1.0), (10, 2.9), (20, 10.0), (12, 1.1)):
        cdf = sum(math.exp(-mean) * mean**k / math.factorial(k) for k in range(count))
        assert poisson_tail(count, mean) == pytest.approx(1.0 - cdf, rel=1e-9)
    assert poisson_tail(2, 5.0) == 1.0  # at or under the mean: no spike to speak of
    assert 0.0 <= poisson_tail(692, 157.0) < 1e-100  # Go's locale codes


@given(st.integers(1, 400), st.floats(0.5, 200.0))
def test_poisson_tail_is_a_probability_falling_with_the_count(count: int, mean: float) -> None:
    tail = poisson_tail(count, mean)
    assert 0.0 <= tail <= 1.0
    assert poisson_tail(count + 1, mean) <= tail


def table(counts: np.ndarray) -> WordsPerDf:
    """The sparse table of a dense count of words per df, built from the words' dfs."""
    return WordsPerDf.of(np.repeat(np.arange(counts.size), counts))


@given(
    st.lists(st.integers(0, 60), min_size=1, max_size=80), st.integers(0, 90), st.integers(0, 90)
)
def test_the_sparse_table_counts_as_a_dense_one(counts: list[int], lo: int, hi: int) -> None:
    dense = np.asarray(counts, dtype=np.int64)
    words = table(dense)
    # words of df 0 (in no document) are left out
    assert words.between(lo, hi) == int(dense[max(lo, 1) : hi + 1].sum())
    assert words.at(lo) == (int(dense[lo]) if lo < dense.size and lo > 0 else 0)


def zipf_counts(n: int = 2000, scale: float = 2e5) -> np.ndarray:
    """Words per df as a natural vocabulary has them: about scale / df^2."""
    df = np.arange(n, dtype=np.float64)
    counts = np.zeros(n, dtype=np.int64)
    counts[1:] = np.round(scale / df[1:] ** 2)
    return counts


def test_a_family_is_a_spike_and_chance_is_not() -> None:
    counts = zipf_counts()
    assert families(table(counts), 3.0) == []  # a smooth vocabulary has no family
    spiked = counts.copy()
    spiked[37] += 500  # 500 generated files of one shape: 500 more words of df 37
    found = family_excess(table(spiked), 37)
    # the neighbourhood: df 29-47 (37 / 1.25 to 37 * 1.25 + 1), df 37 itself left out
    around = np.concatenate((spiked[29:37], spiked[38:48])).mean()
    assert found == pytest.approx(spiked[37] / around)
    assert [df for df, _, _ in families(table(spiked), 3.0)] == [37]
    # high up, where a df holds about one word: 10 words of one df is chance at a mean of
    # 2.9 (the tail is 1e-3), but not 30
    sparse = np.zeros(400, dtype=np.int64)
    sparse[150:350] = 3  # df 188-294 around 235: 3 words each
    sparse[235] = 10
    assert family_excess(table(sparse), 235) == 0.0
    sparse[235] = 30
    assert family_excess(table(sparse), 235) == pytest.approx(10.0)
    sparse[150:350] = 0  # and under FAMILY_MIN_WORDS words never, however alone
    sparse[235] = FAMILY_MIN_WORDS - 1
    assert family_excess(table(sparse), 235) == 0.0
    assert family_excess(table(spiked), 1) == 0.0 and family_excess(table(spiked), 10**6) == 0.0
