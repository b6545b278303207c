"""The names an agent's query spells as code (esqlog.agent.queries.named_symbols) and the
clauses that list their definitions first (esqlog.agent.names, code_search.search_kwargs)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from esqlog.agent.code_search import search_kwargs
from esqlog.agent.frames import Place, path_clause, places
from esqlog.agent.names import (
    MEMBER_BOOST,
    PATH_BOOST,
    PLACE_BOOST,
    SYMBOL_BOOST,
    NamedQuery,
    closest_clause,
    definition_clauses,
    is_definition,
    named,
)
from esqlog.agent.queries import named_symbols
from esqlog.agent.scope import Scope


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("Fix dialConn when the proxy fails", ["dialConn"]),
        ("os.ReadFile and click.testing.CliRunner", ["ReadFile", "CliRunner"]),
        ("open_url, JsonPrimitive and HTTPServer", ["open_url", "JsonPrimitive", "HTTPServer"]),
        ("see `decode` and parse() here", ["decode", "parse"]),
        ("Close the reader and decode the header", []),  # prose words, one hump
        ("reverts 1f6589ec2b and #123 via https://x.io/aB_c", []),  # noise is no name
        ("dialConn dialConn id", ["dialConn"]),  # each once; two letters are too short
    ],
)
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
    assert bare == {
        "constant_score": {
            "filter": {"terms": {"symbol": ["dialConn"]}},
            "boost": SYMBOL_BOOST,
            "_name": f"esqlog-lift:symbol:{SYMBOL_BOOST:g}",
        }
    }
    assert member["constant_score"]["filter"] == {
        "bool": {"should": [{"wildcard": {"symbol": {"value": "*.dialConn"}}}]}
    }
    assert member["constant_score"]["boost"] == MEMBER_BOOST < SYMBOL_BOOST
    scoped = search_kwargs("elasticsearch", "i", "content", "x", 5, Scope(), ["dialConn"])
    assert scoped["query"]["bool"]["must"][0]["bool"]["should"] == [bare, member]
    body = search_kwargs("opensearch", "i", "content", "x", 5, Scope(), ["dialConn"])["body"]
    assert (
        body["query"]
        == search_kwargs("elasticsearch", "i", "content", "x", 5, Scope(), ["dialConn"])["query"]
    )


@pytest.mark.parametrize(
    ("text", "names", "qualified", "in_path", "only"),
    [
        ("httpx.Client", ["Client"], ["httpx.Client"], ["httpx"], True),
        ("binding.Default", ["Default"], ["binding.Default"], ["binding"], True),
        (
            "github.com/gin-gonic/gin.(*Context).Next",
            ["Next"],
            ["Context.Next"],
            ["gin", "gonic", "context"],
            True,
        ),
        ("Timeout.__init__", ["__init__"], ["Timeout.__init__"], ["timeout"], True),
        ("Mod::Class#method", ["method"], ["Class.method"], ["mod", "class"], True),
        ("RetryTransport", ["RetryTransport"], [], [], True),
        ("Stream", ["Stream"], [], [], True),  # a plain word alone is a name too
        ("head", ["head"], [], [], True),
        ("of", [], [], [], False),  # too short to be taken for one
        ("Stream data", [], [], [], False),  # two plain words are prose
        ("httpx.Client leaks", ["Client"], ["httpx.Client"], ["httpx"], False),  # a name and a word
        ("why does httpx.Client leak sockets", ["Client"], ["httpx.Client"], ["httpx"], False),
        ("src/pkg/auth.go", [], [], [], False),  # a file's path names no definition
        ("docs/index.md", [], [], [], False),  # nor does one the frame readers do not know
        ("config/app.yaml", [], [], [], False),
        # stack frames: Python's names the function and its file; Java's its class file; one
        # frame alone is a name query in disguise
        ('File "httpx/_client.py", line 1058, in get', ["get"], [], ["httpx", "_client"], True),
        (
            "at com.squareup.javapoet.TypeSpec$Builder.build(TypeSpec.java:500)",
            ["build", "TypeSpec$Builder"],
            ["Builder.build"],
            ["typespec", "squareup", "javapoet", "builder"],
            True,
        ),
        (
            "github.com/gin-gonic/gin.(*Context).Next(...)\n\tgin/context.go:185 +0x1d",
            ["Next"],
            ["Context.Next"],
            ["gin", "context", "gonic"],
            True,
        ),
        (
            'File "pkg/mod.py", line 3, in f\n    return g(x)\n           ^^^^',
            ["f"],
            [],
            ["mod"],
            True,
        ),
        # two frames, or a frame with words of the agent's: not one name
        (
            'File "pkg/mod.py", line 3, in f\nFile "pkg/util.py", line 9, in g',
            ["f", "g"],
            [],
            ["mod", "util"],
            False,
        ),
        ('why does File "pkg/mod.py", line 3, in f fail', ["f"], [], ["mod"], False),
        ("how does the router match a wildcard", [], [], [], False),
    ],
)
def test_names_as_agents_write_them(
    text: str, names: list[str], qualified: list[str], in_path: list[str], only: bool
) -> None:
    found = named(text)
    assert list(found.names) == names and list(found.qualified) == qualified
    assert list(found.in_path) == in_path and found.only_name is only


def test_a_qualified_name_ranks_its_owner_and_path_above_bare_namesakes() -> None:
    clauses = definition_clauses(named("github.com/gin-gonic/gin.(*Context).Next"))
    boosts = {
        next(iter(c["constant_score"]["filter"])): c["constant_score"]["boost"] for c in clauses
    }
    by_filter = [c["constant_score"]["filter"] for c in clauses]
    assert {"terms": {"symbol": ["Context.Next"]}} in by_filter
    assert boosts["terms"] >= SYMBOL_BOOST
    paths = [c for c in by_filter if "bool" in c and "path" in str(c)]
    assert len(paths) == 1 and all(
        w["wildcard"]["path"]["case_insensitive"] for w in paths[0]["bool"]["should"]
    )
    # qualifier only, no name: no path clause of its own (it would lift every file there)
    assert definition_clauses(named("how does it work")) == []


@given(st.text(max_size=120))
def test_named_never_puts_a_wildcard_character_into_a_pattern(text: str) -> None:
    found = named(text)
    for part in (*found.names, *found.qualified, *found.in_path):
        assert "*" not in part and "?" not in part and "\\" not in part


@pytest.mark.parametrize(
    ("symbol", "yes"),
    [
        ("Client", True),
        ("Owner.Client", True),
        ("ClientIP", False),
        ("MyClient", False),
        (None, False),
    ],
)
def test_a_definition_is_the_name_bare_or_as_a_member(symbol: str | None, yes: bool) -> None:
    assert is_definition(symbol, NamedQuery(("Client",))) is yes


def test_a_qualifier_alone_lifts_no_path() -> None:
    assert definition_clauses(NamedQuery(in_path=("binding",))) == []


def test_the_closest_symbols_share_a_word_of_the_name() -> None:
    should = closest_clause(named("RetryTransport"))["bool"]["should"]
    words = [c["wildcard"]["symbol"]["value"] for c in should if "wildcard" in c]
    assert words == ["*retry*", "*transport*"]  # HTTPTransport is offered for RetryTransport
    assert {"fuzzy", "prefix"} <= {next(iter(c)) for c in should}


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ('File "httpx/_client.py", line 1058, in get', [Place("httpx/_client.py", 1058)]),
        (
            'File "C:\\venv\\Lib\\httpx\\_client.py", line 7, in get',
            [Place("C:/venv/Lib/httpx/_client.py", 7)],
        ),
        (
            "gin.(*Context).Next(...)\n\t/home/u/go/pkg/mod/github.com/gin-gonic/gin@v1.10.0/"
            "context.go:185 +0x1d",
            [Place("home/u/go/pkg/mod/github.com/gin-gonic/gin@v1.10.0/context.go", 185)],
        ),
        ("at a.b.TypeSpec$Builder.build(TypeSpec.java:500)", [Place("TypeSpec.java", 500)]),
        ("at a.b.C.d(Native Method) and ./x/y.go without a line", []),
    ],
)
def test_the_places_frames_point_to(text: str, want: list[Place]) -> None:
    assert list(places(text)) == want


def test_a_frame_lifts_the_definition_of_its_name_that_spans_its_line() -> None:
    """The place clause needs all three: the name defined, the file, the line inside the
    chunk; and it lifts a member at its place above a bare namesake elsewhere."""
    query = named('File "httpx/_client.py", line 1058, in get')
    (place,) = [
        c["constant_score"]
        for c in definition_clauses(query)
        if c["constant_score"]["_name"].startswith("esqlog-lift:place:")
    ]
    assert place["boost"] == PLACE_BOOST
    (each,) = place["filter"]["bool"]["should"]
    name, path, start, end = each["bool"]["filter"]
    assert {"terms": {"symbol": ["get"]}} in name["bool"]["should"]
    assert {"wildcard": {"symbol": {"value": "*.get"}}} in name["bool"]["should"]
    assert path == path_clause(Place("httpx/_client.py", 1058), "path")
    assert (start, end) == (
        {"range": {"start_line": {"lte": 1058}}},
        {"range": {"end_line": {"gte": 1058}}},
    )
    assert MEMBER_BOOST + PATH_BOOST + PLACE_BOOST > SYMBOL_BOOST + PATH_BOOST
    assert not any(
        "place" in c["constant_score"]["_name"] for c in definition_clauses(named("httpx.Client"))
    )


def test_a_frame_path_matches_its_tails_and_the_paths_ending_with_it() -> None:
    clause = path_clause(Place("home/u/gin@v1/context.go", 9), "path")["bool"]
    assert clause["minimum_should_match"] == 1
    assert clause["should"] == [
        {
            "terms": {
                "path": [
                    "home/u/gin@v1/context.go",
                    "u/gin@v1/context.go",
                    "gin@v1/context.go",
                    "context.go",
                ]
            }
        },
        {"wildcard": {"path": {"value": "*/home/u/gin@v1/context.go"}}},
    ]
    odd = path_clause(Place("a*b/c?.go", 1), "path")["bool"]["should"]
    assert odd == [{"terms": {"path": ["a*b/c?.go", "c?.go"]}}]  # no pattern of its own


@given(st.text(max_size=120))
def test_places_never_put_a_wildcard_character_into_a_pattern(text: str) -> None:
    for place in places(text):
        for clause in path_clause(place, "path")["bool"]["should"]:
            if "wildcard" in clause:
                value = clause["wildcard"]["path"]["value"]
                assert value.startswith("*/") and not set(value[2:]) & set("*?\\")
