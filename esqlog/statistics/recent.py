"""A bounded memory of recent answers, emptied when full.

Why: lookups that searches repeat (a term's position, a token's split, a word's compounds)
are answered from a dictionary of the last few thousand asked: queries share most of their
words. Emptying the whole memory when it is full keeps it bounded with no bookkeeping per
entry (no order to maintain, no lock); it refills from the next searches.

Readers call the dictionary's own ``get(key, MISSING)``: one dictionary operation, so the
searches of several threads may share a memory (another thread may empty it between a
read and a :meth:`RecentMemory.remember`, which only costs a lookup again). Only
immutable answers belong here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

K = TypeVar("K")
V = TypeVar("V")

#: what ``get`` returns for a key not asked for recently (None may be a remembered answer)
MISSING: Any = object()


class RecentMemory(dict[K, V]):
    """key -> answer for at most ``limit`` recent keys."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def remember(self, key: K, value: V) -> None:
        """Store ``value`` under ``key``, emptying the memory first when it holds ``limit``."""
        if len(self) >= self.limit:
            self.clear()  # simple and bounded; refills from the next searches
        self[key] = value

    def remember_all(self, keys: Sequence[K], values: Sequence[V]) -> None:
        """:meth:`remember` each key with its value, in one dictionary update; emptied
        first when they would not fit (of more keys than ``limit``, the last ``limit``)."""
        if len(keys) > self.limit:
            keys, values = keys[-self.limit :], values[-self.limit :]
        if len(self) + len(keys) > self.limit:
            self.clear()
        self.update(zip(keys, values, strict=True))
