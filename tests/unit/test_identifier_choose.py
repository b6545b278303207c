"""The identifiers mode's clause budget selection (esqlog.identifiers.selection.choose) against a
plain per-word reference: the vectorised one must choose the very same compounds in the
very same order for every setting, so that its speed changes no plan and no ranking.

The reference below is the selection as it was written first, one numpy step per word
(and a sort with inverse over all the lists' heads to count shared compounds); hypothesis
draws the lists, weights, dfs and settings, including lists sharing many compounds (the
bucketed count's collisions) and budgets smaller and larger than the candidates.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import esqlog.identifiers.selection as selection
from esqlog.identifiers.selection import (
    MARKS_LIMIT,
    MULTI_SCAN,
    choose,
    first_by_tier_then_mass,
    shared_counts,
)
from esqlog.identifiers.settings import SELECTIONS, IdentifierSettings

IdentifierStats = Any


def reference_choose(
    present: list[str],
    comps: Mapping[str, np.ndarray],
    weight: Mapping[str, float],
    engine_df: Mapping[str, int],
    stats: IdentifierStats,
    settings: IdentifierSettings,
    common: set[str],
    shards: int,
) -> dict[str, np.ndarray]:
    """esqlog.identifiers.selection.choose as first written, one numpy step per word (what it
    chooses: see that function's docstring)."""
    first = {w: 0 if engine_df.get(w, 0) > 0 or not comps[w].size else 1 for w in present}
    room = max(_reference_budget(settings, stats.shards, shards) - len(present), 0)
    held: list[np.ndarray] = []  # per word: how many query words each compound holds
    covered: list[np.ndarray] = []  # per word: the summed weight of those words
    multi: np.ndarray = np.zeros(0, dtype=np.int32)
    # "all" and "auto" leave no choice on the nodes; a budget that chooses takes "cover"
    select = "cover" if settings.select in ("all", "auto") else settings.select
    if select != "mass" and len(present) > 1:
        held, covered, multi = _reference_in_several(
            [comps[w][:MULTI_SCAN] for w in present], [weight[w] for w in present]
        )
    keys, tiers, owners, ids_of = [], [], [], []
    for k, w in enumerate(present):
        ids = comps[w][first[w] :]
        if held:
            several = held[k][first[w] :]  # the head: the list's first MULTI_SCAN
            boosted = several > 1
            head, rest = ids[: boosted.size], ids[:room]
            in_multi = (
                boosted[: rest.size]
                if rest.size <= boosted.size
                else np.concatenate((boosted, np.isin(rest[boosted.size :], multi)))
            )
            ids = np.concatenate((head[boosted], rest[~in_multi]))
            # "multi": one tier; "words": the more query words a compound holds, the
            # sooner; "cover": the more weight of the query it holds, the sooner
            multi_tier = (
                -several[boosted]
                if select == "words"
                else -covered[k][first[w] :][boosted]
                if select == "cover"
                else np.zeros(int(boosted.sum()))
            )
        else:
            ids, multi_tier = ids[:room], np.zeros(0)
        tier = 2 if settings.rare_first and w in common else 1
        tiers.append(np.concatenate((multi_tier, np.full(ids.size - multi_tier.size, tier))))
        keys.append(weight[w] * stats.df_engine[ids].astype(np.float64))
        owners.append(np.full(ids.size, k))
        ids_of.append(ids)
    out = {w: comps[w][: first[w]] for w in present}
    if room and keys:
        key, owner, cid = np.concatenate(keys), np.concatenate(owners), np.concatenate(ids_of)
        top = np.lexsort((-key, np.concatenate(tiers)))[:room]  # by tier, then mass
        for k, w in enumerate(present):
            picked = cid[top[owner[top] == k]]
            # in df order, the sub-word's own list order (most frequent first)
            order = np.argsort(-stats.df_engine[picked].astype(np.int64), kind="stable")
            out[w] = np.concatenate((out[w], picked[order]))
    return out


def _reference_budget(settings: IdentifierSettings, index_shards: int, layout: int) -> int:
    """The clause budget as docs/identifiers.md states it: the configured one, else 300 on
    one shard, 300 for each shard's own query of the fan-out (an index of several shards
    laid out as one), 200 for one query over several shards."""
    if settings.budget is not None:
        return settings.budget
    if index_shards <= 1:
        return 300
    return 300 if layout == 1 else 200


def _reference_in_several(
    lists: list[np.ndarray], weights: list[float]
) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray]:
    """Per list, how many of the lists hold each of its ids and the summed weight of those
    lists, and the ids held by two or more: one (unstable, so fast) sort of them all
    instead of a set lookup per list (the query is built on every search)."""
    ids = np.concatenate(lists)
    sizes = [a.size for a in lists]
    unique, inverse, runs = np.unique(ids, return_inverse=True, return_counts=True)
    each = np.repeat(np.asarray(weights, np.float64), sizes)
    held = runs[inverse]  # each list holds an id at most once
    mass = np.bincount(inverse, weights=each, minlength=unique.size)[inverse]
    cuts = np.cumsum(sizes)[:-1]
    return np.split(held, cuts), np.split(mass, cuts), unique[runs > 1]


