"""The splits a scan learns from casings, kept as integer arrays over a sub-word table.

Why: most terms of a code corpus split (three in four at 10K documents of the mix), and a
``dict[int, tuple[str, ...]]`` costs ~100 bytes for each (the tuple, the dictionary entry):
at a million documents ~100 MiB in every scan worker. Here a learned split costs its term
id, its length and one int32 per part (~20 bytes), the sub-word strings held once in a
table of their own. Reads by term id (tests, esqlog.indexing.refresh) go through an index
built on first use; the scan itself only adds and asks "learned yet?", a byte per term.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Mapping

import numpy as np


class LearnedSplits(Mapping[int, tuple[str, ...]]):
    """term id -> the (non-empty) split the first casing that splits gave it."""

    def __init__(self) -> None:
        self.flags = bytearray()  # 1 at a term id that has a split
        self.term = array("i")  # term ids, in the order learned
        self.length = array("i")  # parts of each
        self.parts = array("i")  # sub-word ids, split after split
        self.subword_id: dict[str, int] = {}
        self.subwords: list[str] = []
        self._at: dict[int, tuple[int, int]] | None = None  # term id -> (offset, parts)

    def add(self, term: int, parts: tuple[str, ...]) -> None:
        """Record a term's split (the caller checked it has none yet)."""
        flags = self.flags
        if term >= len(flags):
            flags.extend(bytes(term + 1 - len(flags)))
        flags[term] = 1
        self.term.append(term)
        self.length.append(len(parts))
        ids, names = self.subword_id, self.subwords
        for part in parts:
            found = ids.get(part)
            if found is None:
                found = ids[part] = len(names)
                names.append(part)
            self.parts.append(found)
        self._at = None

    def setdefault(self, term: int, parts: tuple[str, ...]) -> None:
        """Record a split unless the term has one (a merge: the earlier shard's wins)."""
        if term not in self:
            self.add(term, parts)

    def __contains__(self, term: object) -> bool:
        return isinstance(term, int) and 0 <= term < len(self.flags) and bool(self.flags[term])

    def __getitem__(self, term: int) -> tuple[str, ...]:
        if term not in self:
            raise KeyError(term)
        if self._at is None:
            lengths = np.frombuffer(self.length, np.int32)
            starts = np.cumsum(lengths, dtype=np.int64) - lengths
            self._at = dict(
                zip(self.term, zip(starts.tolist(), self.length, strict=True), strict=True)
            )
        at, n = self._at[term]
        names = self.subwords
        return tuple(names[p] for p in self.parts[at : at + n])

    def __iter__(self) -> Iterator[int]:
        return iter(self.term)

    def __len__(self) -> int:
        return len(self.term)
