"""find_references and grep_code answer from the index exactly what a scan of the files on
disk finds: real files of httpx and gin (tests/data/agent-names) indexed by esqlog index,
on both engines. The oracle is Python's ``re`` over each indexed file's lines as read from
disk (the index is not consulted for text), matching as ``rg -w NAME`` and ``rg PATTERN``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from esqlog.agent.code_search import CodeSearch
from esqlog.agent.grep import Grep
from esqlog.agent.line_scan import MAX_LIMIT, TextScan
from esqlog.agent.references import References
from esqlog.agent.tokens import default_counter
from esqlog.engine.client import Engine
from tests.support.agent_indices import indexed_copy
from tests.support.engines import call

#: an answer's line: path, line number, text
LINE = re.compile(r"^(\S+?):(\d+): (.*)$")
#: the head line of find_references: lines, files, then each group's count
HEAD = re.compile(
    r"^(\d+) references to .* in (\d+) files?: (\d+) definitions?, (\d+) imports?,"
    r" (\d+) uses?"
)
MORE = re.compile(r"^(\d+) more (?:references?|lines?) in (\d+) files?; narrow with path_glob")
#: repository -> (name asked, the definition's path and the start of its line)
DEFINED = {
    "httpx": [
        ("Client", "httpx/_client.py", "class Client("),
        ("httpx.Timeout", "httpx/_config.py", "class Timeout"),
        ("httpx.Response", "httpx/_models.py", "class Response"),
        ("BaseClient", "httpx/_client.py", "class BaseClient"),
        ("DEFAULT_TIMEOUT_CONFIG", "httpx/_config.py", "DEFAULT_TIMEOUT_CONFIG = "),
    ],
    "gin": [
        ("github.com/gin-gonic/gin.(*Context).Next", "context.go", "func (c *Context) Next()"),
        ("Context.ClientIP", "context.go", "func (c *Context) ClientIP()"),
        ("ServeHTTP", "gin.go", "func (engine *Engine) ServeHTTP("),
        ("binding.Validator", "binding/binding.go", "var Validator StructValidator"),
    ],
}
#: repository -> (pattern, regex?) for grep_code
GREPS = {
    "httpx": [
        ("self._transport", False),
        ("timeout=", False),
        ('"""', False),
        (r"def \w+_timeout\(", True),
        (r"(?i)TIMEOUT\s*=", True),
        (r"^\s*@\w+", True),
        (r"\d{3}", True),
        (r"Client|Response", True),
        (r"[Tt]ime(out)?s?\b", True),
    ],
    "gin": [
        ("c.Next()", False),
        ("func (c *Context)", False),
        ("return nil", False),
        (r"func \(c \*Context\) (Get|Set)\w*\(", True),
        (r"http\.Status\w+", True),
        (r"[{}]$", True),
        (r"^//", True),
    ],
}

ROOTS: dict[str, Path] = {}