@st.composite
def _inputs(draw: st.DrawFn) -> tuple[Any, ...]:
    vocabulary = draw(st.integers(5, 400))
    # ids far apart too, so that unrelated ids share a hash bucket (65,536 apart)
    stride = draw(st.sampled_from([1, 65_536, 65_537]))
    ids = st.integers(0, vocabulary - 1).map(lambda i: i * stride)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    df = rng.integers(0, 50, vocabulary * stride).astype(np.uint32)
    words = [f"w{k}" for k in range(draw(st.integers(1, 6)))]
    comps = {}
    for w in words:
        chosen = sorted(set(draw(st.lists(ids, max_size=60))))
        comps[w] = np.asarray(sorted(chosen, key=lambda i: -int(df[i])), np.int32)
    # weights of zero or below too: shared compounds then tier with or after the others,
    # so that the selection cannot keep only the shared ones
    weight = {w: draw(st.floats(0.1, 10.0) | st.floats(-2.0, 0.0)) for w in words}
    engine_df = {w: draw(st.integers(0, 3)) for w in words}
    common = {w for w in words if draw(st.booleans())}
    config = IdentifierSettings(
        budget=draw(st.none() | st.integers(1, 80)),
        select=draw(st.sampled_from(SELECTIONS)),
        rare_first=draw(st.booleans()),
    )
    stats = SimpleNamespace(shards=draw(st.sampled_from([1, 3])), df_engine=df)
    return words, comps, weight, engine_df, stats, config, common, draw(st.sampled_from([1, 3]))


@settings(max_examples=150, deadline=None)
@given(_inputs())
def test_the_selection_is_the_reference_one(inputs: tuple[Any, ...]) -> None:
    got: Mapping[str, np.ndarray] = choose(*inputs)
    want = reference_choose(*inputs)
    assert got.keys() == want.keys()
    for word in want:
        assert got[word].tolist() == want[word].tolist(), word


