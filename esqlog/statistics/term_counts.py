"""A count per term kept as one array beside the list of terms, read as a mapping.

Why: the identifiers scan already holds every term once, in a list, with its ids; its
df and ttf are numpy arrays over those ids (esqlog.identifiers.term_totals). Turned into
two ``dict[str, int]`` for the vocabulary snapshot, they cost ~100 bytes a term each: at
the million documents of the mix (2.95M terms) ~600 MiB of the calibration's peak, for
numbers the snapshot then reads back into arrays. Kept as arrays, they cost 8 bytes a
term, and the snapshot and the exact h_tok read them without a per-term loop
(esqlog.statistics.vocabulary).

Lookups by term (``counts["read"]``) build a term -> index dictionary on first use: only
code outside the calibration's path asks for single terms.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import numpy as np


class TermCounts(Mapping[str, int]):
    """``counts[k]`` is the count of ``terms[k]``; terms are distinct."""

    def __init__(self, terms: Sequence[str], counts: np.ndarray) -> None:
        if len(terms) != counts.size:
            raise ValueError(f"{len(terms)} terms but {counts.size} counts")
        self.terms = terms
        self.counts = np.asarray(counts, dtype=np.int64)
        self._at: dict[str, int] | None = None

    def __len__(self) -> int:
        return len(self.terms)

    def __iter__(self) -> Iterator[str]:
        return iter(self.terms)

    def __getitem__(self, term: str) -> int:
        if self._at is None:
            self._at = {t: k for k, t in enumerate(self.terms)}
        return int(self.counts[self._at[term]])

    def __contains__(self, term: object) -> bool:
        try:
            self[term]  # type: ignore[index]
        except (KeyError, TypeError):
            return False
        return True


def aligned(
    df: Mapping[str, int], ttf: Mapping[str, int]
) -> tuple[Sequence[str], np.ndarray, np.ndarray] | None:
    """(terms, df, ttf) as arrays when both are TermCounts over the same list, else None."""
    if isinstance(df, TermCounts) and isinstance(ttf, TermCounts) and df.terms is ttf.terms:
        return df.terms, df.counts, ttf.counts
    return None
