"""The names an agent's query spells as code (esqlog.agent.queries.named_symbols) and the
clauses that list their definitions first (esqlog.agent.names, code_search.search_kwargs)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from esqlog.agent.code_search import search_kwargs
from esqlog.agent.names import (
    MEMBER_BOOST,
    SYMBOL_BOOST,
    NamedQuery,
    closest_clause,
    definition_clauses,
    is_definition,
    named,
)
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


def test_the_clauses_are_optional_and_match_bare_and_member_symbols() -> None:
    plain = search_kwargs("elasticsearch", "i", "content", "dialConn", 5)
    named_kw = search_kwargs("elasticsearch", "i", "content", "dialConn", 5, None, ["dialConn"])
    assert plain["query"] == {"match": {"content": "dialConn"}}
    bare, member = named_kw["query"]["bool"]["should"]
    assert named_kw["query"]["bool"]["must"] == [plain["query"]]  # same match set
    assert bare == {"constant_score": {"filter": {"terms": {"symbol": ["dialConn"]}},
                                       "boost": SYMBOL_BOOST,
                                       "_name": f"esqlog-lift:symbol:{SYMBOL_BOOST:g}"}}
    assert member["constant_score"]["filter"] == {"bool": {"should": [
        {"wildcard": {"symbol": {"value": "*.dialConn"}}}]}}
    assert member["constant_score"]["boost"] == MEMBER_BOOST < SYMBOL_BOOST
    scoped = search_kwargs("elasticsearch", "i", "content", "x", 5, Scope(), ["dialConn"])
    assert scoped["query"]["bool"]["must"][0]["bool"]["should"] == [bare, member]
    body = search_kwargs("opensearch", "i", "content", "x", 5, Scope(), ["dialConn"])["body"]
    assert body["query"] == search_kwargs(
        "elasticsearch", "i", "content", "x", 5, Scope(), ["dialConn"])["query"]


@pytest.mark.parametrize(("text", "names", "qualified", "in_path", "only"), [
    ("httpx.Client", ["Client"], ["httpx.Client"], ["httpx"], True),
    ("binding.Default", ["Default"], ["binding.Default"], ["binding"], True),
    ("github.com/gin-gonic/gin.(*Context).Next", ["Next"], ["Context.Next"],
     ["gin", "gonic", "context"], True),
    ("Timeout.__init__", ["__init__"], ["Timeout.__init__"], ["timeout"], True),
    ("Mod::Class#method", ["method"], ["Class.method"], ["mod", "class"], True),
    ("RetryTransport", ["RetryTransport"], [], [], True),
    ("why does httpx.Client leak sockets", ["Client"], ["httpx.Client"], ["httpx"], False),
    ("src/pkg/auth.go", [], [], [], False),  # a file's path names no definition
    # stack frames: Python's names the function and its file; Java's its class file
    ('File "httpx/_client.py", line 1058, in get', ["get"], [], ["httpx", "_client"], False),
    ("at com.squareup.javapoet.TypeSpec$Builder.build(TypeSpec.java:500)",
     ["build", "TypeSpec$Builder"], ["Builder.build"],
     ["typespec", "squareup", "javapoet", "builder"], False),
    ("how does the router match a wildcard", [], [], [], False),
])
def test_names_as_agents_write_them(text: str, names: list[str], qualified: list[str],
                                    in_path: list[str], only: bool) -> None:
    found = named(text)
    assert list(found.names) == names and list(found.qualified) == qualified
    assert list(found.in_path) == in_path and found.only_name is only


def test_a_qualified_name_ranks_its_owner_and_path_above_bare_namesakes() -> None:
    clauses = definition_clauses(named("github.com/gin-gonic/gin.(*Context).Next"))
    boosts = {next(iter(c["constant_score"]["filter"])): c["constant_score"]["boost"]
              for c in clauses}
    by_filter = [c["constant_score"]["filter"] for c in clauses]
    assert {"terms": {"symbol": ["Context.Next"]}} in by_filter
    assert boosts["terms"] >= SYMBOL_BOOST
    paths = [c for c in by_filter if "bool" in c and "path" in str(c)]
    assert len(paths) == 1 and all(w["wildcard"]["path"]["case_insensitive"]
                                   for w in paths[0]["bool"]["should"])
    # qualifier only, no name: no path clause of its own (it would lift every file there)
    assert definition_clauses(named("how does it work")) == []


@given(st.text(max_size=120))
def test_named_never_puts_a_wildcard_character_into_a_pattern(text: str) -> None:
    found = named(text)
    for part in (*found.names, *found.qualified, *found.in_path):
        assert "*" not in part and "?" not in part and "\\" not in part


@pytest.mark.parametrize(("symbol", "yes"), [
    ("Client", True), ("Owner.Client", True), ("ClientIP", False), ("MyClient", False),
    (None, False)])
def test_a_definition_is_the_name_bare_or_as_a_member(symbol: str | None, yes: bool) -> None:
    assert is_definition(symbol, NamedQuery(("Client",))) is yes


def test_a_qualifier_alone_lifts_no_path() -> None:
    assert definition_clauses(NamedQuery(in_path=("binding",))) == []


def test_the_closest_symbols_share_a_word_of_the_name() -> None:
    should = closest_clause(named("RetryTransport"))["bool"]["should"]
    words = [c["wildcard"]["symbol"]["value"] for c in should if "wildcard" in c]
    assert words == ["*retry*", "*transport*"]  # HTTPTransport is offered for RetryTransport
    assert {"fuzzy", "prefix"} <= {next(iter(c)) for c in should}
