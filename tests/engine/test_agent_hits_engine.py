"""Answers without noise on real files (tests/data/agent-names, indexed by esqlog index, on
both engines): each hit's matching lines are the file's own lines with their numbers, one
entry per function, the score cut says how many more and the offset lists them, tests come
after the implementation by default, and a filter value the index lacks is answered with
the values it has."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from esqlog.agent import code_search
from esqlog.agent.code_search import CodeSearch
from esqlog.agent.scope import Scope, is_test
from esqlog.agent.tokens import default_counter
from esqlog.engine.client import Engine
from tests.support.agent_indices import indexed_copy
from tests.support.engines import call

REPOS = ("httpx", "gin")
_ENTRY = re.compile(r"^(\d+)\. (\S+):(\d+)-(\d+)(?: (\S+))?$")
_LINE = re.compile(r"^   (\d+)\| (.*)$")
QUERIES = {
    "gin": [
        "trusted proxies remote address",
        "redirect trailing slash",
        "abort handlers chain index",
        "ClientIP",
        "binding default validator",
    ],
    "httpx": [
        "follow redirects",
        "timeout pool connect",
        "Response.encoding",
        "cookies headers merge",
        "stream response content",
    ],
}


@pytest.fixture(scope="module")
def tools(
    engine: Engine, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, tuple[CodeSearch, Path]]]:
    out: dict[str, tuple[CodeSearch, Path]] = {}
    names: list[str] = []
    for repo in REPOS:
        index, cal, field, root = indexed_copy(
            engine, tmp_path_factory, repo, "esqlog-test-hits", names
        )
        out[repo] = (CodeSearch(engine, cal, index, field, default_counter()), root)
    yield out
    for index in names:
        call(engine, "DELETE", f"/{index}", ignore_unavailable="true")


def _humps(word: str) -> list[str]:
    return re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", word)


def _entries(answer: str) -> list[tuple[str, int, int, str | None, list[tuple[int, str]]]]:
    """(path, start, end, symbol, [(line number, text)]) of each listed hit (the summary
    line after them is none)."""
    out: list[tuple[str, int, int, str | None, list[tuple[int, str]]]] = []
    for line in answer.splitlines():
        if entry := _ENTRY.match(line):
            out.append((entry[2], int(entry[3]), int(entry[4]), entry[5], []))
        elif (shown := _LINE.match(line)) and out:
            out[-1][4].append((int(shown[1]), shown[2]))
    return out


@pytest.mark.parametrize(("repo", "query"), [(r, q) for r in REPOS for q in QUERIES[r]])
def test_matching_lines_are_the_files_own_lines(
    tools: dict[str, tuple[CodeSearch, Path]], repo: str, query: str
) -> None:
    tool, root = tools[repo]
    entries = _entries(tool.search(query))
    assert entries, query
    shown = 0
    words = [w for w in re.findall(r"\w+", query) if len(w) > 1]
    for path, start, end, _, lines in entries:
        text = (root / path).read_text().split("\n")
        for number, line in lines:
            assert start <= number <= end
            assert text[number - 1].strip().startswith(line.rstrip("…")), (path, number)
            pieces = {p.lower() for t in re.findall(r"\w+", line) for p in [t, *_humps(t)]}
            assert any(
                w.lower() in pieces or {h.lower() for h in _humps(w)} <= pieces for w in words
            ), (query, line)  # it holds a query word, or its humps
            shown += 1
    assert shown >= len(entries) // 2  # most hits show the line that matched


@pytest.mark.parametrize(("repo", "query"), [(r, q) for r in REPOS for q in QUERIES[r]])
def test_one_entry_per_function(
    tools: dict[str, tuple[CodeSearch, Path]], repo: str, query: str
) -> None:
    entries = _entries(tools[repo][0].search(query, limit=200, max_tokens=20_000))
    named = [(path, symbol) for path, _, _, symbol, _ in entries if symbol]
    assert len(named) == len(set(named))


def test_a_symbol_in_two_adjacent_chunks_is_one_entry_spanning_both(
    tools: dict[str, tuple[CodeSearch, Path]],
) -> None:
    # httpx's Response.encoding: a property (lines 652-673) and its setter (674-687)
    entries = _entries(tools["httpx"][0].search("Response.encoding"))
    first = entries[0]
    assert first[:4] == ("httpx/_models.py", 652, 687, "Response.encoding")
    assert [e for e in entries if e[3] == "Response.encoding"] == [first]


def test_the_cut_says_how_many_more_and_the_offset_lists_them(
    tools: dict[str, tuple[CodeSearch, Path]], monkeypatch: pytest.MonkeyPatch
) -> None:
    # the mechanism, at a share that cuts this small index's answer (the shipped shares are
    # chosen by the localization benchmark: esqlog.agent.hits.CUT_FRACTIONS)
    monkeypatch.setattr(code_search, "CUT_FRACTIONS", {"boost": 0.5, "identifiers": 0.5})
    tool = tools["gin"][0]
    cut_line = re.compile(r"(\d+) more scored below 50% of the best: offset=(\d+) lists")
    query = "query string"
    answer = tool.search(query)
    found = cut_line.search(answer.splitlines()[-1])  # said after the hits
    assert found, answer
    more, offset = int(found[1]), int(found[2])
    listed = _entries(answer)
    assert more > 0 and offset >= len(listed)
    # every hit the cut left out ranks at or past the offset: the offset lists them all
    pool = code_search.pool_size(50, Scope(), 0)  # the hits the cut was counted on
    rest = _entries(tool.search(query, offset=offset, limit=pool, max_tokens=20_000))
    assert len(rest) >= more
    assert not {e[:3] for e in rest} & {e[:3] for e in listed}
    assert "more scored below" not in tool.search(query, offset=offset)
    # past an offset nothing is cut: ranks 2 to the pool's end, every one of them listed
    second_on = _entries(tool.search(query, offset=1, limit=pool - 1, max_tokens=20_000))
    assert len(second_on) == len(listed) - 1 + more


def test_tests_come_after_the_implementation_unless_included(
    tools: dict[str, tuple[CodeSearch, Path]],
) -> None:
    tool = tools["gin"][0]
    query = "render JSON response"
    most = code_search.MAX_LIMIT  # both drawn from the same pool of hits
    after = [path for path, *_ in _entries(tool.search(query, max_tokens=20_000, limit=most))]
    included = [
        path
        for path, *_ in _entries(
            tool.search(query, max_tokens=20_000, limit=most, scope=Scope(tests="include"))
        )
    ]
    assert sorted(after) == sorted(included)  # the same hits, in another order
    flags = [is_test(path) for path in after]
    assert flags == sorted(flags) and any(flags) and not all(flags)
    assert [is_test(p) for p in included] != flags  # the engine's order mixed them


def test_a_filter_value_the_index_lacks_lists_the_values_it_has(
    tools: dict[str, tuple[CodeSearch, Path]],
) -> None:
    tool = tools["gin"][0]
    answer = tool.search("ClientIP", scope=Scope(language="golang"))
    assert answer.startswith("no document has language='golang'; this index has language ")
    assert "go" in answer.split("language ")[-1].split(", ")
    kinds = tool.search("ClientIP", scope=Scope(kind="func"))
    assert "no document has kind='func'" in kinds and "function" in kinds
    assert "\n" not in kinds
    valid = tool.search("ClientIP", scope=Scope(language="go", path="nowhere/*.go"))
    assert valid == (
        "no hits within path='nowhere/*.go', language='go': widen or drop these filters"
    )


@pytest.mark.parametrize(
    ("repo", "quoted", "places"),
    [
        ("gin", "cannot read nil body", {("context.go", 1146)}),
        (
            "httpx",
            "Cannot send a request, as the client has been closed.",
            {("httpx/_client.py", 901), ("httpx/_client.py", 1616)},
        ),
    ],
)
def test_text_quoted_from_the_code_lists_where_it_is_written(
    tools: dict[str, tuple[CodeSearch, Path]], repo: str, quoted: str, places: set[tuple[str, int]]
) -> None:
    """An error message is answered with the functions that hold it, each showing the line
    that does (a test asserting it comes after them); the hits that share only its words
    are counted after them."""
    answer = tools[repo][0].search(quoted)
    entries = _entries(answer)
    code = [e for e in entries if not is_test(e[0])]
    assert entries[: len(code)] == code
    assert {(path, number) for path, _, _, _, lines in code for number, _ in lines} == places
    root = tools[repo][1]
    for path, _, _, _, lines in entries[len(code) :]:  # tests: each shows a line holding it
        ((number, _),) = lines
        line = (root / path).read_text().split("\n")[number - 1]
        assert quoted.rstrip(".").lower() in line.lower(), (path, number)
    assert re.search(
        r"; \d+ more do not hold the query's text: offset=\d+ lists", answer.splitlines()[-1]
    ), answer
    # words of the agent's own are ranked as before: no hit holds them in that order
    asked = tools[repo][0].search("client closed request send")
    assert "do not hold" not in asked and len(_entries(asked)) > len(entries)


def _holds(line: str, quoted: str) -> bool:
    """Whether ``line`` holds all of ``quoted``'s words in order, case aside, with only
    punctuation between them (the rule a quotation is found by, written out here)."""
    words = re.findall(r"[A-Za-z0-9]+", quoted)
    gap = r"[^A-Za-z0-9]+"
    return re.search(r"(?<![A-Za-z0-9])" + gap.join(words), line, re.IGNORECASE) is not None


@pytest.mark.parametrize(
    ("repo", "query", "quoted", "first"),
    [
        # line 994 says "the remote IP is a trusted proxy" and holds as many of the words
        ("gin", "the remoteIP is a trusted proxy", "the remoteIP is a trusted proxy", 1027),
        ("gin", 'panic: "the remoteIP is a" trusted', "the remoteIP is a", 1027),
        ("httpx", "why does `httpx.Client` close", "httpx.Client", None),
    ],
)
def test_a_hit_shows_the_line_that_holds_the_quoted_text(
    tools: dict[str, tuple[CodeSearch, Path]],
    repo: str,
    query: str,
    quoted: str,
    first: int | None,
) -> None:
    """The line shown for a hit whose code holds the quoted text (the whole query, or the
    part set off in quotes or backticks) is the file's line that holds it, as rg prints
    it; a hit that does not hold it shows the line with most of the query's words."""
    tool, root = tools[repo]
    entries = _entries(tool.search(query, limit=100, max_tokens=8_000))
    if first is not None:
        assert [n for n, _ in entries[0][4]] == [first]
    holding = 0
    for path, start, end, _, lines in entries:
        text = (root / path).read_text().split("\n")
        if not _holds("\n".join(text[start - 1 : end]), quoted):
            continue
        holding += 1
        assert lines, (path, start)
        for number, line in lines:
            assert text[number - 1].strip().startswith(line.rstrip("…")), (path, number)
        assert any(_holds(text[number - 1], quoted) for number, _ in lines), (path, lines)
    assert holding >= 1
