"""Generated families: many words of exactly one document frequency.

Why: generated code comes in families (one file per locale, per message, per charset), and
every member carries the same names, so a family of F members shows as many words of df
exactly F: a spike in the count of words per df, which calibrate's split statistics already
hold. The identifiers mode scores a query naming such a family at q = 1 (see
esqlog.identifiers.query, ``family_excess``): the family's members differ only in the words they
all share, and q < 1 would lift the family's own names (a locale code) over those.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: A df value held by at least this many words can mark a family (below it, chance).
FAMILY_MIN_WORDS = 10
#: The df values within this factor either side are the spike's neighbourhood.
FAMILY_WINDOW = 1.25
#: A spike counts when chance would give one that high less often than this (the count
#: of words at one df taken as Poisson around its neighbourhood's mean). Measured: the
#: highest chance spike of the benchmark corpora, 10 words of df 235 on 3,502 man pages
#: against 2.9 around (3.4x), has a tail of 1e-3; Go's locale families below 1e-9.
FAMILY_CHANCE = 1e-6
#: The identifiers mode's default threshold of family_excess (IdentifierSettings).
FAMILY_EXCESS = 3.0


@dataclass(frozen=True)
class WordsPerDf:
    """How many words have each df, kept sparse: memory follows the distinct df values,
    not the index's size (a dense count would take 8 bytes per document of the largest
    df, 80 MB on a 10M-document index)."""

    values: np.ndarray  # the distinct dfs, ascending
    cumulative: np.ndarray  # words with a df below values[i]: cumulative[i]; len + 1

    @classmethod
    def of(cls, dfs: np.ndarray) -> WordsPerDf:
        """From every word's df (zeros, words of no document, left out)."""
        values, counts = np.unique(dfs[dfs > 0], return_counts=True)
        return cls(
            values.astype(np.int64), np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        )

    def between(self, lo: int, hi: int) -> int:
        """Words of df lo to hi, both included (none when hi < lo)."""
        if hi < lo:
            return 0
        start = int(np.searchsorted(self.values, lo, side="left"))
        end = int(np.searchsorted(self.values, hi, side="right"))
        return int(self.cumulative[end] - self.cumulative[start])

    def at(self, df: int) -> int:
        return self.between(df, df)


def family_excess(words: WordsPerDf, df: int) -> float:
    """How many times more words have exactly this df than the df values around it.

    ``words``: how many words (terms that split, and sub-words) have each df.

    The mark of a generated family (see FAMILY_MIN_WORDS). Measured on the benchmark
    corpora at full size: Go's go-playground/locales gives 692 words of df 37 (the
    locale codes of its 37-function files), 4.4x the df values around it, and 32 of
    df 764 (its functions, one per locale file), 30x; no df of the Java, Python or
    Ruby corpora reaches 2.2x. 0.0 for df 1 (a word of one document is no family;
    and its only neighbour, df 2, always holds fewer words), for a df held by fewer
    than FAMILY_MIN_WORDS words, and for a spike that chance gives (FAMILY_CHANCE).
    """
    here = words.at(df) if df >= 2 else 0
    if here < FAMILY_MIN_WORDS:
        return 0.0
    lo, hi = max(1, int(df / FAMILY_WINDOW)), int(df * FAMILY_WINDOW) + 1
    around = words.between(lo, hi) - here  # df values past the largest hold 0 words
    expected = max(around / max(hi - lo, 1), 1.0)
    if poisson_tail(here, expected) > FAMILY_CHANCE:
        return 0.0
    return here / expected


def families(words: WordsPerDf, excess: float) -> list[tuple[int, int, float]]:
    """Every df spike of at least ``excess``: (df, words of that df, excess), by df."""
    counts = np.diff(words.cumulative)
    held = counts >= FAMILY_MIN_WORDS
    found = [
        (df, n, family_excess(words, df))
        for df, n in zip(words.values[held].tolist(), counts[held].tolist(), strict=True)
    ]
    return [f for f in found if f[2] >= excess]


def poisson_tail(count: int, mean: float) -> float:
    """P(X >= count) for X ~ Poisson(mean), summed in log space from ``count`` up (the
    spikes tested sit far above their mean, where 1 - cdf would round to 0)."""
    if count <= mean:
        return 1.0
    log_mean = math.log(mean)
    total, k = 0.0, count
    while True:
        term = math.exp(k * log_mean - mean - math.lgamma(k + 1))
        total += term
        if term < total * 1e-12 or term == 0.0:
            return min(total, 1.0)
        k += 1
