"""Rank-biased overlap and overlap@k against the RBO paper and an independent implementation.

Reference values: Webber, Moffat and Zobel, "A Similarity Measure for Indefinite Rankings"
(TOIS 2010): eq. 21's weight of the first d ranks (86% of the weight in the top 10 at
p = 0.9); and RBO_ext of lists without ties computed by the reference implementation of
Corsi and Urbano, "The Treatment of Ties in Rank-Biased Overlap" (SIGIR 2024,
github.com/julian-urbano/sigir2024-rbo, rbo/Python/rbo.py, ties="w"), which for lists
without ties is the paper's eq. 30 (equal lengths) and eq. 32 (uneven lengths).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from esqlog.evaluation.overlap import overlap_at, rbo_ext, top_weight

# (x, y, p, RBO_ext by the reference implementation)
REFERENCE = [
    ("N H M A", "C G N A", 0.9, 0.3915),
    ("N H M A C F L", "C G N A", 0.9, 0.49038364285714287),  # uneven
    ("a b c d e", "e d c b a", 0.9, 0.737775),
    ("1 2 3 4 5 6 7 8 0 9", "1 2 3 4 5 6 7 8 9 0", 0.9, 0.9952170309999999),
    ("a b c", "a", 0.4, 1.0),  # uneven, agreeing as far as the short list goes
    ("a b c d e f g h i j", "a c e g i k m o q s", 0.9, 0.5762484916428571),
    ("a b c d e f g h i j", "b a d c f e h g j i k l", 0.8, 0.7297312345396827),
    ("x y z", "a b c", 0.9, 0.0),
    ("d1 d2 d3 d4 d5 d6 d7", "d7 d8 d1", 0.98, 0.4466822448853333),
]


@pytest.mark.parametrize(("x", "y", "p", "expected"), REFERENCE)
def test_rbo_ext_matches_the_reference_implementation(
    x: str, y: str, p: float, expected: float
) -> None:
    assert rbo_ext(x.split(), y.split(), p) == pytest.approx(expected, abs=1e-12)
    assert rbo_ext(y.split(), x.split(), p) == pytest.approx(expected, abs=1e-12)  # symmetric


def test_top_ten_carry_86_percent_of_the_weight_at_p_0_9() -> None:
    # the paper: "the first 10 ranks ... 86% of the weight" (eq. 21)
    assert top_weight(0.9, 10) == pytest.approx(0.8556, abs=5e-5)
    # rank 1 counts at every depth: (1-p)/p * ln(1/(1-p)), the paper's eq. 21 at d = 1
    assert top_weight(0.9, 1) == pytest.approx(1 / 9 * math.log(10))
    assert top_weight(0.9, 500) == pytest.approx(1.0, abs=1e-9)


def _rbo_by_definition(x: list[str], y: list[str], p: float, depth: int = 4000) -> float:
    """(1-p) Σ p^(d-1) A_d with A_d frozen at its last seen value (eq. 30's assumption),
    summed far enough that the remaining weight is below 1e-12."""
    k = len(x)
    total = 0.0
    for d in range(1, depth + 1):
        seen = min(d, k)
        agreement = len(set(x[:seen]) & set(y[:seen])) / seen
        total += (1 - p) * p ** (d - 1) * agreement
    return total


@given(
    st.permutations(list("abcdefghij")),
    st.permutations(list("abcdefghijklmnop")),
    st.sampled_from([0.5, 0.8, 0.9, 0.95]),
)
def test_equal_length_rbo_ext_is_the_infinite_sum_with_agreement_held(
    x: list[str], pool: list[str], p: float
) -> None:
    y = pool[:10]
    assert rbo_ext(x, y, p) == pytest.approx(_rbo_by_definition(x, y, p), abs=1e-9)


@given(
    st.lists(st.text(min_size=1, max_size=3), max_size=15),
    st.lists(st.text(min_size=1, max_size=3), max_size=15),
    st.floats(min_value=0.05, max_value=0.99),
)
def test_rbo_ext_is_within_0_and_1(x: list[str], y: list[str], p: float) -> None:
    value = rbo_ext(x, y, p)
    assert 0.0 <= value <= 1.0
    assert math.isclose(rbo_ext(x, x, p), 1.0) if x else value >= 0.0


def test_rbo_edge_cases() -> None:
    assert rbo_ext([], [], 0.9) == 1.0
    assert rbo_ext(["a"], [], 0.9) == 0.0
    assert rbo_ext(["a", "a", "b"], ["a", "b"], 0.9) == pytest.approx(1.0)  # repeats count once
    with pytest.raises(ValueError):
        rbo_ext(["a"], ["a"], 1.0)


def test_overlap_at_k() -> None:
    assert overlap_at(list("abcdefghij"), list("jihgfedcba"), 10) == 1.0
    assert overlap_at(list("abcdefghij"), list("abcxyz"), 10) == pytest.approx(0.3)
    assert overlap_at(list("abc"), list("abc"), 10) == pytest.approx(0.3)  # a short page
    assert overlap_at([], [], 10) == 1.0
    assert overlap_at(list("ab"), list("ba"), 1) == 0.0
    with pytest.raises(ValueError):
        overlap_at(["a"], ["a"], 0)
