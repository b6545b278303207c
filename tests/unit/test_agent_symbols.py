"""The names an agent's query spells as code (esqlog.agent.queries.named_symbols) and the
clause that lists their definitions first (esqlog.agent.code_search.search_kwargs)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from esqlog.agent.code_search import SYMBOL_BOOST, defines, search_kwargs
from esqlog.agent.queries import named_symbols
from esqlog.agent.scope import Scope


@pytest.mark.parametrize(("text", "want"), [
    ("Fix dialConn when the proxy fails", ["dialConn"]),
    ("os.ReadFile and click.testing.CliRunner", ["ReadFile", "CliRunner"]),
    ("open_url, JsonPrimitive and HTTPServer", ["open_url", "JsonPrimitive", "HTTPServer"]),
    ("see `decode` and parse() here", ["decode", "parse"]),
    ("Close the reader and decode the header", []),  # prose words, one hump
    ("reverts 1f6589ec2b and #123 via https://x.io/aB_c", []),  # noise is no name
    ("dialConn dialConn id", ["dialConn"]),  # each once; two letters are too short
])
def test_named_symbols_are_the_names_spelled_as_code(text: str, want: list[str]) -> None:
    assert named_symbols(text) == want


@given(st.text(max_size=200))
def test_every_named_symbol_is_a_word_of_the_text(text: str) -> None:
    for name in named_symbols(text):
        assert name in text and name.replace("_", "").replace("$", "").isalnum()
        assert "*" not in name and "?" not in name  # safe inside a wildcard pattern


def test_the_clause_is_optional_and_matches_bare_and_member_symbols() -> None:
    plain = search_kwargs("elasticsearch", "i", "content", "dialConn", 5)
    named = search_kwargs("elasticsearch", "i", "content", "dialConn", 5, None, ["dialConn"])
    assert plain["query"] == {"match": {"content": "dialConn"}}
    (boosted,) = named["query"]["bool"]["should"]
    assert named["query"]["bool"]["must"] == [plain["query"]]  # same match set
    assert boosted["constant_score"]["boost"] == SYMBOL_BOOST
    assert boosted["constant_score"]["filter"] == defines(["dialConn"]) == {"bool": {"should": [
        {"terms": {"symbol": ["dialConn"]}},
        {"wildcard": {"symbol": {"value": "*.dialConn"}}}]}}
    scoped = search_kwargs("elasticsearch", "i", "content", "x", 5, Scope(), ["dialConn"])
    assert scoped["query"]["bool"]["must"][0]["bool"]["should"] == [boosted]  # inside the scope
    body = search_kwargs("opensearch", "i", "content", "x", 5, Scope(), ["dialConn"])["body"]
    assert body["query"] == search_kwargs(
        "elasticsearch", "i", "content", "x", 5, Scope(), ["dialConn"])["query"]
