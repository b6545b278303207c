"""The esqlog_terms layout of the identifiers query (esqlog.identifiers.synonym), no engine.

The engine side (the plugin's scores against the spans') is tests/engine/test_identifiers_plugin.py.
"""

from __future__ import annotations

import math

import pytest

from esqlog.errors import UsageError
from esqlog.identifiers import synonym
from esqlog.identifiers.query import IdentifierSettings


def test_the_boost_divides_the_weight_by_the_idf_of_the_largest_df() -> None:
    df = {"read": 40.0, "readfile": 3.0, "absent": 0.0}
    group = synonym.boosted(("read", "readfile", "absent"), 2.5, df, 1000.0)
    assert group is not None
    assert group[1] == pytest.approx(2.5 / math.log(1 + (1000 - 40 + 0.5) / 40.5))
    assert synonym.boosted(("absent",), 2.5, df, 1000.0) is None


def test_safe_parts_keep_the_largest_df_term_wherever_a_part_matches() -> None:
    df = {"read": 50.0, "readfile": 9.0, "readall": 4.0, "readonly": 2.0}
    held = {"read": (True, True, False), "readfile": (True, False, False),
            "readall": (False, False, True), "readonly": (True, True, False)}
    parts = synonym.safe_parts(["read", "readfile", "readall", "readonly"], df, held)
    assert parts == [("read", "readfile", "readonly"), ("readall",)]
    for part in parts:  # the part's largest-df term is on every shard holding the part
        top = max(part, key=df.__getitem__)
        for t in part:
            assert all(h <= w for h, w in zip(held[t], held[top], strict=True))


def test_a_common_words_own_term_stays_a_group_of_its_own() -> None:
    df = {"get": 500.0, "getname": 5.0, "getid": 7.0}
    groups = (((("get",), 1.0)), (("getname", "getid"), 1.0))
    out = synonym.word_groups(groups, 3.0, True, df, 1000.0)
    assert [terms for terms, _ in out] == [("get",), ("getname", "getid")]
    assert out[1][1] == pytest.approx(3.0 / synonym.idf(7.0, 1000.0))


def test_the_clause_and_the_setting() -> None:
    assert synonym.clause("body", ("a", "b"), 1.5) == {
        "esqlog_terms": {"field": "body", "terms": ["a", "b"], "boost": 1.5}}
    assert IdentifierSettings().engine_query == "span"
    with pytest.raises(UsageError, match="engine_query"):
        IdentifierSettings(engine_query="synonym")  # type: ignore[arg-type]
