"""The pure parts of find_references and grep_code: the name a symbol names, which line
defines, imports or uses it, the candidate queries (never narrower than the matches), the
pattern checks, and the answer's order and counts."""

from __future__ import annotations

import re

import pytest

from esqlog.agent.chunks import Chunk, ToolInputError
from esqlog.agent.grep import candidate_query, compile_pattern, grep_answer, required_runs
from esqlog.agent.line_scan import (
    MAX_LINE_CHARS,
    LineHit,
    answer,
    check_limit,
    file_rank,
    identifier_terms,
    word_runs,
)
from esqlog.agent.references import (
    DEFINITION,
    IMPORT,
    USE,
    classify,
    reference_name,
    references_answer,
)
from esqlog.agent.tokens import TokenCounter

GO = """import (
\t"net/http"
\t"github.com/gin-gonic/gin/binding"
)

var Validator StructValidator = &defaultValidator{}
"""
PY = """from ._client import (
    AsyncClient,
    Client,
)
import Client
DEFAULT = Client()
"""


def _chunk(text: str, symbol: str | None = None, start: int = 1) -> Chunk:
    return Chunk(id="x", text=text, path="a.go", symbol=symbol, start_line=start, lines_known=True)


@pytest.mark.parametrize(
    ("symbol", "name"),
    [
        ("Client", "Client"),
        ("httpx.Client", "Client"),
        ("pkg.(*T).M", "M"),
        ("github.com/gin-gonic/gin.(*Context).Next", "Next"),
        ("Mod::Class#method", "method"),
        ("a/b.c", "c"),
        ("`decode()`", "decode"),
        ("  dial_conn ", "dial_conn"),
        ("Timeout.__init__", "__init__"),
        ("$http", "$http"),
    ],
)
def test_a_symbol_names_its_last_part(symbol: str, name: str) -> None:
    assert reference_name(symbol).name == name


@pytest.mark.parametrize(
    ("symbol", "words"),
    [
        ("", "symbol is empty"),
        ("two words", "is not a name"),
        ("x" * 201, "too long"),
        ("a = b", "is not a name"),
    ],
)
def test_a_symbol_that_is_no_name_is_one_line(symbol: str, words: str) -> None:
    with pytest.raises(ToolInputError, match=words) as error:
        reference_name(symbol)
    assert "\n" not in str(error.value) and len(str(error.value)) < 300


def test_go_lines_are_imports_assignments_and_uses() -> None:
    got = classify(_chunk(GO, start=10), reference_name("binding"))
    assert [(n, g) for n, _, _, g in got] == [(12, IMPORT)]
    got = classify(_chunk(GO, start=10), reference_name("Validator"))
    assert [(n, g) for n, _, _, g in got] == [(15, DEFINITION)]
    # the same line in a chunk named after another symbol: a use (a local assignment)
    got = classify(_chunk(GO, symbol="Other", start=10), reference_name("Validator"))
    assert [(n, g) for n, _, _, g in got] == [(15, USE)]


def test_python_multi_line_imports_and_module_assignments() -> None:
    got = classify(_chunk(PY), reference_name("Client"))
    assert [(n, g) for n, _, _, g in got] == [(3, IMPORT), (5, IMPORT), (6, USE)]
    got = classify(_chunk(PY), reference_name("DEFAULT"))
    assert [(n, g) for n, _, _, g in got] == [(6, DEFINITION)]
    assert classify(_chunk(PY), reference_name("Clien")) == []  # whole identifiers only
    closed = "from x import (a,\n    Client)\nClient()\n"
    got = classify(_chunk(closed), reference_name("Client"))
    assert [(n, g) for n, _, _, g in got] == [(2, IMPORT), (3, USE)]
    js = 'import {\n  Client,\n} from "./client";\nnew Client();\n'
    got = classify(_chunk(js), reference_name("Client"))
    assert [(n, g) for n, _, _, g in got] == [(2, IMPORT), (4, USE)]


def test_the_definition_is_the_keyword_line_of_the_chunk_named_so() -> None:
    text = "// Next calls the handlers.\nfunc (c *Context) Next() {\n\tc.Next()\n}\n"
    got = classify(_chunk(text, symbol="Context.Next", start=40), reference_name("Next"))
    assert [(n, g) for n, _, _, g in got] == [(40, USE), (41, DEFINITION), (42, USE)]
    got = classify(_chunk(text, symbol="Context.Other", start=40), reference_name("Next"))
    assert all(g == USE for *_, g in got)


def test_identifier_terms_asks_for_the_name_inside_dotted_terms() -> None:
    value = identifier_terms("Client")["regexp"]["$field"]["value"]
    terms = ["client", "httpx.client", "self.client.get", "a:client"]
    assert all(re.fullmatch(value, t) for t in terms)
    assert not any(re.fullmatch(value, t) for t in ["clients", "asyncclient", "my_client"])
    snake = identifier_terms("utf8_Decode")["regexp"]["$field"]["value"]
    assert re.fullmatch(snake, "os.utf8_decode") and not re.fullmatch(snake, "utf8_decoder")
    dollar = identifier_terms("$http")
    assert dollar == {"bool": {"filter": [{"wildcard": {"$field": {"value": "*http*"}}}]}}


