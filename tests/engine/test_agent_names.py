"""Names as agents write them find their definition first, and a name the index lacks is
answered as such: search_code on real files of httpx and gin (tests/data/agent-names),
indexed by esqlog index, on both engines, in both of esqlog mcp's modes."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from esqlog.agent.code_search import CodeSearch
from esqlog.agent.tokens import default_counter
from esqlog.engine.client import Engine
from tests.support.agent_indices import indexed_copy
from tests.support.engines import call

#: query -> the symbol of its definition (the listing line ends with it)
NAMED = {
    "httpx": {
        "httpx.Client": "Client",
        "httpx.Timeout": "Timeout",
        "httpx.Response": "Response",
        "httpx.get": "get",
        "httpx.AsyncClient": "AsyncClient",
        "Timeout.__init__": "Timeout.__init__",
        "head": "head",
    },
    "gin": {
        "binding.Default": "Default",
        "github.com/gin-gonic/gin.(*Context).Next": "Context.Next",
        "Context.ClientIP": "Context.ClientIP",
        "ServeHTTP": "Engine.ServeHTTP",
        "Stream": "Context.Stream",
    },
}


#: a stack frame -> the entry of the definition it points to (path:start-end symbol), among
#: several of that name (httpx defines five ``get``, gin ``Next`` on more than one type)
FRAMES = {
    "httpx": {
        'File "httpx/_client.py", line 1058, in get': "httpx/_client.py:1036-1064 Client.get",
        '  File "/usr/lib/python3.12/site-packages/httpx/_client.py", line 1770, in get\n'
        "    return self.request(\n": "httpx/_client.py:1751-1779 AsyncClient.get",
        'File "httpx/_models.py", line 245, in get': "httpx/_models.py:242-251 Headers.get",
    },
    "gin": {
        "github.com/gin-gonic/gin.(*Context).Next(...)\n"
        "\t/home/u/go/pkg/mod/github.com/gin-gonic/gin@v1.10.0/"
        "context.go:200 +0x1d": "context.go:195-207 Context.Next"
    },
}


#: repository -> the folder esqlog index read for it
ROOTS: dict[str, Path] = {}


@pytest.fixture(scope="module", params=["boost", "identifiers"])
def searches(
    request: pytest.FixtureRequest, engine: Engine, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, CodeSearch]]:
    out: dict[str, CodeSearch] = {}
    names: list[str] = []
    for repo in NAMED:
        index, cal, field, root = indexed_copy(
            engine, tmp_path_factory, repo, "esqlog-test-names", names
        )
        out[repo] = CodeSearch(engine, cal, index, field, default_counter(), mode=request.param)
        ROOTS[repo] = root
    yield out
    for index in names:
        call(engine, "DELETE", f"/{index}", ignore_unavailable="true")


def _rank(listing: str, symbol: str) -> int | None:
    ranked = [line for line in listing.splitlines() if re.match(r"^\s*\d+\. ", line)]
    return next(
        (k for k, line in enumerate(ranked, 1) if line.rstrip().endswith(" " + symbol)), None
    )


@pytest.mark.parametrize(("repo", "query"), [(r, q) for r, qs in NAMED.items() for q in qs])
def test_a_qualified_name_lists_its_definition_first(
    searches: dict[str, CodeSearch], repo: str, query: str
) -> None:
    listing = searches[repo].search(query)
    assert _rank(listing, NAMED[repo][query]) == 1, listing[:600]
    assert not listing.startswith("no definition")


@pytest.mark.parametrize(("repo", "frame"), [(r, f) for r, fs in FRAMES.items() for f in fs])
def test_a_stack_frame_is_answered_with_the_definition_at_its_place(
    searches: dict[str, CodeSearch], repo: str, frame: str
) -> None:
    """The frame's file and line pick its function among those of its name, and the answer
    is that definition alone, then how many others the ranking holds and where they start."""
    answer = searches[repo].search(frame)
    entries = [line for line in answer.splitlines() if re.match(r"^\d+\. ", line)]
    assert entries == [f"1. {FRAMES[repo][frame]}"], answer
    assert answer.startswith("1. ")
    assert re.search(
        r"; \d+ more are not the named definition: offset=1 lists", answer.splitlines()[-1]
    ), answer


@pytest.mark.parametrize("repo", list(NAMED))
def test_a_name_nothing_defines_or_holds_is_a_clear_zero(
    searches: dict[str, CodeSearch], repo: str
) -> None:
    answer = searches[repo].search("RetryTransport")
    first, *rest = answer.splitlines()
    assert first.startswith("no definition named RetryTransport in this index; closest:")
    assert rest == ["no indexed text holds it either."]
    assert default_counter().count(answer) < 80


def test_a_name_mentioned_but_not_defined_says_so_then_lists(
    searches: dict[str, CodeSearch],
) -> None:
    # gin's tests call the Go standard library's httptest.NewRecorder; gin defines no NewRecorder
    answer = searches["gin"].search("NewRecorder")
    lines = answer.splitlines()
    assert lines[0].startswith("no definition named NewRecorder in this index")
    assert "no indexed text holds it" not in answer  # httptest.NewRecorder holds it
    assert _rank(answer, "NewRecorder") is None


def test_read_code_takes_the_paths_agents_pass(searches: dict[str, CodeSearch]) -> None:
    """Absolute paths inside the indexed folder and ./ forms read the same lines; a path
    that leaves the folder, a reversed range and a huge path are one short error each."""
    from esqlog.agent.chunks import ToolInputError

    tool, root = searches["gin"], ROOTS["gin"]
    want = tool.read(None, "gin.go", 1, 5)
    assert want.splitlines()[0].startswith("1\t")
    for form in (str(root / "gin.go"), "./gin.go", "binding/../gin.go", f"{root}/./gin.go"):
        assert tool.read(None, form, 1, 5) == want, form
    for outside in ("/etc/passwd", "../gin.go", f"{root}/../gin.go", str(root.parent)):
        with pytest.raises(ToolInputError, match="is outside"):
            tool.read(None, outside, 1, 5)
    with pytest.raises(ToolInputError, match="start_line 9 is after end_line 3"):
        tool.read(None, "gin.go", 9, 3)
    with pytest.raises(ToolInputError) as huge:
        tool.read(None, "a" * 100_000, 1, 2)
    assert len(str(huge.value)) < 300
    with pytest.raises(ToolInputError) as missing:
        tool.read(None, "b" * 3_000, 1, 2)
    assert "no document with path" in str(missing.value) and len(str(missing.value)) < 400
