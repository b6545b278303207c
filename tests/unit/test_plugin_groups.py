"""The esqlog_terms plugin's term lists (esqlog.identifiers.groups.one_shard_groups): a
compound the index no longer holds (engine df 0: deleted since the calibration) is never
listed, since the plugin would look every listed term up for nothing."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from esqlog.identifiers.groups import group_words, one_shard_groups
from esqlog.statistics.mapped_terms import MappedTerms, index_arrays

WORDS = ["read", "readfile", "readall", "readdir", "write", "writefile"]


def test_compounds_with_no_engine_df_are_left_out() -> None:
    df = np.asarray([9, 4, 0, 2, 7, 0], np.uint32)  # readall and writefile: gone
    stats = SimpleNamespace(df_engine=df, words=WORDS)
    chosen = {"read": np.asarray([1, 2, 3], np.int32), "write": np.asarray([5], np.int32)}
    got = one_shard_groups(
        ["read", "write"],
        {"read": 9, "write": 7},
        chosen,
        stats,
        {"read": 1.5, "write": 0.5},
        set(),
        False,
    )
    assert got == [(((("read", "readfile", "readdir"), 1.5),), True), (((("write",), 0.5),), True)]


def test_a_word_whose_compounds_are_all_gone_and_no_own_term_has_no_group() -> None:
    stats = SimpleNamespace(df_engine=np.zeros(6, np.uint32), words=WORDS)
    got = one_shard_groups(
        ["write"], {}, {"write": np.asarray([5], np.int32)}, stats, {"write": 1.0}, set(), False
    )
    assert got == [((), True)]


def mapped(words: list[str]) -> MappedTerms:
    """The words read in place, as a statistics file's are."""
    arrays = index_arrays(words)
    blob = np.frombuffer("\n".join(words).encode(), np.uint8)
    return MappedTerms(blob, arrays["word_starts"], arrays["word_keys"], arrays["word_order"])


def test_the_words_are_the_same_from_a_list_or_any_sequence() -> None:
    """A list of words is gathered at once, memory-mapped words in one decoding loop,
    another sequence word by word: the same groups, for no compound, one or several."""
    df = np.asarray([9, 4, 3, 2, 7, 1], np.uint32)
    for chosen in (
        {"read": np.asarray([], np.int32)},
        {"read": np.asarray([2], np.int32)},
        {"read": np.asarray([3, 1, 2], np.int32)},
    ):
        got = [
            one_shard_groups(
                ["read"],
                {"read": 9},
                chosen,
                SimpleNamespace(df_engine=df, words=words),
                {"read": 1.0},
                set(),
                False,
            )
            for words in (list(WORDS), tuple(WORDS), mapped(WORDS))
        ]
        assert got[0] == got[1] == got[2]
        assert got[0][0][0][0][0] == ("read", *(WORDS[i] for i in chosen["read"].tolist()))


def test_span_groups_leave_out_compounds_with_no_engine_df_too() -> None:
    """group_words (the span layout) drops them as the plugin's groups do: a span over a term no
    document holds would add a clause, and a term the engine would not sum an idf for."""
    df = np.asarray([9, 4, 0, 2, 7, 0], np.uint32)
    chosen = {"read": np.asarray([1, 2, 3], np.int32), "write": np.asarray([5], np.int32)}
    layouts = []
    for words in (WORDS, mapped(WORDS)):  # a list, and words read in place from a file
        stats = SimpleNamespace(
            df_engine=df,
            words=words,
            shards=1,
            doc_count=20,
            word_id={w: i for i, w in enumerate(WORDS)},
            mask=np.zeros(6, np.uint64),
        )
        got = group_words(
            ["read", "write"],
            {"read": 9, "write": 7},
            chosen,
            stats,
            {"read": 1.5, "write": 0.5},
            set(),
        )
        listed = [term for groups, _ in got for terms, _ in groups for term in terms]
        assert sorted(listed) == ["read", "readdir", "readfile", "write"]
        layouts.append(got)
    assert layouts[0] == layouts[1]


@settings(max_examples=200, deadline=None)
@given(
    df=st.lists(st.integers(0, 70), min_size=6, max_size=6),  # past N: idf below 0
    own_df=st.dictionaries(st.sampled_from(["read", "write"]), st.integers(0, 70)),
    picks=st.lists(st.lists(st.integers(1, 5), max_size=5, unique=True), min_size=2, max_size=2),
    alone=st.sets(st.sampled_from(["read", "write"])),
    weights=st.tuples(st.floats(0.01, 20), st.floats(0.01, 20)),
    shards=st.sampled_from([1, 3]),
    read=st.booleans(),
)
def test_spans_as_on_one_shard_are_group_words_laid_out_so(
    df: list[int],
    own_df: dict[str, int],
    picks: list[list[int]],
    alone: set[str],
    weights: tuple[float, float],
    shards: int,
    read: bool,
) -> None:
    """one_shard_groups with the engine's idf (spans) gives group_words' groups and boosts
    (to the bit) where the query is laid out as on one shard: own terms present or not,
    compounds gone from the index, common words' own terms apart, a one-shard index or
    each shard sent its own query."""
    words = ["read", "write"]
    stats = SimpleNamespace(
        df_engine=np.asarray(df, np.uint32),
        words=mapped(WORDS) if read else WORDS,
        shards=shards,
        doc_count=50,
        word_id={w: i for i, w in enumerate(WORDS)},
        mask=np.zeros(6, np.uint64),
    )
    chosen = {w: np.asarray(p, np.int32) for w, p in zip(words, picks, strict=True)}
    weight = dict(zip(words, weights, strict=True))
    want = group_words(words, own_df, chosen, stats, weight, alone, shards=1)
    assert one_shard_groups(words, own_df, chosen, stats, weight, alone, True) == want
