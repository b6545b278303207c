"""What a plan reads of each query token and word, remembered across searches.

Why: every search splits each of its tokens (a regular expression, or the split calibrate
learned, decoded from the memory-mapped words one part at a time) and looks up each word's
compounds and split df (a hashed lookup and numpy scalars). Queries share most of their
words, so the last RECENT tokens' and words' answers are kept: one dictionary read each on
the next search. The answers are pure functions of the statistics that hold this memory
(read-only for their life) and are immutable (tuples, read-only numpy views), so any
thread may use them; each dictionary is read and written in one operation (another
thread may clear it in between), and emptied when full, as TermIds does.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from esqlog.scoring.subwords import split_identifier

#: tokens and words remembered (a few hundred bytes each)
RECENT = 4096
_UNKNOWN: Any = object()


class Lookups(Protocol):
    """What is read of the statistics (esqlog.identifiers.split_stats.IdentifierStats)."""

    def parts_of(self, term: str) -> tuple[str, ...]: ...

    def compound_ids(self, subword: str) -> np.ndarray: ...

    def split_df(self, word: str) -> int | None: ...


class WordFacts:
    """The split of recent tokens and the compounds and split df of recent words."""

    def __init__(self, stats: Lookups) -> None:
        self._stats = stats
        self._tokens: dict[str, tuple[str, tuple[str, ...]]] = {}
        self._words: dict[str, tuple[np.ndarray, int]] = {}

    def token(self, token: str) -> tuple[str, tuple[str, ...]]:
        """(the token lower-cased, its sub-words): by its own casing (``readFile``), else
        by the split calibrate learned for that term (``readfile``); () when it does not
        split."""
        found = self._tokens.get(token, _UNKNOWN)
        if found is _UNKNOWN:
            low = token.lower()
            found = (low, split_identifier(token) or self._stats.parts_of(low))
            _remember(self._tokens, token, found)
        return found  # type: ignore[no-any-return]

    def word(self, word: str) -> tuple[np.ndarray, int]:
        """(the word's compound ids, most frequent first; its split-stream df, 0 for a word
        that is no sub-word)."""
        found = self._words.get(word, _UNKNOWN)
        if found is _UNKNOWN:
            ids = self._stats.compound_ids(word)
            found = (ids, self._stats.split_df(word) or 0)
            _remember(self._words, word, found)
        return found  # type: ignore[no-any-return]

    def clear(self) -> None:
        """Forget every token and word (a benchmark's next pass over the same texts)."""
        self._tokens.clear()
        self._words.clear()

    def __len__(self) -> int:
        return len(self._tokens) + len(self._words)


def _remember(memory: dict[str, Any], key: str, value: Any) -> None:
    if len(memory) >= RECENT:
        memory.clear()  # simple and bounded; refills from the next searches
    memory[key] = value
