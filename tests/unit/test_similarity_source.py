"""The scripted similarity's source and settings, without an engine: the parameters written into
the Painless source as Java doubles, bad parameters refused, and the settings that set it (and
null what is not wanted). tests/engine/test_similarity.py installs it on real engines.
"""

from __future__ import annotations

import re

import pytest

from esqlog.errors import UsageError
from esqlog.scoring.similarity import (
    MARKER,
    SimilarityParams,
    _java_double,
    fields_with_own_similarity,
    similarity_settings,
    similarity_source,
    target_settings,
)


def test_source_has_the_values_written_in() -> None:
    source = similarity_source(SimilarityParams(0.65, 1.5, 0.5))
    assert not re.search(r"params\.\w", source) and source.startswith(MARKER)
    assert "Math.expm1((1.0 - 0.65) * lnx) / (1.0 - 0.65)" in source
    assert "double norm = 1.5 * (1.0 - 0.5 + 0.5 * doc.length / avgdl);" in source
    assert similarity_settings(SimilarityParams(1.0))["index.similarity.default.type"] == "scripted"


@pytest.mark.parametrize("value", [0.0, 1.0, 2.0, 0.123456789012345, 1e-05, 0.75])
def test_java_double_round_trips(value: float) -> None:
    text = _java_double(value)
    assert "." in text and "e" not in text.lower() and float(text) == value


@pytest.mark.parametrize(
    ("q", "k1", "b"),
    [(2.5, 1.2, 0.75), (float("nan"), 1.2, 0.75), (0.5, -1.0, 0.75), (0.5, 1.2, 1.5)],
)
def test_bad_params_are_usage_errors(q: float, k1: float, b: float) -> None:
    with pytest.raises(UsageError):
        SimilarityParams(q, k1, b)


def test_fields_with_own_similarity_walks_objects_and_multi_fields() -> None:
    mapping = {
        "properties": {
            "body": {"type": "text", "similarity": "default"},
            "title": {"type": "text", "similarity": "boolean"},
            "meta": {"properties": {"doc": {"type": "text", "similarity": "BM25"}}},
            "name": {"type": "keyword", "fields": {"txt": {"type": "text", "similarity": "x"}}},
        }
    }
    assert sorted(fields_with_own_similarity(mapping)) == ["meta.doc", "name.txt", "title"]


def test_target_settings_nulls_what_is_not_wanted() -> None:
    current = {
        "index.similarity.default.type": "BM25",
        "index.similarity.default.k1": "1.5",
        "index.similarity.other.type": "boolean",
    }
    wanted = {"index.similarity.default.type": "scripted"}
    assert target_settings(current, wanted, "index.similarity.default.") == {
        "index.similarity.default.type": "scripted",
        "index.similarity.default.k1": None,
    }
    assert target_settings(current, {}) == {k: None for k in current}
