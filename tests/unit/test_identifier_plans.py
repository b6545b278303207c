"""The wrapper keeps the plans of recent match texts (esqlog.wrapper.plan_memory.remembered_plan):
the next page of a search, a retry or an agent's next offset reuse the plan instead of
building it again. A kept plan must be the one the same text, settings, statistics and
snapshot would build; another snapshot (a newer one, or equal content in another object)
never gets an older one's plan, and the cache holds neither alive."""

from __future__ import annotations

import gc
from collections import Counter
from typing import Any

from esqlog.identifiers.query import plan_identifier_query
from esqlog.identifiers.settings import IdentifierSettings
from esqlog.statistics.analysis import standard_terms
from esqlog.wrapper.identifier_search import PLANS
from esqlog.wrapper.lru import LRU
from esqlog.wrapper.plan_memory import remembered_plan as _plan
from tests.support.split_docs import DOCS, build

SETTINGS = IdentifierSettings(engine_query="plugin")
TEXT = "read the file and upgrade the web socket"


class Snapshot:
    """A vocabulary snapshot as the planner reads it: a df lookup (weakly referable)."""

    def __init__(self, df: dict[str, int]) -> None:
        self.df = df

    def df_of(self, terms: Any) -> dict[str, int]:
        return {t: self.df.get(t, 0) for t in terms}


def _df() -> dict[str, int]:
    return dict(Counter(t for _, text in DOCS for t in set(standard_terms(text) or [])))


def test_the_same_text_reuses_the_plan_it_would_build() -> None:
    stats, vocab, plans = build(1), Snapshot(_df()), LRU(PLANS)
    first = _plan(TEXT, stats, vocab, SETTINGS, None, plans)
    assert first == plan_identifier_query(TEXT, stats, vocab.df_of, SETTINGS, None)
    assert _plan(TEXT, stats, vocab, SETTINGS, None, plans) is first
    assert _plan(TEXT, stats, vocab, SETTINGS, 1, plans) is not first  # another layout
    other = IdentifierSettings(engine_query="span")
    assert _plan(TEXT, stats, vocab, other, None, plans) == plan_identifier_query(
        TEXT, stats, vocab.df_of, other, None
    )


def test_another_snapshot_is_planned_from_its_own_statistics() -> None:
    stats, plans = build(1), LRU(PLANS)
    old = Snapshot(_df())
    kept = _plan(TEXT, stats, old, SETTINGS, None, plans)
    newer = Snapshot({**_df(), "upgrade": 0})  # the index lost the word since
    got = _plan(TEXT, stats, newer, SETTINGS, None, plans)
    assert got is not kept
    assert got == plan_identifier_query(TEXT, stats, newer.df_of, SETTINGS, None)
    assert got != kept


def test_the_cache_keeps_no_snapshot_alive() -> None:
    stats, plans = build(1), LRU(PLANS)
    vocab = Snapshot(_df())
    _plan(TEXT, stats, vocab, SETTINGS, None, plans)
    (entry,) = plans._data.values()
    del vocab
    gc.collect()
    assert entry[1]() is None


def test_without_a_cache_every_search_plans_afresh() -> None:
    stats, vocab = build(1), Snapshot(_df())
    assert _plan(TEXT, stats, vocab, SETTINGS, None, None) is not _plan(
        TEXT, stats, vocab, SETTINGS, None, None
    )


def test_a_cleared_cache_plans_again() -> None:
    """What plan_time does between rounds, so that a text is new to every round."""
    stats, vocab, plans = build(1), Snapshot(_df()), LRU(PLANS)
    first = _plan(TEXT, stats, vocab, SETTINGS, None, plans)
    plans.clear()
    assert len(plans) == 0
    assert _plan(TEXT, stats, vocab, SETTINGS, None, plans) is not first


def test_a_plan_of_a_dead_snapshot_never_serves_its_successor() -> None:
    """A new snapshot may get the address (the id) of one that died: the entry left under
    that key names the dead one, and the new snapshot plans afresh from its own df."""
    stats, plans = build(1), LRU(PLANS)
    old = Snapshot(_df())
    stale = _plan(TEXT, stats, old, SETTINGS, None, plans)
    (entry,) = plans._data.values()
    del old
    gc.collect()
    newer = Snapshot({**_df(), "upgrade": 0})
    plans.put((TEXT, SETTINGS, None, id(stats), id(newer)), entry)  # as if the id came back
    got = _plan(TEXT, stats, newer, SETTINGS, None, plans)
    assert got is not stale
    assert got == plan_identifier_query(TEXT, stats, newer.df_of, SETTINGS, None)


def test_a_snapshot_without_weak_references_is_planned_every_time() -> None:
    """Statistics given as an object that takes no weak reference are simply not kept."""

    class Bare:
        __slots__ = ("df_of",)

    stats, plans = build(1), LRU(PLANS)
    vocab = Bare()
    vocab.df_of = Snapshot(_df()).df_of
    first = _plan(TEXT, stats, vocab, SETTINGS, None, plans)  # type: ignore[arg-type]
    assert len(plans) == 0
    assert _plan(TEXT, stats, vocab, SETTINGS, None, plans) == first  # type: ignore[arg-type]
