"""The identifiers query sent to each shard on its own: every word one exact saturation.

Why: on several shards a ``span_or``'s idf is summed over the terms the scoring shard holds
(esqlog.identifiers.query), so one query for all shards must group a word's terms by shard set and
needs ``dfs_query_then_fetch``. Measured on 3 shards (docs/benchmarks/identifiers.md, 5b952ac), the
dfs phase alone was a third of the engine's time: it looks every listed term up on every shard once
more. Sent as one request per shard instead (one ``_msearch``, ``preference=_shards:k``, no dfs),
each request lists only the terms its shard holds with boosts from that shard's own df and document
count (calibrate records them), so the engine's idf sum there is exactly the one each boost divides
by: every word scores one saturation with its split-stream weight on every shard, as on one shard,
and the hits merge by score (esqlog.wrapper.fan_out).

What differs from the dfs query: the length norm's average document length is each
shard's own, as in any search without dfs (the engine's default, query_then_fetch).

One match set: a search that cannot go per shard (a sort, a cursor, ...) is sent as one
dfs query built from the SAME plan (:func:`one_query_groups`): each word's terms are the
per-shard queries' terms, regrouped as one span per shard under the word's ``dis_max``
with boosts from the index-wide df and N. A document matches either form exactly when it
holds a listed term, so hits.total and the set of hits are the same; and on its own shard
the span of that shard holds every listed term the document can hold, so each word is
one exact saturation there too: the scores differ only by the length norm's average
(the index's under dfs, the shard's per shard). Where one span per shard would exceed the
engine's clause limit, the terms are grouped by the set of shards holding them instead
(each term once, as many clauses as a per-shard query): the same match set, a word's best
group scoring it (esqlog.identifiers.query).

I/O-free: a plan laid out as on one shard (plan_identifier_query(..., shards=1)) + the
split statistics -> one query per shard. Built on every search, so vectorised over the
listed terms (a few hundred) rather than looped per term and shard.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import compress
from typing import Any

import numpy as np

from esqlog.identifiers.query import IdentifierPlan
from esqlog.identifiers.settings import IdentifierSettings
from esqlog.identifiers.split_stats import IdentifierStats
from esqlog.statistics.mapped_terms import ids_of

#: One shard's groups per word of a plan: (terms, boost) per span or term
ShardGroups = list[list[tuple[tuple[str, ...], float]]]


def _terms_on_shards(
    terms: list[str], own_df: dict[str, int], stats: IdentifierStats
) -> tuple[np.ndarray, np.ndarray]:
    """(df, held) of each term on each shard: rows are terms, columns shards.

    A term whose documents lie on several shards has its row of per-shard df; one on a
    single shard has its global df there and is absent elsewhere (its presence mask says
    where); a plain word the split statistics do not hold (no sub-word, no split) has its
    own df and is listed on every shard: alone in its group, it matches nothing where it
    is absent, so its boost there does not matter.
    """
    shards = stats.shards
    ids = ids_of(stats.word_id, terms)
    known = ids >= 0
    df = np.zeros(len(terms), np.float64)
    df[known] = stats.df_engine[ids[known]]
    df[~known] = [own_df.get(t, 0) for t, k in zip(terms, known.tolist(), strict=True) if not k]
    df = np.repeat(df[:, None], shards, axis=1)
    mask = np.zeros(len(terms), np.uint64)
    mask[known] = stats.mask[ids[known]]
    bits = (mask[:, None] >> np.arange(shards, dtype=np.uint64)[None, :]) & np.uint64(1)
    held = (bits == 1) | (mask == 0)[:, None]
    # per-shard rows are kept for terms on two or more shards: a word's found by its
    # position, a term the split statistics do not hold by its name
    several = (mask & (mask - np.uint64(1))) != 0
    row = np.full(len(terms), -1, np.int64)
    words = np.flatnonzero(several)
    row[words] = stats.local_row_of_word[ids[words]]
    asked = np.flatnonzero(~known)
    row[asked] = ids_of(stats.local_row, [terms[i] for i in asked.tolist()])
    spread = row >= 0
    df[spread] = stats.local_df[row[spread]]
    held[spread] = df[spread] > 0
    return df, held


def shard_groups(plan: IdentifierPlan, stats: IdentifierStats) -> list[ShardGroups]:
    """Per shard, each word's groups cut to the terms that shard holds, each boost
    recomputed from that shard's df and N (a group with no term there is dropped): the
    weight over the idf sum of the span.

    ``plan`` must be laid out as on one shard: each group's target weight is its word's
    weight (a word's own term apart from its compounds carries the same weight).
    """
    if not stats.per_shard:
        raise ValueError("the split statistics hold no per-shard statistics")
    names = [t for w in plan.words for group, _ in w.groups for t in group]
    sizes = [len(group) for w in plan.words for group, _ in w.groups]
    weights = np.asarray([w.weight for w in plan.words for _ in w.groups], np.float64)
    terms = list(dict.fromkeys(names))
    at = {t: r for r, t in enumerate(terms)}
    df, held = _terms_on_shards(terms, {w.word: w.df for w in plan.words}, stats)
    n = stats.shard_docs.astype(np.float64)[None, :]
    idf = np.where(held, np.log1p((n - df + 0.5) / (df + 0.5)), 0.0)
    occurrence = np.fromiter((at[t] for t in names), np.int64, len(names))
    group_of = np.repeat(np.arange(len(sizes)), sizes)
    ends = np.cumsum(sizes).tolist()
    out: list[ShardGroups] = []
    for shard in range(stats.shards):
        sums = np.bincount(group_of, weights=idf[occurrence, shard], minlength=len(sizes))
        boosts = np.divide(weights, sums, out=np.zeros_like(sums), where=sums > 0).tolist()
        keep = held[occurrence, shard].tolist()
        per_word: ShardGroups = []
        g = start = 0
        for w in plan.words:
            groups = []
            for _ in w.groups:
                end = ends[g]
                here = tuple(compress(names[start:end], keep[start:end]))
                if here and boosts[g] > 0:
                    groups.append((here, boosts[g]))
                g, start = g + 1, end
            per_word.append(groups)
        out.append(per_word)
    return out


def shard_queries(
    plan: IdentifierPlan, stats: IdentifierStats, field: str, settings: IdentifierSettings
) -> list[dict[str, Any]]:
    """One engine query per shard, in shard order (``match_none`` where nothing is held)."""
    return [plan.query(field, settings, groups) for groups in shard_groups(plan, stats)]


def one_query_groups(
    plan: IdentifierPlan, stats: IdentifierStats, exact: bool = True
) -> ShardGroups:
    """Each word's groups for one dfs query holding exactly the per-shard queries' terms.

    ``exact``: one span per shard over the terms of each of the word's groups that shard
    holds (identical spans once), to go under the word's dis_max; else one span per set of
    shards holding the terms (each term once). Boosts divide the word's weight by the
    span's idf sum in the index-wide statistics, which dfs_query_then_fetch scores with.
    """
    names = list(dict.fromkeys(t for w in plan.words for group, _ in w.groups for t in group))
    own = {w.word: w.df for w in plan.words}
    _, held = _terms_on_shards(names, own, stats)
    ids = [stats.word_id.get(t, -1) for t in names]
    df = np.asarray(
        [
            float(stats.df_engine[i]) if i >= 0 else float(own.get(t, 0))
            for t, i in zip(names, ids, strict=True)
        ],
        np.float64,
    )
    n = float(stats.doc_count)
    idf = dict(zip(names, np.log1p((n - df + 0.5) / (df + 0.5)).tolist(), strict=True))
    rows = {t: held[r].tolist() for r, t in enumerate(names)}
    out: ShardGroups = []
    for w in plan.words:
        groups: list[tuple[tuple[str, ...], float]] = []
        for terms, _ in w.groups:
            spans: dict[tuple[str, ...], None] = {}
            if exact:
                for shard in range(stats.shards):
                    spans[tuple(t for t in terms if rows[t][shard])] = None
            else:
                sets: dict[tuple[bool, ...], list[str]] = {}
                for t in terms:
                    sets.setdefault(tuple(rows[t]), []).append(t)
                spans.update((tuple(ts), None) for ts in sets.values())
            for span in spans:
                total = sum(idf[t] for t in span)
                if span and total > 0:
                    groups.append((span, w.weight / total))
        out.append(groups)
    return out


def one_query(
    plan: IdentifierPlan,
    stats: IdentifierStats,
    field: str,
    settings: IdentifierSettings,
    exact: bool = True,
) -> dict[str, Any]:
    """The one dfs query of :func:`one_query_groups` (a word's spans under one dis_max)."""
    layout = replace(settings, shard_groups="max")  # the spans of a word are alternatives
    return plan.query(field, layout, one_query_groups(plan, stats, exact))


def matching_query(
    plan: IdentifierPlan, field: str, settings: IdentifierSettings
) -> dict[str, Any]:
    """The match set of the plan's queries as a constant-score filter: a document holding
    any listed term (and passing the and/msm filters). Aggregations that read no score
    need only this: no span positions read, no dfs phase."""
    terms = sorted({t for w in plan.words for group, _ in w.groups for t in group})
    if not terms:
        return {"match_none": {}}
    full = plan.query(field, settings)
    filters = full.get("bool", {}).get("filter", [])
    return {"bool": {"filter": [{"terms": {field: terms}}, *filters]}}
