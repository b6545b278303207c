"""The identifiers query sent to each shard on its own: every word one exact saturation.

Why: on several shards a ``span_or``'s idf is summed over the terms the scoring shard
holds (esqlog.identifiers), so one query for all shards must group a word's terms by shard
set and needs ``dfs_query_then_fetch``. Measured on 3 shards (BENCHMARKS section 7,
session 10), the dfs phase alone was a third of the engine's time: it looks every listed
term up on every shard once more. Sent as one request per shard instead (one ``_msearch``,
``preference=_shards:k``, no dfs), each request lists only the terms its shard holds with
boosts from that shard's own df and document count (calibrate records them), so the
engine's idf sum there is exactly the one each boost divides by: every word scores one
saturation with its split-stream weight on every shard, as on one shard, and the hits
merge by score (esqlog.wrapper.fan_out).

What differs from the dfs query: the length norm's average document length is each
shard's own, as in any search without dfs (the engine's default, query_then_fetch).

I/O-free: a plan laid out as on one shard (plan_identifier_query(..., shards=1)) + the
split statistics -> one query per shard.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from esqlog.identifier_stats import IdentifierStats
from esqlog.identifiers import IdentifierPlan, IdentifierSettings


def _terms_on_shards(terms: list[str], own_df: dict[str, int], stats: IdentifierStats
                     ) -> tuple[np.ndarray, np.ndarray]:
    """(df, held) of each term on each shard: rows are terms, columns shards."""
    shards = stats.shards
    df = np.zeros((len(terms), shards), np.float64)
    held = np.ones((len(terms), shards), bool)
    bits = np.uint64(1) << np.arange(shards, dtype=np.uint64)
    for r, term in enumerate(terms):
        row = stats.local_row.get(term)
        if row is not None:  # documents on several shards: each shard's own df
            df[r] = stats.local_df[row]
            held[r] = df[r] > 0
            continue
        i = stats.word_id.get(term)
        # documents on one shard: the global df is that shard's; on the others the term is
        # absent (listed alone there it matches nothing, so its boost does not matter)
        df[r] = own_df.get(term, 0) if i is None else int(stats.df_engine[i])
        if i is not None and int(stats.mask[i]):
            held[r] = (stats.mask[i] & bits) != 0
    return df, held


def shard_plans(plan: IdentifierPlan, stats: IdentifierStats) -> list[IdentifierPlan]:
    """Per shard, ``plan`` with each group cut to the terms that shard holds and its boost
    recomputed from that shard's df and N (words and groups with no term there dropped).

    ``plan`` must be laid out as on one shard: each group's target weight is its word's
    weight (a word's own term apart from its compounds carries the same weight).
    """
    if not stats.per_shard:
        raise ValueError("the split statistics hold no per-shard statistics")
    terms = list(dict.fromkeys(t for w in plan.words for group, _ in w.groups for t in group))
    own = {w.word: w.df for w in plan.words}  # a word not in the statistics: its own df
    df, held = _terms_on_shards(terms, own, stats)
    n = stats.shard_docs.astype(np.float64)[None, :]
    idf = np.where(held, np.log1p((n - df + 0.5) / (df + 0.5)), 0.0)
    at = {t: r for r, t in enumerate(terms)}
    out = []
    for shard in range(stats.shards):
        words = []
        for w in plan.words:
            groups = []
            for group, _ in w.groups:
                here = tuple(t for t in group if held[at[t], shard])
                total = float(sum(idf[at[t], shard] for t in here))
                if here and total > 0:
                    groups.append((here, w.weight / total))
            if groups:
                words.append(replace(w, groups=tuple(groups)))
        out.append(replace(plan, words=tuple(words)))
    return out


def shard_queries(plan: IdentifierPlan, stats: IdentifierStats, field: str,
                  settings: IdentifierSettings) -> list[dict[str, Any]]:
    """One engine query per shard, in shard order (``match_none`` where nothing is held)."""
    return [p.query(field, settings) for p in shard_plans(plan, stats)]