@pytest.fixture(scope="module")
def tools(
    engine: Engine,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[dict[str, CodeSearch]]:
    out: dict[str, CodeSearch] = {}
    names: list[str] = []
    for repo in DEFINED:
        index, cal, field, root = indexed_copy(
            engine, tmp_path_factory, repo, "esqlog-test-refs", names
        )
        out[repo] = CodeSearch(engine, cal, index, field, default_counter())
        ROOTS[repo] = root
    yield out
    for index in names:
        call(engine, "DELETE", f"/{index}", ignore_unavailable="true")


def _indexed_files(tool: CodeSearch) -> list[str]:
    """The paths the index holds (the oracle then reads each from disk)."""
    found = call(
        tool.engine,
        "POST",
        f"/{tool.index}/_search",
        body={"size": 0, "aggs": {"paths": {"terms": {"field": "path", "size": 1000}}}},
    )
    return sorted(b["key"] for b in found["aggregations"]["paths"]["buckets"])


def _disk(repo: str, tool: CodeSearch, pattern: re.Pattern[str]) -> dict[tuple[str, int], str]:
    """(path, line) -> line of every line of the indexed files on disk ``pattern`` matches."""
    out: dict[tuple[str, int], str] = {}
    for path in _indexed_files(tool):
        text = (ROOTS[repo] / path).read_text(encoding="utf-8")
        for number, line in enumerate(text.split("\n"), start=1):
            if pattern.search(line):
                out[(path, number)] = line
    return out


def _listed(answer: str) -> list[tuple[str, int, str]]:
    return [
        (m.group(1), int(m.group(2)), m.group(3))
        for line in answer.splitlines()
        if (m := LINE.match(line))
    ]


def _check_lines(listed: list[tuple[str, int, str]], want: dict[tuple[str, int], str]) -> None:
    """Each listed line is one the disk has, with its text (stripped; long ones cut)."""
    assert len({(p, n) for p, n, _ in listed}) == len(listed)
    for path, number, text in listed:
        assert (path, number) in want, (path, number, text)
        if len(want[(path, number)].strip()) <= 160:
            assert text == want[(path, number)].strip()


@pytest.mark.parametrize(
    ("repo", "asked", "path", "start"),
    [(r, *case) for r, cases in DEFINED.items() for case in cases],
)
def test_references_are_the_lines_rg_w_finds_definition_first(
    tools: dict[str, CodeSearch], repo: str, asked: str, path: str, start: str
) -> None:
    name = re.split(r"[.)]", asked)[-1]
    want = _disk(repo, tools[repo], re.compile(rf"(?<!\w){re.escape(name)}(?!\w)"))
    assert want, name
    answer = References(tools[repo]).find(asked, limit=MAX_LIMIT)
    head = HEAD.match(answer.splitlines()[0])
    assert head, answer[:300]
    listed = _listed(answer)
    assert {(p, n) for p, n, _ in listed} == set(want)
    _check_lines(listed, want)
    assert int(head.group(1)) == len(want)
    assert int(head.group(2)) == len({p for p, _ in want})
    first_path, _, first_text = listed[0]
    assert (first_path, first_text.startswith(start)) == (path, True), answer[:400]
    definitions, imports = int(head.group(3)), int(head.group(4))
    assert definitions >= 1
    uses = listed[definitions + imports :]
    tests = [("test" in p) for p, _, _ in uses]
    assert tests == sorted(tests), "implementation before tests"
    assert not any(t.startswith(("import ", "from ")) for _, _, t in uses)


@pytest.mark.parametrize(
    ("repo", "name"),
    [
        ("httpx", "typing"),
        ("httpx", "httpx"),
        ("gin", "binding"),
        ("gin", "http"),
        ("gin", "assert"),
    ],
)
def test_a_name_as_a_qualifier_is_found_in_every_dotted_use(
    tools: dict[str, CodeSearch], repo: str, name: str
) -> None:
    """Names used mostly as the first part of a dotted term (``typing.Optional``,
    ``http.StatusOK``, ``assert.Equal``): every line, the shown ones and the counted rest."""
    want = _disk(repo, tools[repo], re.compile(rf"(?<!\w){name}(?!\w)"))
    answer = References(tools[repo]).find(name, limit=MAX_LIMIT)
    listed = _listed(answer)
    _check_lines(listed, want)
    head = HEAD.match(answer.splitlines()[0])
    assert head and int(head.group(1)) == len(want), answer[:300]
    more = MORE.match(answer.splitlines()[-1])
    assert len(listed) + (int(more.group(1)) if more else 0) == len(want)
    if len(want) <= MAX_LIMIT:
        assert {(p, n) for p, n, _ in listed} == set(want)


def test_go_import_lines_are_listed_as_imports(tools: dict[str, CodeSearch]) -> None:
    want = _disk("gin", tools["gin"], re.compile(r"(?<!\w)binding(?!\w)"))
    imports = {k for k, line in want.items() if re.fullmatch(r'\s*"[^"]+/binding"', line)}
    answer = References(tools["gin"]).find("binding", limit=MAX_LIMIT)
    head = HEAD.match(answer.splitlines()[0])
    assert head and int(head.group(4)) == len(imports) > 0, answer[:300]
    listed = _listed(answer)
    definitions = int(head.group(3))
    assert {(p, n) for p, n, _ in listed[definitions : definitions + len(imports)]} == imports


@pytest.mark.parametrize("repo", list(DEFINED))
def test_a_name_used_nowhere_is_a_clear_zero(tools: dict[str, CodeSearch], repo: str) -> None:
    assert References(tools[repo]).find("RetryTransport") == (
        "no references to RetryTransport in the index"
    )
    assert References(tools[repo]).find("httpx.RetryTransport", path_glob="*.go") == (
        "no references to RetryTransport (the last part of httpx.RetryTransport) in the "
        "index under '*.go'"
    )


@pytest.mark.parametrize(
    ("repo", "pattern", "regex"), [(r, *case) for r, cases in GREPS.items() for case in cases]
)
def test_grep_lists_the_lines_a_re_scan_finds(
    tools: dict[str, CodeSearch], repo: str, pattern: str, regex: bool
) -> None:
    compiled = re.compile(pattern if regex else re.escape(pattern))
    want = _disk(repo, tools[repo], compiled)
    assert want, pattern
    answer = Grep(tools[repo]).grep(pattern, regex, limit=MAX_LIMIT)
    listed = _listed(answer)
    shown = min(len(want), MAX_LIMIT)
    assert [(p, n) for p, n, _ in listed] == sorted(want)[:shown]
    _check_lines(listed, want)
    head = answer.splitlines()[0]
    assert head.startswith(f"{len(want)} line{'s' * (len(want) != 1)} match ")
    more = [m for line in answer.splitlines() if (m := MORE.match(line))]
    if len(want) > MAX_LIMIT:
        rest = sorted(want)[MAX_LIMIT:]
        assert [(int(more[0].group(1)), int(more[0].group(2)))] == [
            (len(rest), len({p for p, _ in rest}))
        ]
    else:
        assert more == []


@pytest.mark.parametrize("limit", [1, 5, 17])
def test_limit_and_the_count_of_the_rest_are_exact(
    tools: dict[str, CodeSearch], limit: int
) -> None:
    want = _disk("gin", tools["gin"], re.compile(r"(?<!\w)ClientIP(?!\w)"))
    answer = References(tools["gin"]).find("ClientIP", limit=limit)
    listed = _listed(answer)
    assert len(listed) == limit
    more = MORE.match(answer.splitlines()[-1])
    assert more, answer
    rest = set(want) - {(p, n) for p, n, _ in listed}
    assert (int(more.group(1)), int(more.group(2))) == (len(rest), len({p for p, _ in rest}))
    grep = Grep(tools["gin"]).grep("ClientIP", limit=limit)
    everything = _disk("gin", tools["gin"], re.compile("ClientIP"))
    more = MORE.match(grep.splitlines()[-1])
    rest = sorted(everything)[limit:]
    assert more and (int(more.group(1)), int(more.group(2))) == (
        len(rest),
        len({p for p, _ in rest}),
    ), grep


def test_path_glob_narrows_to_its_files(tools: dict[str, CodeSearch]) -> None:
    answer = References(tools["httpx"]).find("Client", path_glob="tests/**", limit=MAX_LIMIT)
    want = {
        k
        for k in _disk("httpx", tools["httpx"], re.compile(r"(?<!\w)Client(?!\w)"))
        if k[0].startswith("tests/")
    }
    assert {(p, n) for p, n, _ in _listed(answer)} == want


def test_a_capped_scan_says_how_many_candidates_it_left(tools: dict[str, CodeSearch]) -> None:
    """Past the cap of candidate chunks, the answer says the counts are lower bounds and
    how many candidates the engine counted (all of them, as an uncapped scan reads)."""
    tool = tools["gin"]
    everything, total = TextScan(tool).candidates(None, None)
    assert total == len(everything) > 10
    paged, paged_total = TextScan(tool, page_size=7).candidates(None, None)
    assert sorted(c.chunk.id for c in paged) == sorted(c.chunk.id for c in everything)
    assert paged_total == total
    assert Grep(tool, TextScan(tool, page_size=7)).grep("return nil", limit=300) == Grep(tool).grep(
        "return nil", limit=300
    )
    capped = Grep(tool, TextScan(tool, max_candidates=7, page_size=3)).grep("=>", limit=5)
    assert capped.splitlines()[0].startswith(
        f"read the first 7 of {total:,} candidate chunks: the counts below are at least these"
    )
    assert "no word of 3+ letters or digits" in capped.splitlines()[0]
