"""Answers without noise, the pure parts: matching lines, one entry per function, the score
cut, tests after the implementation, and argument errors in one line."""

from __future__ import annotations

from typing import Any

import pytest

from esqlog.agent.chunks import Chunk
from esqlog.agent.hits import Hit, cut, hits_of, implementation_first, merge_parts
from esqlog.agent.matching import line_score, matching_lines, words_of
from esqlog.agent.names import MEMBER_BOOST, SYMBOL_BOOST, constant, lifted
from esqlog.agent.packing import listing_entry, pack_listing
from esqlog.agent.scope import Scope, is_test
from esqlog.agent.tokens import default_counter

GO = """\
// addRoute adds a node with the given handle to the path.
func (n *node) addRoute(path string, handlers HandlersChain) {
\tfullPath := path
\tif n.wildChild {
\t\tpanic("'" + pathSeg + "' conflicts with existing wildcard '" + n.path + "'")
\t}
}
"""


def _chunk(
    text: str = GO,
    path: str = "tree.go",
    symbol: str | None = "node.addRoute",
    start: int = 131,
    id_: str = "a",
) -> Chunk:
    return Chunk(id=id_, text=text, path=path, symbol=symbol, start_line=start, lines_known=True)


def test_query_words_drop_prose_and_keep_spelling() -> None:
    assert words_of("conflicts with the existing wildcard") == ("conflicts", "existing", "wildcard")
    assert words_of("ClientIP clientip 42 a") == ("ClientIP",)


def test_a_line_scores_whole_words_above_parts_and_ignores_half_names() -> None:
    query = words_of("ClientIP")
    assert line_score("func (c *Context) ClientIP() string {", query) == 2
    assert line_score("ip := client_ip(r)", query) == 1  # client and ip: all its parts
    assert line_score("req := httptest.NewRequest(http.MethodGet)", words_of("ServeHTTP")) == 0


def test_matching_lines_are_the_chunks_own_lines_numbered_from_its_start() -> None:
    lines = matching_lines(_chunk(), words_of("conflicts with existing wildcard"))
    assert lines == [
        (135, 'panic("\'" + pathSeg + "\' conflicts with existing wildcard \'" + n.path + "\'")')
    ]
    assert GO.split("\n")[135 - 131].strip() == lines[0][1]
    assert matching_lines(_chunk(), words_of("nothing here")) == []
    two = matching_lines(_chunk(), words_of("addRoute path wildcard"), most=2)
    assert [n for n, _ in two] == sorted(n for n, _ in two) and len(two) == 2


def test_a_listing_entry_shows_matching_lines_and_hides_a_body_line_signature() -> None:
    entry = listing_entry(_chunk(), 1, query=words_of("conflicts existing wildcard"))
    assert entry.splitlines()[0] == "1. tree.go:131-137 node.addRoute"
    assert entry.splitlines()[1:] == ["   135| " + GO.split("\n")[4].strip()]
    outlined = listing_entry(_chunk(), 1, query=words_of("nothing here"))
    assert outlined.splitlines()[1:] == [
        "   func (n *node) addRoute(path string, handlers HandlersChain) {",
        "   addRoute adds a node with the given handle to the path.",
    ]
    second_half = _chunk("\tfor {\n\t\tn = n.children[0]\n\t}\n", start=200)
    assert listing_entry(second_half, 2).splitlines() == ["2. tree.go:200-202 node.addRoute"]
    tail = listing_entry(_chunk(), 12, outlined=False, query=words_of("wildcard path"))
    assert len(tail.splitlines()) == 2  # the location and one matching line


def _hit(
    start: int,
    end: int,
    score: float,
    position: int,
    symbol: str | None = "f",
    path: str = "a.go",
    lift: float = 0.0,
) -> Hit:
    text = "".join(f"line {n}\n" for n in range(start, end + 1))
    return Hit(_chunk(text, path, symbol, start, f"id{start}"), score, position, lift)


