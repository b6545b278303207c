"""How much two rankings agree, without judgments: overlap@k and rank-biased overlap.

Rank-biased overlap (RBO) is from W. Webber, A. Moffat and J. Zobel, "A Similarity Measure
for Indefinite Rankings", ACM TOIS 28(4), 2010. Implemented here rather than taken from PyPI
because the packages there either misreport uneven lists (``rbo`` on PyPI has open reports of
values above 1 and of results that disagree with the authors' own code) or are too new to
trust; the formulas are short, and tests check them against the paper's own figures and
against the tie-aware reference implementation of Corsi and Urbano (SIGIR 2024) on lists
without ties, where every variant reduces to the paper's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

#: Persistence used by default: the top 10 ranks carry 85.6% of RBO's weight (paper, eq. 21),
#: matching a first page of 10 results.
DEFAULT_P = 0.9


def _unique(items: Sequence[str]) -> list[str]:
    """Items in order, later repeats dropped (a document is ranked once)."""
    return list(dict.fromkeys(items))


def overlap_at(a: Sequence[str], b: Sequence[str], k: int = 10) -> float:
    """|top-k of a ∩ top-k of b| / k: the share of a first page both systems show.

    Divided by k even when a list is shorter (a system that returns fewer hits agrees on
    less of the page); two empty lists agree fully (1.0), having nothing to disagree on.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    top_a, top_b = set(_unique(a)[:k]), set(_unique(b)[:k])
    if not top_a and not top_b:
        return 1.0
    return len(top_a & top_b) / k


def rbo_ext(a: Sequence[str], b: Sequence[str], p: float = DEFAULT_P) -> float:
    """Extrapolated rank-biased overlap of two finite rankings (paper, eq. 32).

    RBO = (1-p) Σ_d p^(d-1) A_d, where A_d is the share of items the two depth-d prefixes
    have in common. For lists seen only to depths s <= l, eq. 32 assumes the agreement seen
    at the end continues beyond it; for lists of equal length it is eq. 30. The result is in
    [0, 1]: 1 for identical lists, 0 for disjoint ones. Two empty lists give 1.0.
    """
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1), got {p!r}")
    first, second = _unique(a), _unique(b)
    short, long_ = (first, second) if len(first) <= len(second) else (second, first)
    s, l_ = len(short), len(long_)
    if l_ == 0:
        return 1.0
    if s == 0:
        return 0.0
    seen_short: set[str] = set()
    seen_long: set[str] = set()
    overlap = 0  # X_d
    x_s = 0
    total = 0.0
    for d in range(1, l_ + 1):
        item_long = long_[d - 1]
        if d <= s:
            item_short = short[d - 1]
            if item_short == item_long:
                overlap += 1
            else:
                overlap += (item_short in seen_long) + (item_long in seen_short)
            seen_short.add(item_short)
        elif item_long in seen_short:
            overlap += 1
        seen_long.add(item_long)
        if d == s:
            x_s = overlap
        total += overlap / d * p**d
        if d > s:
            total += x_s * (d - s) / (s * d) * p**d
    value = (1 - p) / p * total + ((overlap - x_s) / l_ + x_s / s) * p**l_
    return min(1.0, max(0.0, value))  # rounding can leave 1 + 1e-16 for identical lists


def top_weight(p: float, depth: int) -> float:
    """Share of RBO's weight that the first ``depth`` ranks carry (paper, eq. 21).

    How to read a p: at p = 0.9 the first 10 ranks carry 85.6% (the paper rounds it to 86%),
    at p = 0.98 the first 50 carry 85.2%.
    """
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1), got {p!r}")
    if depth < 1:
        return 0.0
    tail = sum(p**i / i for i in range(1, depth))
    return 1 - p ** (depth - 1) + (1 - p) / p * depth * (math.log(1 / (1 - p)) - tail)