#: ids the tables hold (small, non-negative; a few dozen of them, so that several lists
#: hold one, some three or more) and those counted by buckets instead: past MARKS_LIMIT,
#: negative (a signed type) or wider than 32 bits
_IDS = (
    st.integers(0, 40) | st.integers(0, 200_000) | st.sampled_from([MARKS_LIMIT, 2**31 - 1, -1, -7])
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(_IDS, max_size=80, unique=True), min_size=1, max_size=8),
    st.sampled_from([np.int32, np.uint32, np.int64]),
    st.sampled_from([selection.RANKS, 2]),
    st.data(),
)
def test_the_shared_compound_count_is_the_reference_one(
    drawn: list[list[int]], dtype: Any, ranks: int, data: st.DataObject
) -> None:
    """Ids the tables hold and ids counted by buckets alike; repeats found by the table of
    ranks and numbered there or, past RANKS ids, found by a sort and searched; the masses
    the very same floats (summed in position order); the marks all cleared after each
    count."""
    if dtype == np.uint32:
        drawn = [[i for i in ids if i >= 0] for ids in drawn]
    lists = [np.asarray(ids, dtype) for ids in drawn]
    weights = [data.draw(st.floats(0.1, 10.0)) for _ in lists]
    sizes = np.asarray([a.size for a in lists], np.int64)
    saved, selection.RANKS = selection.RANKS, ranks
    try:
        where, shared_held, shared_mass = shared_counts(
            np.concatenate(lists), sizes, np.asarray(weights, np.float64)
        )
    finally:
        selection.RANKS = saved
    flat_held = np.ones(int(sizes.sum()), np.int64)
    flat_mass = np.repeat(np.asarray(weights, np.float64), sizes)
    flat_held[where], flat_mass[where] = shared_held, shared_mass
    cuts = np.cumsum(sizes)[:-1]
    held, mass = np.split(flat_held, cuts), np.split(flat_mass, cuts)
    want_held, want_mass, _ = _reference_in_several(lists, weights)
    for a, b in zip(held, want_held, strict=True):
        assert a.tolist() == b.tolist()
    for a, b in zip(mass, want_mass, strict=True):
        assert a.tolist() == b.tolist()
    marks = getattr(selection._MARKS, "marks", None)
    assert marks is None or not marks.any()


@settings(max_examples=60, deadline=None)
@given(_inputs())
def test_a_budget_beyond_the_scanned_head_is_the_reference_one(inputs: tuple[Any, ...]) -> None:
    """With a head shorter than the budget (a budget above MULTI_SCAN on a real index), the
    candidates past the head come after it, the shared compounds among them left out."""
    global MULTI_SCAN
    saved = MULTI_SCAN
    MULTI_SCAN = selection.MULTI_SCAN = 7
    try:
        got: Mapping[str, np.ndarray] = choose(*inputs)
        want = reference_choose(*inputs)
    finally:
        MULTI_SCAN = selection.MULTI_SCAN = saved
    assert got.keys() == want.keys()
    for word in want:
        assert got[word].tolist() == want[word].tolist(), word


@pytest.mark.parametrize(
    ("index_shards", "layout", "clauses"), [(1, 1, 300), (3, 1, 300), (3, 3, 200)]
)
def test_the_default_budget_counts_the_clauses_sent(
    index_shards: int, layout: int, clauses: int
) -> None:
    """Without a configured budget: 300 clauses on one shard and in each shard's own query
    of the fan-out (an index of 3 shards laid out as one), 200 in one query over 3 shards."""
    df = np.arange(2000, 0, -1).astype(np.uint32)
    comps = {
        "read": np.arange(1, 1000, dtype=np.int32),
        "file": np.arange(1000, 1999, dtype=np.int32),
    }
    stats = SimpleNamespace(shards=index_shards, df_engine=df)
    got = choose(
        ["read", "file"],
        comps,
        {"read": 1.0, "file": 2.0},
        {"read": 5, "file": 5},
        stats,
        IdentifierSettings(),
        set(),
        layout,
    )
    assert sum(a.size for a in got.values()) + 2 == clauses  # + each word's own term


#: tiers as the budget draws them: negated masses of shared compounds (ties included, a
#: -0.0 beside 0.0), then 1.0 and 2.0 (rare_first); masses with many equal values
_TIERS = st.sampled_from([-3.5, -2.0, -1.25, -0.0, 0.0, 1.0, 2.0])
_MASSES = st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0, 7.25])


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(_TIERS, _MASSES), max_size=60), st.integers(1, 70), st.sampled_from([0, 40])
)
def test_the_first_candidates_are_those_of_the_full_sort(
    rows: list[tuple[float, float]], room: int, sort_all: int
) -> None:
    """The partitioned pick takes the very positions, in the very order, of the stable sort
    by tier then mass (largest first) it replaces: ties at the boundary by position. The
    few candidates sorted whole (SORT_ALL) alike."""
    tier = np.asarray([t for t, _ in rows], np.float64)
    key = np.asarray([k for _, k in rows], np.float64)
    want = np.lexsort((-key, tier))[:room]
    saved = selection.SORT_ALL
    selection.SORT_ALL = sort_all
    try:
        assert first_by_tier_then_mass(tier, key, room).tolist() == want.tolist()
    finally:
        selection.SORT_ALL = saved


