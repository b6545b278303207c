"""Each shard's own document count and per-shard df, without the rest of the split statistics.

Why a type of its own: boost mode needs only these numbers to weight one request without
dfs (esqlog.wrapper.shard_stats), and the whole :class:`~esqlog.identifiers.split_stats.
IdentifierStats` costs ~0.6 s and ~120 MiB to load at 150K documents (its word index and
inverted splits), ~800 MiB at a million. This part is the ``local_words``, ``local_df`` and
``shard_docs`` members of the same checked file (esqlog.identifiers.files).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field as dc_field

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
    #: per row of ``local_df``: the term's shards' idfs averaged by their df of it (boost
    #: mode's weighted scale, esqlog.wrapper.shard_stats), computed once here: on every
    #: search it is one lookup a term instead of an idf per shard. An array, not a list: a
    #: million rows as Python floats were ~32 MiB more in every process
    weighted_idf: np.ndarray = dc_field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        df = self.local_df.astype(np.float64)
        docs = self.shard_docs.astype(np.float64)[None, :] if self.shard_docs.size else (
            np.ones((1, self.local_df.shape[1] if self.local_df.ndim == 2 else 0)))
        with np.errstate(divide="ignore", invalid="ignore"):
            idf = np.log1p((docs - df + 0.5) / (df + 0.5))
            held = df.sum(axis=1)
            mean = np.where(held > 0, (df * idf).sum(axis=1) / np.where(held > 0, held, 1), 0)
        object.__setattr__(self, "weighted_idf", mean)

    @property
    def per_shard(self) -> bool:
        """Whether each shard's own statistics are known (a file of several shards)."""
        return self.shards > 1 and self.shard_docs.size == self.shards
