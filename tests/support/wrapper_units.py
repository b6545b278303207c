"""Shared by several test modules (from tests/test_wrapper_unit.py):
no test module imports another."""

from __future__ import annotations

from typing import Any

from esqlog.calibration.record import Calibration
from esqlog.wrapper import WrapOptions, WrapperCore
from tests.support.scripted import (
    field_mapping,
    search_shards,
    settings_answer,
    term_vectors,
)

N, SUM_TTF, SHARDS, Q = 1000, 20000, 2, 0.6
DF = {"read": 40, "file": 200, "open": 6, "readfile": 2}


HITS = {
    "hits": {
        "total": {"value": 2, "relation": "eq"},
        "max_score": 2.0,
        "hits": [
            {"_index": "code", "_id": "a", "_score": 2.0},
            {"_index": "code", "_id": "b", "_score": 1.0},
        ],
    }
}


def calibration(index: str = "code", standard: bool = False) -> Calibration:
    return Calibration(
        index,
        "U1",
        "body",
        Q,
        1.0,
        0.9,
        1.1,
        "exact",
        N,
        N,
        SUM_TTF,
        SUM_TTF / N,
        SHARDS,
        "standard",
        False,
        "paper",
        "1",
        "opensearch",
        "3.6.0",
        standard_analysis=standard,
    )


def routes(
    uuid: str = "U1", shards: int = SHARDS, analyzer: str = "whitespace"
) -> dict[tuple[str, str], Any]:
    """The answers a cold wrapper needs; ``analyzer`` is the field's index and search analyzer
    (only the built-in ``standard`` lets the wrapper analyze text itself)."""
    return {
        ("GET", "/code/_settings"): settings_answer("code", uuid, shards),
        ("GET", "/code/_mapping/field/body"): field_mapping("code", "body", analyzer),
        ("GET", "/code/_search_shards"): search_shards(shards),
        ("POST", "/code/_mtermvectors"): term_vectors(DF, N, SUM_TTF, shards),
        ("SEARCH", "code"): HITS,
    }


def core(standard: bool = False, **options: Any) -> WrapperCore:
    return WrapperCore([calibration(standard=standard)], WrapOptions(**options), "opensearch")
