"""A bounded memory of recent answers, in two generations.

Why: lookups that searches repeat (a term's position, a token's split, a word's compounds)
are answered from a dictionary of the last few thousand asked: queries share most of their
words. When the memory is full, what it holds becomes the previous generation and the
memory starts empty: bounded (at most twice ``limit`` answers) with no bookkeeping per
entry (no order to maintain, no lock). A key asked again is taken back from the previous
generation (:meth:`RecentMemory.recall`) instead of being looked up afresh: emptying the
whole memory at once made every search after it miss on its common words (on Go 153K, the
bench's 1,800 texts hold 4,526 distinct tokens, so the memory of 4,096 emptied while it
was measured).

Readers call the dictionary's own ``get(key, MISSING)``: one dictionary operation, so the
searches of several threads may share a memory (another thread may turn a generation
between a read and a :meth:`RecentMemory.remember`, which only costs a lookup again); only
a miss calls :meth:`RecentMemory.recall`. Only immutable answers belong here.
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
        #: what the memory held when it was last full (read by :meth:`recall` only)
        self.previous: dict[K, V] = {}

    def remember(self, key: K, value: V) -> None:
        """Store ``value`` under ``key``, turning a generation first when it holds ``limit``."""
        if len(self) >= self.limit:
            self._turn()
        self[key] = value

    def recall(self, key: K) -> Any:
        """The answer of a key missing from the memory but held by the previous generation
        (remembered again, so it stays), else MISSING."""
        found = self.previous.get(key, MISSING)
        if found is not MISSING:
            self.remember(key, found)
        return found

    def _turn(self) -> None:
        # one C-level copy under the interpreter lock, then one clear: a reader in another
        # thread sees either generation whole
        self.previous = dict(self)
        self.clear()

    def remember_all(self, keys: Sequence[K], values: Sequence[V]) -> None:
        """:meth:`remember` each key with its value, in one dictionary update; a generation
        turned first when they would not fit (of more keys than ``limit``, the last ``limit``)."""
        if len(keys) > self.limit:
            keys, values = keys[-self.limit :], values[-self.limit :]
        if len(self) + len(keys) > self.limit:
            self._turn()
        self.update(zip(keys, values, strict=True))