def test_chunks_of_one_function_merge_into_the_better_ranked_entry() -> None:
    merged = merge_parts(
        [
            _hit(30, 40, 5.0, 0),
            _hit(10, 20, 4.0, 1, symbol="g"),
            _hit(10, 29, 3.0, 2),
            _hit(41, 50, 1.0, 3, path="b.go"),
        ]
    )
    assert [
        (h.chunk.path, h.chunk.symbol, h.chunk.start_line, h.chunk.end_line) for h in merged
    ] == [("a.go", "f", 10, 40), ("a.go", "g", 10, 20), ("b.go", "f", 41, 50)]
    first = merged[0]
    assert first.score == 5.0 and first.position == 0
    assert first.chunk.text.split("\n")[0] == "line 10"
    assert first.chunk.text.split("\n")[30] == "line 40"
    apart = merge_parts([_hit(1, 5, 2.0, 0), _hit(9, 12, 1.0, 1)])  # a gap: two functions
    assert len(apart) == 2
    unnamed = merge_parts([_hit(1, 5, 2.0, 0, symbol=None), _hit(6, 9, 1.0, 1, symbol=None)])
    assert len(unnamed) == 2


def test_the_cut_keeps_what_scores_near_the_best_and_the_named_definition() -> None:
    hits = [
        _hit(1, 2, 10.0, 0),
        _hit(3, 4, 3.0, 1),
        _hit(5, 6, 2.9, 2),
        _hit(7, 8, 0.5, 3, lift=SYMBOL_BOOST),
        _hit(9, 10, 0.4, 4, lift=MEMBER_BOOST),
    ]
    listed, left = cut(hits, 0.3)
    assert [h.position for h in listed] == [0, 1, 3]
    assert [h.position for h in left] == [2, 4]
    assert cut([], 0.3) == ([], [])
    flat = [_hit(1, 2, 0.0, 0), _hit(3, 4, 0.0, 1)]
    assert cut(flat, 0.3) == (flat, [])


def test_tests_come_after_the_rest_and_named_definitions_before_both() -> None:
    hits = [
        _hit(1, 2, 9.0, 0, path="gin_test.go"),
        _hit(1, 2, 8.0, 1, path="tests/x.py"),
        _hit(1, 2, 7.0, 2, path="gin.go"),
        _hit(1, 2, 1.0, 3, path="a_test.go", lift=SYMBOL_BOOST),
        _hit(1, 2, 6.0, 4, path="context.go"),
    ]
    assert [h.position for h in implementation_first(hits)] == [3, 2, 4, 0, 1]
    assert is_test("tests/client/test_client.py") and is_test("context_test.go")
    assert not is_test("httpx/_client.py") and not is_test(None)


def test_lifts_are_named_apart_and_read_back() -> None:
    a = constant({"match_all": {}}, SYMBOL_BOOST, "symbol")
    b = constant({"match_all": {}}, SYMBOL_BOOST, "qualified")
    assert a["constant_score"]["_name"] != b["constant_score"]["_name"]
    names = [a["constant_score"]["_name"], b["constant_score"]["_name"], "other"]
    assert lifted(names) == pytest.approx(2 * SYMBOL_BOOST)
    assert lifted(None) == 0.0
    raw: list[dict[str, Any]] = [
        {
            "_id": "1",
            "_score": SYMBOL_BOOST + 2.5,
            "matched_queries": [a["constant_score"]["_name"]],
            "_source": {"content": "x"},
        }
    ]
    hit = hits_of(raw, "content", offset=7)[0]
    assert hit.score == pytest.approx(2.5) and hit.definition and hit.position == 7


def test_the_hits_come_first_and_the_cut_is_counted_on_the_line_after_them() -> None:
    text, _ = pack_listing(
        [_chunk()],
        2_000,
        default_counter(),
        words_of("wildcard"),
        "3 more scored below 30% of the best: offset=1 lists ...",
    )
    lines = text.splitlines()
    assert lines[0] == "1. tree.go:131-137 node.addRoute"
    assert lines[-1] == (
        "1 hit shown; 3 more scored below 30% of the best: offset=1 lists ...; "
        "code: read_code(path, start_line, end_line)"
    )


