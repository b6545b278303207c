"""A running ``esqlog mcp`` (official MCP SDK client, stdio, real OpenSearch) keeps its index
as fresh as the folder: after an edit, with no command run, a search finds the new function
by name at rank 1, read_code returns the file's current text, and a deleted file's hits are
gone; with the calibration ``esqlog index --calibrate`` wrote kept fresh too."""

from __future__ import annotations

import os
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from esqlog.agent.freshness import INTERVAL
from esqlog.agent.reading import numbered
from esqlog.cli import main
from esqlog.engine.client import Engine
from tests.support.engines import ENGINE_URLS, call
from tests.support.repos import make_repo

anyio = pytest.importorskip("anyio")
pytest.importorskip("mcp")

NEW = "\n\ndef quux_fresh_widget_total(widgets):\n    return sum(w.size for w in widgets)\n"
NEW_GO = "\nfunc ZorblatFreshCounter(n int) int {\n\treturn n * 7\n}\n"


def _lines(text: str) -> str:
    return numbered(list(enumerate(text.rstrip("\n").split("\n"), start=1)))


@pytest.fixture(scope="module")
def served(
    opensearch: Engine, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    repo = make_repo(tmp_path_factory.mktemp("fresh-repo") / "repo")
    index = f"esqlog-test-fresh-{uuid.uuid4().hex[:10]}"
    calibration = repo.parent / "code.qlog.json"
    try:
        result = CliRunner().invoke(
            main,
            [
                "index",
                str(repo),
                "--url",
                ENGINE_URLS["opensearch"],
                "--index",
                index,
                "--calibrate",
                str(calibration),
            ],
        )
        assert result.exit_code == 0, result.output
        before = calibration.read_text(encoding="utf-8")
        answers = anyio.run(_conversation, index, repo, calibration)
        answers["unwatched"] = anyio.run(_unwatched, index, repo, calibration)
        yield {
            "answers": answers,
            "repo": repo,
            "before": before,
            "calibration": calibration,
            "index": index,
            "engine": opensearch,
        }
    finally:
        call(opensearch, "DELETE", f"/{index}", ignore_unavailable="true")


def _server(index: str, calibration: Path, *extra: str) -> Any:
    from mcp.client.stdio import StdioServerParameters

    command = str(Path(sys.executable).with_name("esqlog"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ESQLOG_")}
    env["PYTHONPATH"] = os.pathsep.join(
        [str(Path(__file__).resolve().parents[2]), env.get("PYTHONPATH", "")]
    )
    return StdioServerParameters(
        command=command,
        env=env,
        args=[
            "mcp",
            "--url",
            ENGINE_URLS["opensearch"],
            "--index",
            index,
            "--calibration",
            str(calibration),
            *extra,
        ],
    )


async def _unwatched(index: str, repo: Path, calibration: Path) -> tuple[bool, str]:
    """--no-watch: an edit stays unseen (the index is never written)."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import stdio_client

    with (repo / "errors.py").open("a", encoding="utf-8") as f:
        f.write("\n\ndef plonk_unwatched_helper():\n    return 3\n")
    with calibration.with_name("unwatched.stderr").open("w", encoding="utf-8") as errlog:
        async with (
            stdio_client(_server(index, calibration, "--no-watch"), errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            time.sleep(INTERVAL)
            result = await session.call_tool("search_code", {"query": "plonk_unwatched_helper"})
    return (bool(result.is_error), "".join(getattr(c, "text", "") for c in result.content))


async def _conversation(index: str, repo: Path, calibration: Path) -> dict[str, Any]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import stdio_client

    params = _server(index, calibration)
    out: dict[str, Any] = {}
    errors = calibration.with_name("mcp.stderr")
    with errors.open("w", encoding="utf-8") as errlog:
        async with (
            stdio_client(params, errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()

            async def ask(key: str, tool: str, **arguments: Any) -> None:
                result = await session.call_tool(tool, arguments)
                out[key] = (
                    bool(result.is_error),
                    "".join(getattr(c, "text", "") for c in result.content),
                )

            await ask("before", "search_code", query="quux_fresh_widget_total")
            # a read right after an edit (within the interval): the file's own check
            with (repo / "qlog.py").open("a", encoding="utf-8") as f:
                f.write(NEW)
            await ask("read", "read_code", path="qlog.py")
            with (repo / "go" / "builder.go").open("a", encoding="utf-8") as f:
                f.write(NEW_GO)
            time.sleep(INTERVAL)
            edited = time.perf_counter()
            await ask("search", "search_code", query="ZorblatFreshCounter")
            out["seconds"] = time.perf_counter() - edited + INTERVAL
            await ask("python", "search_code", query="quux_fresh_widget_total")
            (repo / "atomic.py").unlink()
            time.sleep(INTERVAL)
            await ask("deleted", "search_code", query="atomic_write", limit=200)
            await ask("deleted read", "read_code", path="atomic.py")
    out["stderr"] = errors.read_text(encoding="utf-8")
    return out


def test_before_the_edit_the_name_is_not_defined(served: dict[str, Any]) -> None:
    is_error, text = served["answers"]["before"]
    assert not is_error, text
    assert "no definition named quux_fresh_widget_total" in text
    assert "re-indexed" not in text  # nothing changed since esqlog index


def test_read_code_right_after_an_edit_returns_the_current_text(served: dict[str, Any]) -> None:
    is_error, text = served["answers"]["read"]
    assert not is_error, text
    note, _, body = text.partition("\n")
    assert note == "re-indexed 1 changed file"
    assert body == _lines((served["repo"] / "qlog.py").read_text(encoding="utf-8"))
    assert "quux_fresh_widget_total" in body


def test_a_new_go_function_is_found_at_rank_one_with_no_command(served: dict[str, Any]) -> None:
    is_error, text = served["answers"]["search"]
    assert not is_error, text
    lines = text.split("\n")
    assert lines[0] == "re-indexed 1 changed file"
    first = next(line for line in lines if line.startswith("1. "))
    assert first.startswith("1. go/builder.go:") and "ZorblatFreshCounter" in first, text
    print(f"edit to answer: {served['answers']['seconds']:.2f} s")


def test_the_python_function_is_ranked_first_and_nothing_is_reindexed_again(
    served: dict[str, Any],
) -> None:
    is_error, text = served["answers"]["python"]
    assert not is_error, text
    assert "re-indexed" not in text  # within the interval: no walk
    first = next(line for line in text.split("\n") if line.startswith("1. "))
    assert first.startswith("1. qlog.py:") and "quux_fresh_widget_total" in first, text


def test_a_deleted_files_hits_disappear(served: dict[str, Any]) -> None:
    is_error, text = served["answers"]["deleted"]
    assert not is_error, text
    assert text.startswith("re-indexed 1 changed file\n")
    assert "atomic.py" not in text
    is_error, text = served["answers"]["deleted read"]
    assert is_error and "atomic.py" in text, text


def test_the_calibration_is_kept_fresh(served: dict[str, Any]) -> None:
    """As esqlog index --calibrate leaves it: saved at the index's current count of
    writes (refreshed, or calibrated in full past keep_fresh's bound)."""
    from esqlog.calibration.files import load_calibration
    from esqlog.indexing.refresh import current_record, index_operations
    from esqlog.statistics.terms import resolve_index_plan

    assert served["calibration"].read_text(encoding="utf-8") != served["before"]
    engine, index = served["engine"], served["index"]
    uuid_now = engine.run(resolve_index_plan(index)).uuid
    assert (
        current_record(served["calibration"], uuid_now, index_operations(engine, index)) is not None
    )
    record = load_calibration(served["calibration"])
    assert record.live_docs == int(call(engine, "GET", f"/{index}/_count")["count"])
    assert "Traceback" not in served["answers"]["stderr"]


def test_no_watch_leaves_the_index_as_it_is(served: dict[str, Any]) -> None:
    is_error, text = served["answers"]["unwatched"]
    assert not is_error, text
    assert text.startswith("no definition named plonk_unwatched_helper"), text


def test_the_search_ranks_with_the_refreshed_calibration(served: dict[str, Any]) -> None:
    """In-process: after a re-index the search's calibration is the file as refreshed, not
    the one the server started with."""
    from esqlog.agent.code_search import CodeSearch
    from esqlog.agent.tokens import default_counter
    from esqlog.calibration.files import load_calibration
    from esqlog.cli.mcp_fresh import Reindex
    from esqlog.engine.connection import ConnectionSettings

    engine, index, file = served["engine"], served["index"], served["calibration"]
    search = CodeSearch(engine, load_calibration(file), index, "content", default_counter())
    started = search.calibration.index_operations
    reindex = Reindex(engine, ConnectionSettings(ENGINE_URLS["opensearch"]), index, search, file)
    assert reindex(served["repo"]) == 1  # the edit the --no-watch server left unseen
    assert reindex(served["repo"]) == 0
    started = search.calibration.index_operations
    with (served["repo"] / "qlog.py").open("a", encoding="utf-8") as f:
        f.write("\n\ndef snorkel_refreshed_probe():\n    return 5\n")
    assert reindex(served["repo"]) == 1
    assert search.calibration.index_operations != started
    assert search.calibration == load_calibration(file)
    assert "snorkel_refreshed_probe" in search.search("snorkel_refreshed_probe").split("\n")[1]
