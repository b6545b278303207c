"""A small, independent pure-Python Lucene BM25 used as the oracle in engine tests.

Deliberately written without esqlog's own math so that a bug there cannot hide itself.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def lucene_idf(n: int, N: int, q: float = 1.0) -> float:
    """ln_q(1 + (N - n + 0.5)/(n + 0.5)), by the plain formula."""
    x = 1.0 + (N - n + 0.5) / (n + 0.5)
    if q == 1.0:
        return math.log(x)
    return (x ** (1.0 - q) - 1.0) / (1.0 - q)


def lucene_norm_length(length: int) -> float:
    """The field length as Lucene's norms store it (SmallFloat.intToByte4 round trip).

    Lucene encodes lengths in one byte: exact up to 40ish, lossy above; BM25 then uses the
    decoded value. Reproducing it lets scores match to float precision.
    """
    return float(_byte4_to_int(_int_to_byte4(length)))


def _long_to_int4(i: int) -> int:
    num_bits = i.bit_length()
    if num_bits < 4:
        return i
    shift = num_bits - 4
    encoded = (i >> shift) & 0x07
    encoded |= (shift + 1) << 3
    return encoded


def _int4_to_long(i: int) -> int:
    bits = i & 0x07
    shift = (i >> 3) - 1
    if shift == -1:
        return bits
    return (bits | 0x08) << shift


_MAX_INT4 = _long_to_int4(2**31 - 1)
_NUM_FREE_VALUES = 255 - _MAX_INT4


def _int_to_byte4(i: int) -> int:
    if i < _NUM_FREE_VALUES:
        return i
    return _NUM_FREE_VALUES + _long_to_int4(i - _NUM_FREE_VALUES)


def _byte4_to_int(b: int) -> int:
    if b < _NUM_FREE_VALUES:
        return b
    return _NUM_FREE_VALUES + _int4_to_long(b - _NUM_FREE_VALUES)


def bm25_term(
    tf: int,
    dl: int,
    avgdl: float,
    n: int,
    N: int,
    q: float = 1.0,
    k1: float = 1.2,
    b: float = 0.75,
    k1_plus_one: bool = False,
) -> float:
    """Score of one term in one document (Lucene >= 8 form, optional (k1+1) factor)."""
    norm_dl = lucene_norm_length(dl)
    tfn = tf / (tf + k1 * (1 - b + b * norm_dl / avgdl))
    return lucene_idf(n, N, q) * tfn * ((k1 + 1) if k1_plus_one else 1.0)


def bm25_doc(
    query_terms: Sequence[str],
    doc_tf: dict[str, int],
    dl: int,
    avgdl: float,
    df: dict[str, int],
    N: int,
    q: float = 1.0,
    k1_plus_one: bool = False,
) -> float:
    """Sum over query term occurrences (duplicates count twice, as in a match query)."""
    return sum(
        bm25_term(doc_tf[t], dl, avgdl, df[t], N, q, k1_plus_one=k1_plus_one)
        for t in query_terms
        if doc_tf.get(t)
    )
