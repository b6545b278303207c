"""``esqlog mcp`` through the official MCP SDK's own client over stdio, on real engines.

The server is the installed ``esqlog`` command spawned as a subprocess, exactly as a coding
agent's configuration runs it. The index holds 300 real Go functions of the bundled sample
(esqlog/data, so CI needs no /work/data); each file's functions get consecutive line
numbers (as if the file were those functions back to back) so read_code by path can be
checked across chunks. One MCP session per engine makes every call; the tests below each
check one part of what it answered: the default listing, detail="code" chunks, numbered
read_code lines, plain text content only (no structured copy), and the errors.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from esqlog.agent.code_search import DEFAULT_BUDGET, DEFAULT_LIMIT, MAX_BUDGET, search_kwargs
from esqlog.agent.hits import (
    CUT_FRACTIONS,
    cut,
    hits_of,
    implementation_first,
    merge_parts,
)
from esqlog.agent.reading import numbered
from esqlog.agent.scope import is_test
from esqlog.agent.tokens import default_counter
from esqlog.calibration.calibrate import calibrate
from esqlog.calibration.files import save_calibration
from esqlog.cli.demo_cmd import sample_path
from esqlog.engine.client import Engine
from esqlog.evaluation.corpus import read_jsonl
from tests.support.engines import ENGINE_URLS, bulk_index, call, create_index

anyio = pytest.importorskip("anyio")
pytest.importorskip("mcp")

QUERIES = ["read file contents", "parse http request header", "sort slice of strings"]
#: a detail="code" chunk's header; these documents have path and lines, so no id
HEADER = re.compile(
    r"^--- \[(\d+)\] path=(\S+) lines=(\d+)-(\d+)"
    r"(?: symbol=(\S+))? tokens=(\d+)$",
    re.M,
)
#: a listing entry: rank, path, lines, symbol
ENTRY = re.compile(r"^(\d+)\. (\S+):(\d+)-(\d+)(?: (\S+))?$", re.M)
TOOLS = {"search_code", "read_code", "find_references", "grep_code"}


def _docs() -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    next_line: dict[str, int] = {}
    for record in list(read_jsonl(sample_path("sample_go_docs.jsonl.gz")))[:300]:
        start = next_line.get(record["path"], 1)
        lines = len(record["text"].splitlines()) or 1
        next_line[record["path"]] = start + lines
        docs.append(
            {
                "id": record["id"],
                "content": record["text"],
                "path": record["path"],
                "symbol": record["name"],
                "start_line": start,
                "end_line": start + lines - 1,
            }
        )
    return docs


@pytest.fixture(scope="module")
def served(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    docs = _docs()
    index = create_index(
        engine,
        shards=2,
        mappings={
            "properties": {
                "content": {"type": "text"},
                "path": {"type": "keyword"},
                "symbol": {"type": "keyword"},
                "start_line": {"type": "integer"},
                "end_line": {"type": "integer"},
            }
        },
    )
    try:
        bulk_index(engine, index, docs)
        calibration = calibrate(engine, index, "content")
        cal_file = save_calibration(calibration, tmp_path_factory.mktemp("mcp") / "cal.json")
        stats_before = _indexing(engine, index)
        answers = anyio.run(_conversation, engine, index, cal_file, docs)
        import esqlog

        wrapped = esqlog.wrap(engine.client, calibration)
        raw = {
            q: wrapped.search(**search_kwargs(engine.flavor, index, "content", q, 50))["hits"][
                "hits"
            ]
            for q in QUERIES
        }
        # what search_code lists of the engine's ranking: one entry per function, the hits
        # scoring near the best (esqlog.agent.hits), in the engine's order, tests after
        expected = {
            q: [
                h.chunk.id
                for h in implementation_first(
                    cut(merge_parts(hits_of(found, "content")), CUT_FRACTIONS["boost"])[0]
                )
            ]
            for q, found in raw.items()
        }
        ranked = {q: [h["_id"] for h in found] for q, found in raw.items()}
        yield {
            "answers": answers,
            "expected": expected,
            "ranked": ranked,
            "docs": {d["id"]: d for d in docs},
            "ids": {(d["path"], d["start_line"]): d["id"] for d in docs},
            "writes": _indexing(engine, index) - stats_before,
            "index": index,
        }
    finally:
        call(engine, "DELETE", f"/{index}")


def _indexing(engine: Engine, index: str) -> int:
    stats = call(engine, "GET", f"/{index}/_stats/indexing")
    totals = stats["_all"]["total"]["indexing"]
    return int(totals["index_total"]) + int(totals["delete_total"])


async def _conversation(
    engine: Engine, index: str, cal_file: Path, docs: list[dict[str, Any]]
) -> dict[str, Any]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    command = str(Path(sys.executable).with_name("esqlog"))
    args = [
        "mcp",
        "--url",
        ENGINE_URLS[engine.flavor],
        "--index",
        index,
        "--calibration",
        str(cal_file),
    ]
    bad_index_args = [*args[:4], "esqlog-no-such-index", *args[5:]]
    out: dict[str, Any] = {}

    async def calls(
        params: StdioServerParameters,
        todo: dict[str, tuple[str, dict[str, Any]]],
    ) -> dict[str, Any]:
        results: dict[str, Any] = {}
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            results["tools"] = (await session.list_tools()).tools
            results["structured"] = []
            for key, (tool, arguments) in todo.items():
                result = await session.call_tool(tool, arguments)
                results[key] = (
                    bool(result.is_error),
                    "".join(getattr(c, "text", "") for c in result.content),
                )
                results["structured"].append(
                    (key, result.structured_content, [c.type for c in result.content])
                )
        return results

    first = docs[0]
    same_path = [d for d in docs if d["path"] == first["path"]]
    todo: dict[str, tuple[str, dict[str, Any]]] = {
        f"search {q} {budget}": (
            "search_code",
            {"query": q, "max_tokens": budget, "limit": 50, "detail": "code"},
        )
        for q in QUERIES
        for budget in (300, 1000, 8000, MAX_BUDGET)
    }
    todo.update({f"list {q}": ("search_code", {"query": q}) for q in QUERIES})
    todo.update(
        {
            f"list all {q}": ("search_code", {"query": q, "limit": 50, "max_tokens": MAX_BUDGET})
            for q in QUERIES
        }
    )
    todo.update(
        {
            "read id": (
                "read_code",
                {
                    "id": first["id"],
                    "start_line": first["start_line"] + 1,
                    "end_line": first["start_line"] + 3,
                },
            ),
            "read id whole": ("read_code", {"id": first["id"]}),
            "read path": (
                "read_code",
                {"path": first["path"], "start_line": 1, "end_line": same_path[-1]["end_line"]},
            ),
            "empty query": ("search_code", {"query": "   "}),
            "budget 0": ("search_code", {"query": "read file", "max_tokens": 0}),
            "budget huge": ("search_code", {"query": "read file", "max_tokens": 10**9}),
            "budget over the cap": (
                "search_code",
                {"query": "read file", "max_tokens": MAX_BUDGET + 1},
            ),
            "detail unknown": ("search_code", {"query": "read file", "detail": "full"}),
            "unknown id": ("read_code", {"id": "no-such-id-123"}),
            "limit 0": ("search_code", {"query": "read file", "limit": 0}),
            "neither id nor path": ("read_code", {"start_line": 1}),
            "unknown path": ("read_code", {"path": "no/such/file.go"}),
            "lines outside": (
                "read_code",
                {"id": first["id"], "start_line": 10**6, "end_line": 10**6 + 1},
            ),
            "after errors": ("search_code", {"query": "read file", "max_tokens": 2000}),
            "references": ("find_references", {"symbol": first["symbol"]}),
            "grep": ("grep_code", {"pattern": "func (", "limit": 3}),
            "grep bad regex": ("grep_code", {"pattern": "(unclosed", "regex": True}),
            "grep nested": ("grep_code", {"pattern": "(a+)+b", "regex": True}),
            "references limit 0": ("find_references", {"symbol": "Read", "limit": 0}),
        }
    )
    env = dict(os.environ)  # the SDK passes only a few variables on; PYTHONPATH must reach it
    out.update(await calls(StdioServerParameters(command=command, args=args, env=env), todo))
    bad = await calls(
        StdioServerParameters(command=command, args=bad_index_args, env=env),
        {"unknown index": ("search_code", {"query": "read file"})},
    )
    out["unknown index"] = bad["unknown index"]
    out["http"] = await _over_http(command, args)
    out["readme"] = await calls(
        _readme_server(engine, index, cal_file), {"search": ("search_code", {"query": QUERIES[0]})}
    )
    out["same_path"] = same_path
    out["first"] = first
    return out


async def _over_http(command: str, args: list[str]) -> dict[str, Any]:
    """The same server with --transport http, through the SDK's streamable HTTP client."""
    import socket
    import subprocess

    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [command, *args, "--transport", "http", "--port", str(port)], stdin=subprocess.DEVNULL
    )
    try:
        for _ in range(600):  # readiness, not a timing assertion: up to 60 s to listen
            assert process.poll() is None, "esqlog mcp --transport http exited"
            with socket.socket() as s, contextlib.suppress(OSError):
                s.connect(("127.0.0.1", port))
                break
            await anyio.sleep(0.1)
        async with (
            streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            tools = (await session.list_tools()).tools
            result = await session.call_tool(
                "search_code", {"query": QUERIES[1], "max_tokens": 1000}
            )
            text = "".join(getattr(c, "text", "") for c in result.content)
            return {"tools": tools, "search": (bool(result.is_error), text)}
    finally:
        process.terminate()
        process.wait(timeout=30)


def _listed(text: str, ids: dict[tuple[str, int], str]) -> list[tuple[int, str]]:
    """(rank, document id) of every listing entry, the id found by path and first line."""
    return [(int(m.group(1)), ids[(m.group(2), int(m.group(3)))]) for m in ENTRY.finditer(text)]


def _answered_like_the_engine(
    answer: dict[str, Any], expected: list[str], ids: dict[tuple[str, int], str]
) -> str:
    """The tools listed, and search_code's listing in the engine's own order; its text."""
    assert {t.name for t in answer["tools"]} == TOOLS
    is_error, text = answer["search"]
    listed = _listed(text, ids)
    assert not is_error and listed, text
    assert [i for _, i in listed] == [expected[rank - 1] for rank, _ in listed]
    return str(text)


def test_streamable_http_transport(served: dict[str, Any]) -> None:
    text = _answered_like_the_engine(
        served["answers"]["http"], served["expected"][QUERIES[1]], served["ids"]
    )
    assert default_counter().count(text) <= 1000


def _readme_server(engine: Engine, index: str, cal_file: Path) -> Any:
    """docs/indexing.md's configuration block as written, with only its placeholders
    replaced by this test's (the esqlog command, URL, index, calibration), started in
    another folder with a bare PATH, as an agent starts it."""
    from mcp.client.stdio import StdioServerParameters

    page = (Path(__file__).parents[2] / "docs" / "indexing.md").read_text(encoding="utf-8")
    section = page.split("## Serve it to a coding agent (MCP)", 1)[1].split("\n## ", 1)[0]
    block = json.loads(section.split("```json", 1)[1].split("```", 1)[0])
    server = block["mcpServers"]["esqlog"]
    values = {
        "http://localhost:9200": ENGINE_URLS[engine.flavor],
        "code": index,
        "/home/me/.esqlog/code.qlog.json": str(cal_file),
        "/home/me/.venv/bin/esqlog": str(Path(sys.executable).with_name("esqlog")),
    }
    command, *args = [values.get(a, a) for a in [server["command"], *server["args"]]]
    assert len({command, *args} & set(values.values())) == 4, server
    env = {"PATH": "/usr/bin:/bin", **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"}}
    return StdioServerParameters(command=command, args=args, env=env, cwd="/")


def test_readme_configuration_works_as_written(served: dict[str, Any]) -> None:
    _answered_like_the_engine(
        served["answers"]["readme"], served["expected"][QUERIES[0]], served["ids"]
    )


def test_lists_the_tools(served: dict[str, Any]) -> None:
    tools = {t.name: t for t in served["answers"]["tools"]}
    assert set(tools) == TOOLS
    schema = json.dumps(tools["search_code"].input_schema)
    assert all(word in schema for word in ("max_tokens", "query", "detail", "limit"))
    assert "read_code" in (tools["search_code"].description or "")
    assert "start_line" in json.dumps(tools["read_code"].input_schema)


def test_answers_are_plain_text_without_a_structured_copy(served: dict[str, Any]) -> None:
    """No output schema, so the SDK sends no structuredContent duplicating the text (a
    client handing the model that JSON would pay ~10% over the budget asked for)."""
    answers = served["answers"]
    assert all(t.output_schema is None for t in answers["tools"])
    assert len(answers["structured"]) > 20
    for key, structured, types in answers["structured"]:
        assert structured is None, key
        assert types in (["text"], []), key


def test_default_answer_is_a_listing_within_the_default_budget(served: dict[str, Any]) -> None:
    counter = default_counter()
    for q in QUERIES:
        is_error, text = served["answers"][f"list {q}"]
        assert not is_error, text
        assert counter.count(text) <= DEFAULT_BUDGET <= 2000  # a default answer's promise
        listed = _listed(text, served["ids"])
        expected = served["expected"][q][:DEFAULT_LIMIT]  # all of them fit
        assert [rank for rank, _ in listed] == list(range(1, len(expected) + 1))
        assert [i for _, i in listed] == expected and len(expected) > 5
        assert not re.search(r"[0-9a-f]{20}", text)  # no ids: path and lines say it all
        for rank, doc_id in listed:
            doc = served["docs"][doc_id]
            assert (
                f"{rank}. {doc['path']}:{doc['start_line']}-{doc['end_line']} "
                f"{doc['symbol']}" in text
            )
        assert ENTRY.match(text.splitlines()[0])  # the hits first, the summary after them
        assert text.splitlines()[-1].startswith(f"{len(expected)} hits shown")


def test_search_ranks_as_the_wrapped_client(served: dict[str, Any]) -> None:
    """With room for every hit, the listing shows them all, in the wrapped client's order."""
    for q in QUERIES:
        is_error, text = served["answers"][f"list all {q}"]
        assert not is_error, text
        shown = [i for _, i in _listed(text, served["ids"])]
        assert shown == served["expected"][q] and shown, q
        ranked = served["ranked"][q]  # the engine's order, whatever was cut, tests after
        paths = {i: served["docs"][i]["path"] for i in shown}
        for group in (
            [i for i in shown if not is_test(paths[i])],
            [i for i in shown if is_test(paths[i])],
        ):
            assert [ranked.index(i) for i in group] == sorted(ranked.index(i) for i in group)
        tests = [is_test(paths[i]) for i in shown]
        assert tests == sorted(tests)
        last = text.splitlines()[-1]
        assert last.startswith(f"{len(shown)} hits shown") and "left out" not in last
        cut_out = len(ranked) - len(shown)
        share = f"{CUT_FRACTIONS['boost']:.0%}"
        assert (
            f"; {cut_out} more scored below {share} of the best: offset=" in last
            if cut_out
            else "more scored" not in last
        )


def test_budgets_are_respected_and_omissions_stated(served: dict[str, Any]) -> None:
    counter = default_counter()
    assert counter.name == "o200k_base"  # the real tokenizer is installed with [mcp]
    for q in QUERIES:
        ranks_8000 = None
        for budget in (300, 1000, 8000, MAX_BUDGET):
            is_error, text = served["answers"][f"search {q} {budget}"]
            assert not is_error, text
            assert counter.count(text) <= budget
            headers = list(HEADER.finditer(text))
            ranks = [int(m.group(1)) for m in headers]
            assert ranks == sorted(ranks)
            ids = [served["ids"][(m.group(2), int(m.group(3)))] for m in headers]
            expected = served["expected"][q]
            assert [expected[r - 1] for r in ranks] == ids  # best first, whole chunks
            for m, doc_id in zip(headers, ids, strict=True):
                doc = served["docs"][doc_id]
                assert doc["content"] in text
                assert int(m.group(4)) == doc["end_line"]
            left = len(expected) - len(ids)
            last = text.splitlines()[-1]
            assert last.startswith(
                f"{len(ids)} of {len(expected)} hits shown; {left} left out"
                if left
                else f"{len(ids)} hits shown"
            )
            assert text.startswith("--- [")  # the chunks first, the summary after them
            if budget == 8000:
                ranks_8000 = ranks
        assert ranks_8000  # the default budget shows something for every query


def test_read_code_is_exact(served: dict[str, Any]) -> None:
    answers = served["answers"]
    docs = served["answers"]["same_path"]
    first = docs[0]
    lines = list(enumerate(first["content"].splitlines(), start=first["start_line"]))
    assert answers["read id"] == (False, numbered(lines[1:4]))
    assert answers["read id whole"] == (False, numbered(lines))
    whole_file = [line for d in docs for line in d["content"].splitlines()]
    assert answers["read path"] == (False, numbered(list(enumerate(whole_file, start=1))))
    assert answers["read path"][1].splitlines()[0].lstrip().startswith("1\t")


@pytest.mark.parametrize(
    ("key", "words"),
    [
        ("empty query", "query text is empty"),
        ("budget 0", "max_tokens 0 is outside"),
        ("budget huge", "max_tokens 1000000000 is outside"),
        ("budget over the cap", f"max_tokens {MAX_BUDGET + 1} is outside 200-{MAX_BUDGET}"),
        ("detail unknown", "detail 'full' is not one of list, code"),
        ("unknown id", "no document with id 'no-such-id-123'"),
        ("lines outside", "are outside id"),
        ("limit 0", "limit 0 is outside"),
        ("neither id nor path", "pass exactly one of id or path"),
        ("unknown path", "no document with path 'no/such/file.go'"),
        ("unknown index", "esqlog-no-such-index"),
        (
            "grep bad regex",
            "regex '(unclosed' does not compile: missing ), unterminated subpattern",
        ),
        ("grep nested", "repeats a group that itself repeats"),
        ("references limit 0", "limit 0 is outside 1-300"),
    ],
)
def test_bad_input_is_a_tool_error(served: dict[str, Any], key: str, words: str) -> None:
    is_error, text = served["answers"][key]
    assert is_error and words in text, text
    assert "Traceback" not in text


def test_references_and_grep_answer_lines(served: dict[str, Any]) -> None:
    """find_references lists the definition of a function the index holds first; grep_code
    lists the lines of a literal and counts the rest."""
    answers = served["answers"]
    name = answers["first"]["symbol"].split(".")[-1]
    is_error, text = answers["references"]
    lines = text.splitlines()
    assert not is_error and " references to " in lines[0], text
    assert re.match(rf"^\S+:\d+: func .*\b{name}\(", lines[1]), text
    is_error, text = answers["grep"]
    assert not is_error and re.search(
        r"^\d+ lines match literal 'func \(' in \d+ files$", text.splitlines()[0]
    ), text
    assert len([line for line in text.splitlines() if ": func (" in line]) == 3, text
    assert re.search(r"^\d+ more lines in \d+ files; narrow with path_glob", text, re.M), text


def test_server_survives_errors_and_never_writes(served: dict[str, Any]) -> None:
    is_error, text = served["answers"]["after errors"]
    assert not is_error and ENTRY.search(text), text
    assert served["writes"] == 0
