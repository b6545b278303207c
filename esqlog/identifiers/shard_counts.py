"""Each shard's own document count and per-shard df, without the rest of the split statistics.

Why a type of its own: boost mode needs only these numbers to weight one request without
dfs (esqlog.wrapper.shard_stats), and the whole :class:`~esqlog.identifiers.split_stats.
IdentifierStats` costs ~0.6 s and ~120 MiB to load at 150K documents (its word index and
inverted splits), ~800 MiB at a million. This part is the ``local_words``, ``local_df`` and
``shard_docs`` members of the same checked file (esqlog.identifiers.files).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ShardCounts:
    """Per-shard statistics of one field as calibrate recorded them.

    ``local_row[term]`` is the row of ``local_df`` (a column per shard) of a term whose
    documents lie on two or more shards; a term absent from it lies on one shard, where its
    df is the global one."""

    index_uuid: str
    field: str
    shards: int
    shard_docs: np.ndarray
    local_df: np.ndarray
    local_row: Mapping[str, int]

    def weighted_idf(self, row: int) -> float:
        """The idfs of row ``row``'s shards averaged by their df of its term (boost mode's
        weighted scale, esqlog.wrapper.shard_stats). Computed for the rows a search asks
        for, not for every row at load: a table of a million rows would be 8 MiB more in
        every process and a pass over all of them before the first search."""
        df: list[int] = self.local_df[row].tolist()  # a few shards: plain numbers beat numpy
        docs: list[int] = self.shard_docs.tolist() if self.shard_docs.size else [1] * len(df)
        held = sum(df)
        if held <= 0:
            return 0.0
        return (
            math.fsum(
                n * math.log1p((d - n + 0.5) / (n + 0.5)) for n, d in zip(df, docs, strict=True)
            )
            / held
        )

    @property
    def per_shard(self) -> bool:
        """Whether each shard's own statistics are known (a file of several shards)."""
        return self.shards > 1 and self.shard_docs.size == self.shards