def test_literal_patterns_are_literal_and_bad_regexes_one_line() -> None:
    assert compile_pattern("a.b(", False).search("xa.b(y")
    assert not compile_pattern("a.b", False).search("axb")
    assert compile_pattern(r"a.b", True).search("axb")
    with pytest.raises(ToolInputError, match=r"regex '\(x' does not compile: missing \)"):
        compile_pattern("(x", True)
    for nested in ("(a+)+b", r"(\w*)*$", "(?:x{2,})+", "((ab)*c)*"):
        with pytest.raises(ToolInputError, match="repeats a group that itself repeats"):
            compile_pattern(nested, True)
    for fine in ("(ab)+c", r"\w+\s+\w+", "(a|b)*", "(a?)+"):
        compile_pattern(fine, True)
    with pytest.raises(ToolInputError, match="too long"):
        compile_pattern("a" * 301, True)
    with pytest.raises(ToolInputError, match="line break"):
        compile_pattern("a\nb", False)
    with pytest.raises(ToolInputError, match="pattern is empty"):
        compile_pattern("", False)


@pytest.mark.parametrize(
    ("pattern", "runs"),
    [
        ("abc[de]fgh", ["abc", "fgh"]),
        ("(?:xyz)?qqq", ["qqq"]),
        ("(abc)+def", ["abc", "def"]),
        (r"foo|bar", []),
        (r"\bword\b\.x", ["word.x"]),
        (r"(?i)Timeout\s*=", ["Timeout", "="]),
        (r"a{2,}bc", ["a", "bc"]),
        (r"(ab(cd)ef)gh", ["abcdefgh"]),
        (r"x*yz", ["yz"]),
    ],
)
def test_required_runs_are_what_every_match_holds(pattern: str, runs: list[str]) -> None:
    assert required_runs(pattern, True) == runs


@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        ("abc[de]fgh", "zabcdfghz"),
        ("(abc)+def", "abcabcdef"),
        (r"(?i)TIMEOUT\s*=", "timeout ="),
        (r"(x|y)zzz(q)?www", "yzzzwww"),
        (r"def \w+_timeout\(", "def read_timeout(self"),
    ],
)
def test_the_candidate_query_holds_every_match(pattern: str, text: str) -> None:
    """Each word the engine is asked for is inside the matched text (lowercased as terms)."""
    assert re.search(pattern, text)
    query = candidate_query(pattern, True)
    assert query is not None
    for clause in query["bool"]["filter"]:
        word = clause["wildcard"]["$field"]["value"].strip("*")
        assert word in text.lower()


def test_a_pattern_without_a_long_word_scans_every_chunk() -> None:
    assert candidate_query(r"\d{3}", True) is None
    assert candidate_query("=>", False) is None
    literal = candidate_query("c.Next()", False)
    assert literal == {"bool": {"filter": [{"wildcard": {"$field": {"value": "*next*"}}}]}}
    assert word_runs("a_b1 abcd xyz ab") == ["a_b1", "abcd", "xyz"]


def test_answers_order_groups_count_the_rest_and_list_a_line_once() -> None:
    hits = [
        LineHit("b_test.go", 3, "x", USE, file_rank("b_test.go", "go")),
        LineHit("a.go", 9, "x", USE, 0),
        LineHit("c.go", 1, "func x", DEFINITION, 0),
        LineHit("a.go", 2, "import x", IMPORT, 0),
        LineHit("a.go", 9, "x", USE, 0),
        LineHit("doc.md", 1, "x", USE, file_rank("doc.md", "markdown")),
    ]
    text = answer("head", hits, 3, "references")
    assert text.splitlines() == [
        "head",
        "c.go:1: func x",
        "a.go:2: import x",
        "a.go:9: x",
        "2 more references in 2 files; narrow with path_glob or raise limit (up to 300)",
    ]
    assert (
        answer("head", hits, 4, "references")
        .splitlines()[-1]
        .startswith("1 more reference in 1 file;")
    )
    assert len(answer("head", hits, 5, "references").splitlines()) == 6


def test_lines_stop_within_the_token_budget_and_the_rest_is_counted() -> None:
    counter = TokenCounter("chars", len)
    hits = [LineHit(f"f{k % 4}.go", k, "x" * 50) for k in range(100)]
    text = answer("head", hits, 300, "lines", counter, budget=1_000)
    assert len(text) <= 1_000
    shown = [line for line in text.splitlines() if line.startswith("f")]
    assert 10 < len(shown) < 20
    assert text.splitlines()[-1].startswith(f"{100 - len(shown)} more lines in 4 files;")
    assert answer("head", hits, 300, "lines", counter, budget=10**6).count("\n") == 100


def test_a_long_line_is_cut_around_its_match() -> None:
    line = "    " + "a" * 300 + " NAME " + "b" * 300
    shown = LineHit("p", 1, line, at=line.index("NAME")).render()
    assert "NAME" in shown and len(shown) <= len("p:1: ") + MAX_LINE_CHARS + 6
    assert shown.startswith("p:1: ...") and shown.endswith("...")
    assert LineHit("p", 1, "  short  ").render() == "p:1: short"


def test_zero_answers_and_limits() -> None:
    wanted = reference_name("httpx.Nope")
    assert references_answer(wanted, [], 50) == (
        "no references to Nope (the last part of httpx.Nope) in the index"
    )
    assert grep_answer("x(", False, [], 50, path_glob="*.py") == (
        "no indexed line matches literal 'x(' under '*.py'"
    )
    for bad in (0, 301, -1):
        with pytest.raises(ToolInputError, match=f"limit {bad} is outside 1-300"):
            check_limit(bad)
