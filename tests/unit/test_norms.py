"""esqlog.scoring.norms.lucene_length against an independent copy of Lucene's SmallFloat and
the properties of the encoding (engine-free)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from esqlog.scoring.norms import lucene_length
from tests.support.lucene_bm25 import lucene_norm_length


def test_known_values_of_lucenes_length_table() -> None:
    # byte4ToInt(intToByte4(n)) as Lucene 9/10 compute it: exact up to 40, then 4 bits
    assert [lucene_length(n) for n in (0, 1, 23, 24, 30, 39, 40, 41, 47, 48, 100, 1000)] == [
        0, 1, 23, 24, 30, 39, 40, 40, 46, 48, 96, 984,
    ]  # fmt: skip


def test_same_as_the_oracles_smallfloat_on_every_short_length() -> None:
    assert [lucene_length(n) for n in range(5000)] == [
        int(lucene_norm_length(n)) for n in range(5000)
    ]


@given(st.integers(min_value=0, max_value=2**31 - 1))
def test_same_as_the_oracles_smallfloat(length: int) -> None:
    assert lucene_length(length) == int(lucene_norm_length(length))


@given(st.integers(min_value=0, max_value=2**31 - 2))
def test_rounds_down_by_at_most_an_eighth_and_keeps_order(length: int) -> None:
    got = lucene_length(length)
    assert got <= length
    assert length - got <= length / 8
    assert lucene_length(got) == got  # a decoded length encodes to itself
    assert lucene_length(length + 1) >= got