@pytest.mark.parametrize("weight", [2.0, -2.0])
def test_shared_compounds_filling_the_budget_are_taken_alone_only_when_tiered_first(
    weight: float,
) -> None:
    """Four shared places for a room of two: with positive weights the shared compounds
    (tier: their summed weight negated) are the only ones taken; with negative ones they
    tier after the others, which are then taken first, as the reference does."""
    df = np.asarray([2, 1, 9, 8, 7, 6], np.uint32)  # each list most frequent first
    comps = {"a": np.asarray([2, 3, 0, 1], np.int32), "b": np.asarray([4, 5, 0, 1], np.int32)}
    inputs = (
        ["a", "b"],
        comps,
        {"a": weight, "b": weight},
        {"a": 1, "b": 1},
        SimpleNamespace(shards=1, df_engine=df),
        IdentifierSettings(budget=4, select="cover", rare_first=False),
        set(),
        1,
    )
    got = choose(*inputs)  # type: ignore[arg-type]
    want = reference_choose(*inputs)  # type: ignore[arg-type]
    assert {w: v.tolist() for w, v in got.items()} == {w: v.tolist() for w, v in want.items()}
    shared = {0, 1}
    taken = {int(i) for v in got.values() for i in v}
    assert (taken <= shared) == (weight > 0)


def test_threads_counting_at_once_each_get_their_own_answer() -> None:
    """The shared count writes to tables of its thread: searches of several threads at once
    (a wrapped client serves them) find what each finds alone."""
    import sys
    import threading

    rng = np.random.default_rng(7)
    cases = []
    for _ in range(4):
        lists = [rng.choice(3_000, size=rng.integers(50, 400), replace=False) for _ in range(5)]
        ids = np.concatenate(lists).astype(np.int32)
        sizes = np.asarray([a.size for a in lists], np.int64)
        weights = rng.uniform(0.1, 5.0, 5)
        cases.append((ids, sizes, weights))
    alone = [[a.tolist() for a in shared_counts(*case)] for case in cases]
    wrong: list[int] = []

    def run(k: int) -> None:
        for _ in range(200):
            if [a.tolist() for a in shared_counts(*cases[k])] != alone[k]:
                wrong.append(k)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(cases))]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads take turns between almost any two steps
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert not wrong


@pytest.mark.parametrize("select", ["words", "cover"])
def test_a_first_clause_counts_among_the_words_holding_its_compound(select: str) -> None:
    """A word the index does not hold keeps its most frequent compound as its first clause
    (lifted out of the candidates), yet that word still counts among those holding the
    compound: X, held by a, b and c, comes before Y, held by b and c, though Y is more
    frequent (a count after the lift would tie them and take Y)."""
    df = np.asarray([1, 9], np.uint32)  # X = 0, Y = 1
    comps = {
        "a": np.asarray([0], np.int32),
        "b": np.asarray([1, 0], np.int32),
        "c": np.asarray([1, 0], np.int32),
    }
    inputs = (
        ["a", "b", "c"],
        comps,
        {"a": 1.0, "b": 1.0, "c": 1.0},
        {"b": 3, "c": 3},  # a: not in the index, its first clause is X
        SimpleNamespace(shards=1, df_engine=df),
        IdentifierSettings(budget=4, select=select),  # room for one compound
        set(),
        1,
    )
    got = choose(*inputs)
    assert {w: a.tolist() for w, a in got.items()} == {"a": [0], "b": [0], "c": []}
    want = reference_choose(*inputs)
    assert all(got[w].tolist() == want[w].tolist() for w in want)


