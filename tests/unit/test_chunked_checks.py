"""The load's checks and counts go a CHUNK of entries at a time (so that no temporary the
size of a million-word array is left in each process's heap) and find what the
whole-array expressions found, at chunk boundaries included."""

from __future__ import annotations

import numpy as np
import pytest

from esqlog.identifiers import split_stats
from esqlog.identifiers.families import WordsPerDf
from esqlog.statistics import mapped_terms
from esqlog.statistics.mapped_terms import decreases, index_arrays, index_problem


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mapped_terms, "CHUNK", 4)
    monkeypatch.setattr(split_stats, "CHUNK", 4)


@pytest.mark.parametrize("at", range(1, 13))
def test_a_step_down_or_a_repeat_is_found_wherever_it_is(at: int) -> None:
    rising = np.arange(13, dtype=np.int64) * 2
    assert not decreases(rising) and not decreases(rising, strict=True)
    down = rising.copy()
    down[at] = down[at - 1] - 1
    assert decreases(down) and decreases(down, strict=True)
    same = rising.copy()
    same[at] = same[at - 1]
    assert not decreases(same) and decreases(same, strict=True)
    assert not decreases(rising[:1]) and not decreases(rising[:0])


def words_arrays(words: list[str]) -> tuple[np.ndarray, ...]:
    index = index_arrays(words)
    blob = np.frombuffer("\n".join(words).encode(), np.uint8)
    return blob, index["word_starts"], index["word_keys"], index["word_order"]


WORDS = [f"w{k}" for k in range(11)]


def test_well_formed_words_pass_and_each_damage_is_named() -> None:
    blob, starts, keys, order = words_arrays(WORDS)
    assert index_problem(blob, starts, keys, order) is None
    twice = order.copy()
    twice[9] = twice[2]  # a position twice, another never: in range, not a permutation
    assert "permutation" in str(index_problem(blob, starts, keys, twice))
    late = blob.copy()
    late[int(starts[10]) - 1] = ord("x")  # the separator before the last word
    assert "starts" in str(index_problem(late, starts, keys, order))
    swapped = keys.copy()
    swapped[8], swapped[9] = swapped[9], swapped[8]
    assert "sorted" in str(index_problem(blob, starts, swapped, order))


def test_the_words_per_df_counted_in_chunks_are_the_whole_count() -> None:
    rng = np.random.default_rng(3)
    split = rng.integers(0, 6, 23).astype(np.uint32)
    engine = rng.integers(0, 9, 23).astype(np.uint32)
    chunked = split_stats._words_per_df(split, engine)
    whole = WordsPerDf.of(np.where(split > 0, split, engine).astype(np.int64))
    assert np.array_equal(chunked.values, whole.values)
    assert np.array_equal(chunked.cumulative, whole.cumulative)
    empty = split_stats._words_per_df(np.zeros(0, np.uint32), np.zeros(0, np.uint32))
    assert empty.values.size == 0 and empty.between(0, 10) == 0