def test_scope_tests_values_are_checked_in_one_line() -> None:
    assert Scope().tests == "after"
    with pytest.raises(
        Exception, match="tests 'no' is not one of after, include, exclude, only"
    ) as bad:
        Scope(tests="no")  # type: ignore[arg-type]
    assert "\n" not in str(bad.value)


def test_argument_errors_reach_the_agent_as_one_line() -> None:
    pytest.importorskip("mcp")
    import anyio
    from mcp.server.mcpserver.exceptions import ToolError

    from esqlog.agent.server import build_server

    server = build_server(object())  # type: ignore[arg-type]  # validation comes first
    messages = []

    async def call(arguments: dict[str, Any]) -> None:
        with pytest.raises(ToolError) as error:
            await server.call_tool("search_code", arguments)
        messages.append(str(error.value))

    for arguments in (
        {"query": "x", "tests": "no"},
        {"query": "x", "max_tokens": "lots"},
        {"tests": "only"},
    ):
        anyio.run(call, arguments)
    assert messages[0] == (
        "search_code: tests='no' is not accepted: Input should be 'after', "
        "'include', 'exclude' or 'only'"
    )
    assert messages[1].startswith("search_code: max_tokens='lots' is not accepted")
    assert messages[2] == "search_code: query is required: pass it"
    for message in messages:
        assert "\n" not in message and "pydantic" not in message and "http" not in message


def test_a_name_alone_that_the_index_defines_lists_its_best_named_definitions() -> None:
    hits = [
        _hit(1, 2, 1.0, 0, lift=SYMBOL_BOOST + 3_000),
        _hit(3, 4, 9.0, 1),
        _hit(5, 6, 1.0, 2, lift=MEMBER_BOOST),
        _hit(7, 8, 8.0, 3, lift=3_000),
    ]
    listed, left = cut(hits, 0.2, name_only=True)
    assert [h.position for h in listed] == [0]
    assert [h.position for h in left] == [1, 2, 3]
    undefined = [_hit(1, 2, 9.0, 0), _hit(3, 4, 1.0, 1, lift=3_000)]
    assert [h.position for h in cut(undefined, 0.2, name_only=True)[0]] == [0]
    assert [h.position for h in cut(hits, 0.2)[0]] == [0, 1, 3]  # words too: the scores


def test_tests_after_asks_the_engine_for_a_deeper_pool_from_the_top_only() -> None:
    from esqlog.agent.code_search import MAX_LIMIT, TESTS_AFTER_POOL, pool_size

    assert pool_size(50, Scope(), 0) == TESTS_AFTER_POOL * 50 > 50
    assert pool_size(MAX_LIMIT // 2, Scope(), 0) == MAX_LIMIT
    assert pool_size(MAX_LIMIT, Scope(), 0) == MAX_LIMIT
    for tests in ("include", "exclude", "only"):
        assert pool_size(50, Scope(tests=tests), 0) == 50  # type: ignore[arg-type]
    assert pool_size(50, Scope(), 10) == 50  # past an offset: the engine's ranking as it is


def test_past_the_limit_the_rest_is_counted_with_its_tests() -> None:
    from esqlog.agent.code_search import _after_limit

    hits = [
        _hit(1, 2, 9.0, 3),
        _hit(3, 4, 8.0, 0, path="a_test.go"),
        _hit(5, 6, 7.0, 1, path="b_test.go"),
    ]
    ordered = implementation_first(hits)
    kept, note = _after_limit(ordered, 2, "4 more scored below 20% of the best: offset=9")
    assert [h.chunk.path for h in kept] == ["a.go", "a_test.go"]
    assert note == (
        "4 more scored below 20% of the best: offset=9; 1 more past limit=2, 1 of them "
        "tests: raise limit or pass tests='only' to list them"
    )
    assert _after_limit(ordered, 3, "") == (ordered, "")
    kept, note = _after_limit([*ordered[:2], _hit(7, 8, 1.0, 5)], 2, "")
    assert note == "1 more past limit=2: raise limit or pass tests='only' to list them"