def _counted(lists: list[list[int]]) -> tuple[list[int], list[int], list[float]]:
    """shared_counts of int32 lists weighted 1, 2, 3, ... as plain lists."""
    arrays = [np.asarray(a, np.int32) for a in lists]
    weights = np.arange(1, len(arrays) + 1, dtype=np.float64)
    sizes = np.asarray([a.size for a in arrays], np.int64)
    where, held, mass = shared_counts(np.concatenate(arrays), sizes, weights)
    return where.tolist(), held.tolist(), mass.tolist()


def test_shared_ids_past_the_ranks_table_are_numbered_by_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """More shared ids than the table of ranks numbers: each counted as its own id still."""
    lists = [[1, 2, 3, 7], [3, 2, 1], [2, 9]]
    want = ([0, 1, 2, 4, 5, 6, 7], [2, 3, 2, 2, 3, 2, 3], [3.0, 6.0, 3.0, 3.0, 6.0, 3.0, 6.0])
    assert _counted(lists) == want
    monkeypatch.setattr(selection, "RANKS", 1)
    assert _counted(lists) == want


def test_more_ids_than_the_ranks_hold_positions_of_are_counted_by_the_sort() -> None:
    """Past RANKS ids their positions no longer fit the table of ranks (uint16): two
    positions 65,536 apart would read back as each other's. Here id 5 is at positions 5
    and 65,541 of 70,000, and id 7 at 7 and 65,543, two lists of distinct ids otherwise."""
    first = list(range(40_000))
    second = list(range(40_000, 70_000))
    second[65_541 - 40_000], second[65_543 - 40_000] = 5, 7
    where, held, mass = _counted([first, second])
    assert where == [5, 7, 65_541, 65_543]
    assert held == [2, 2, 2, 2] and mass == [3.0, 3.0, 3.0, 3.0]


def test_a_negative_id_is_never_a_mark_of_another() -> None:
    """A negative id (a file's bad data) is counted apart from the marks: as an index it
    would wrap to the table's last id. Counted in a new thread, whose tables are as large as
    the count needs, so that -1 and 5 would share a mark."""
    import threading

    found: list[Any] = []
    thread = threading.Thread(target=lambda: found.append(_counted([[-1], [-1], [5]])))
    thread.start()
    thread.join()
    assert found == [([0, 1], [2, 2], [3.0, 3.0])]


@pytest.mark.parametrize("ranks", [selection.RANKS, 1])
def test_the_marks_are_cleared_when_the_count_fails_midway(
    ranks: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failure between setting the marks and clearing them (here a bad index, in a
    process an interrupt) leaves no mark set: a stale one would count for every later
    search of the thread. With RANKS 1 the five ids take the sort and the marks."""
    monkeypatch.setattr(selection, "RANKS", ranks)
    ids = np.asarray([3, 5, 3, 7, 5], np.int32)
    weights = np.ones(2)
    with pytest.raises(IndexError):
        selection._shared(ids, [2, 3], weights, np.asarray([0.5] * 5))
    marks = selection._MARKS.marks
    assert not marks.any()
    where, run, _, _ = selection._shared(ids, [2, 3], weights)
    assert where.tolist() == [0, 1, 2, 4] and np.bincount(run)[run].tolist() == [2, 2, 2, 2]


def test_the_tables_never_grow_past_their_limit() -> None:
    """Doubling a table for a larger id stops at MARKS_LIMIT (the caller never asks more):
    at most 3 bytes a word of the statistics per searching thread."""
    import threading

    sizes: list[int] = []

    def grow() -> None:
        for size in (5_000_000, 6_000_000, selection.MARKS_LIMIT):
            marks, ranks = selection._tables(size)
            sizes.append(marks.size)
            assert ranks.size == marks.size and not marks.any()

    thread = threading.Thread(target=grow)  # its own tables, freed with it
    thread.start()
    thread.join()
    assert sizes == [5_000_000, selection.MARKS_LIMIT, selection.MARKS_LIMIT]
