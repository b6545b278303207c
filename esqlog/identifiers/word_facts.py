"""What a plan reads of each query token and word, remembered across searches.

Why: every search splits each of its tokens (a regular expression, or the split calibrate
learned, decoded from the memory-mapped words one part at a time) and looks up each word's
compounds and split df (a hashed lookup and numpy scalars). Queries share most of their
words, so the recent tokens' and words' answers are kept (RECENT, in two generations):
one dictionary read each on the next search. The answers are pure functions of the
statistics that hold this memory (read-only for their life) and are immutable (tuples,
read-only numpy views), so any thread may use them; each memory is read in one dictionary
operation and turns a generation when full (esqlog.statistics.recent), as TermIds's does.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

import numpy as np

from esqlog.scoring.subwords import split_identifier
from esqlog.statistics.recent import MISSING, RecentMemory

#: tokens and words remembered (a few hundred bytes each)
RECENT = 4096


class Lookups(Protocol):
    """What is read of the statistics (esqlog.identifiers.split_stats.IdentifierStats)."""

    def parts_of(self, term: str) -> tuple[str, ...]: ...

    def compound_ids(self, subword: str) -> np.ndarray: ...

    def split_df(self, word: str) -> int | None: ...


class WordFacts:
    """The split of recent tokens and the compounds and split df of recent words."""

    def __init__(self, stats: Lookups) -> None:
        self._stats = stats
        self._tokens: RecentMemory[str, tuple[str, tuple[str, ...]]] = RecentMemory(RECENT)
        self._words: RecentMemory[str, tuple[np.ndarray, int]] = RecentMemory(RECENT)

    def token(self, token: str) -> tuple[str, tuple[str, ...]]:
        """(the token lower-cased, its sub-words): by its own casing (``readFile``), else
        by the split calibrate learned for that term (``readfile``); () when it does not
        split."""
        found = self._tokens.get(token, MISSING)
        if found is MISSING and (found := self._tokens.recall(token)) is MISSING:
            low = token.lower()
            found = (low, split_identifier(token) or self._stats.parts_of(low))
            self._tokens.remember(token, found)
        return found  # type: ignore[no-any-return]

    def word(self, word: str) -> tuple[np.ndarray, int]:
        """(the word's compound ids, most frequent first; its split-stream df, 0 for a word
        that is no sub-word)."""
        found = self._words.get(word, MISSING)
        if found is MISSING and (found := self._words.recall(word)) is MISSING:
            ids = self._stats.compound_ids(word)
            found = (ids, self._stats.split_df(word) or 0)
            self._words.remember(word, found)
        return found  # type: ignore[no-any-return]

    def words(self, words: Iterable[str]) -> dict[str, tuple[np.ndarray, int]]:
        """:meth:`word` of each word, in their order: one call a search, the remembered
        read without a method call per word."""
        memory = self._words
        out = {}
        for word in words:
            found = memory.get(word, MISSING)
            out[word] = self.word(word) if found is MISSING else found
        return out

    def clear(self) -> None:
        """Forget every token and word (a benchmark's next pass over the same texts)."""
        self._tokens.clear()
        self._words.clear()

    def __len__(self) -> int:
        return len(self._tokens) + len(self._words)
