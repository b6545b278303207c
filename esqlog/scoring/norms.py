"""The field length BM25 sees in Lucene: the token count stored in one byte per document.

Why esqlog needs it: a rerank from term vectors knows each hit's exact token count, while the
engine scored that hit with its norm, the count rounded to one of 256 values
(``SmallFloat.intToByte4``, decoded by ``byte4ToInt``: exact up to 40 tokens, then rounded
down by up to an eighth). Scoring the correction with the exact count would leave the reranked score
off by up to a few percent from the q-log BM25 the engine itself computes; with the rounded
count it is the same to float precision.
"""

from __future__ import annotations

#: values 0..23 of the byte store their length as is; the rest a 4-bit-mantissa float above 24
_FREE_VALUES = 24


def lucene_length(length: int) -> int:
    """``length`` tokens as Lucene's norms give them back to BM25 (encode, then decode)."""
    if length < _FREE_VALUES:
        return max(length, 0)
    return _FREE_VALUES + _decode_int4(_encode_int4(length - _FREE_VALUES))


def _encode_int4(value: int) -> int:
    """SmallFloat.longToInt4: the 4 highest bits (the first implicit) and the shift."""
    bits = value.bit_length()
    if bits < 4:
        return value
    shift = bits - 4
    return ((value >> shift) & 0x07) | ((shift + 1) << 3)


def _decode_int4(code: int) -> int:
    """SmallFloat.int4ToLong."""
    shift = (code >> 3) - 1
    if shift < 0:
        return code & 0x07
    return ((code & 0x07) | 0x08) << shift
