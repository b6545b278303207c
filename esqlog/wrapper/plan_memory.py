"""The plans of recent match texts, kept per wrapper: the next page plans nothing.

Why a module of its own: a plan (the terms chosen, ~1 ms of the client's time on 150K
functions), or for a query the nodes plan its weighed words (esqlog.identifiers.node_plan),
is a pure function of the text, the settings, the statistics and the snapshot; the next page
of a search, a retry or an agent's next offset asks for the same one. The wrapper keeps the
PLANS most recent (esqlog.wrapper.identifier_search).
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Callable
from typing import Any

from esqlog.identifiers.query import IdentifierPlan, plan_identifier_query, weigh_words
from esqlog.identifiers.settings import IdentifierSettings
from esqlog.identifiers.split_stats import IdentifierStats
from esqlog.statistics.vocabulary import Vocabulary
from esqlog.wrapper.lru import LRU


def remembered_plan(
    text: str,
    stats: IdentifierStats,
    vocab: Vocabulary,
    settings: IdentifierSettings,
    layout: int | None,
    plans: LRU | None,
) -> IdentifierPlan:
    """The plan of ``text``, remembered (:func:`remembered`)."""
    plan: IdentifierPlan = remembered(
        text,
        stats,
        vocab,
        settings,
        layout,
        plans,
        lambda t, s, df, st: plan_identifier_query(t, s, df, st, layout),
    )
    return plan


def remembered(
    text: str,
    stats: IdentifierStats,
    vocab: Vocabulary,
    settings: IdentifierSettings,
    layout: int | None,
    plans: LRU | None,
    make: Callable[[str, IdentifierStats, Any, IdentifierSettings], Any],
) -> Any:
    """What ``make`` plans of ``text`` (a whole plan, or its weighed words for the node):
    from ``plans`` when the same text was planned with the same settings, statistics and
    snapshot (the next page of a search, a search retried, an agent's next offset), else
    planned and kept there.

    A plan is a pure function of those four and is immutable (frozen, tuples), so the
    searches of several threads may share one; each search builds its own query dict
    from it. The entry names the statistics and the snapshot by weak reference, compared
    by identity: a snapshot replaced by a newer one never serves the older one's plans,
    and is not kept alive by them."""
    key = (text, settings, layout, id(stats), id(vocab), make is weigh_words)
    found = plans.get(key) if plans is not None else None
    if found is not None and found[0]() is stats and found[1]() is vocab:
        return found[2]
    plan = make(text, stats, vocab.df_of, settings)
    if plans is not None:
        # statistics that cannot be named weakly (no __weakref__) are not kept
        with contextlib.suppress(TypeError):
            plans.put(key, (weakref.ref(stats), weakref.ref(vocab), plan))
    return plan
