"""Which shards hold each listed term of an identifiers query, and its df there.

Why a module of its own: the per-shard queries and the one dfs query
(esqlog.identifiers.shards) both read it, from the statistics' per-shard tables.
"""

from __future__ import annotations

import numpy as np

from esqlog.identifiers.split_stats import IdentifierStats


def terms_on_shards(terms: list[str], own_df: dict[str, int], stats: IdentifierStats
                    ) -> tuple[np.ndarray, np.ndarray]:
    """(df, held) of each term on each shard: rows are terms, columns shards.

    A term whose documents lie on several shards has its row of per-shard df; one on a
    single shard has its global df there and is absent elsewhere (its presence mask says
    where); a plain word the split statistics do not hold (no sub-word, no split) has its
    own df and is listed on every shard: alone in its group, it matches nothing where it
    is absent, so its boost there does not matter.
    """
    shards = stats.shards
    row = np.fromiter((stats.local_row.get(t, -1) for t in terms), np.int64, len(terms))
    ids = np.fromiter((stats.word_id.get(t, -1) for t in terms), np.int64, len(terms))
    known = ids >= 0
    df = np.zeros(len(terms), np.float64)
    df[known] = stats.df_engine[ids[known]]
    df[~known] = [own_df.get(t, 0) for t, k in zip(terms, known.tolist(), strict=True) if not k]
    df = np.repeat(df[:, None], shards, axis=1)
    mask = np.zeros(len(terms), np.uint64)
    mask[known] = stats.mask[ids[known]]
    bits = (mask[:, None] >> np.arange(shards, dtype=np.uint64)[None, :]) & np.uint64(1)
    held = (bits == 1) | (mask == 0)[:, None]
    spread = row >= 0
    df[spread] = stats.local_df[row[spread]]
    held[spread] = df[spread] > 0
    return df, held
