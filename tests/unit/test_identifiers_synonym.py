"""The esqlog_terms layout of the identifiers query (esqlog.identifiers.synonym), no engine.

The engine side (the plugin's scores against the spans') is tests/engine/test_identifiers_plugin.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from esqlog.errors import UsageError
from esqlog.identifiers import synonym
from esqlog.identifiers.query import plan_identifier_query
from esqlog.identifiers.settings import IdentifierSettings
from tests.support.split_docs import build, df_lookup

PLUGIN = IdentifierSettings(engine_query="plugin")


def test_the_clause_and_the_setting() -> None:
    assert synonym.clause("body", ("readfile", "read", "fileread"), 1.5) == {
        "esqlog_terms": {
            "field": "body",
            "terms": ["fileread", "read", "readfile"],
            "boost": 1.5,
            "idf": False,
        }
    }
    assert IdentifierSettings().engine_query == "auto"
    with pytest.raises(UsageError, match="engine_query"):
        IdentifierSettings(engine_query="synonym")  # type: ignore[arg-type]


def _clauses(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, list):
        return [c for child in node for c in _clauses(child)]
    if not isinstance(node, dict):
        return []
    if "esqlog_terms" in node or "term" in node or "span_or" in node:
        return [node]
    return [c for child in node.values() for c in _clauses(child)]


@pytest.mark.parametrize("shards", [1, 3])
def test_every_group_is_boosted_by_its_words_weight_laid_out_as_on_one_shard(shards: int) -> None:
    """No engine idf to divide out: the boost is the weight, every group of every word an
    esqlog_terms (one term too), and on several shards the plan is the one-shard one (one
    group per word, the fan-out's budget) whatever the caller's layout."""
    stats = build(shards)
    lookup = df_lookup(stats)
    text = "read the socket file"
    plan = plan_identifier_query(text, stats, lookup, PLUGIN)
    one_shard = plan_identifier_query(text, stats, lookup, IdentifierSettings(), 1)
    assert [w.word for w in plan.words] == [w.word for w in one_shard.words]
    for w, same in zip(plan.words, one_shard.words, strict=True):
        assert [terms for terms, _ in w.groups] == [terms for terms, _ in same.groups]
        assert all(boost == pytest.approx(w.weight) for _, boost in w.groups)
        assert w.exact
    clauses = _clauses(plan.query("body", PLUGIN))
    assert clauses and all(set(c) == {"esqlog_terms"} for c in clauses)
    assert all(c["esqlog_terms"]["idf"] is False for c in clauses)
    assert any(len(c["esqlog_terms"]["terms"]) == 1 for c in clauses)
