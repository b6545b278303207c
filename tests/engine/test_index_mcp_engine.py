"""``esqlog index --calibrate`` then ``esqlog mcp`` on that index, through the official MCP
SDK's client over stdio, on both real engines: the agent finds a function by what its doc
comment says (the default listing names it as path:start-end Class.method with its
signature and doc line), and read_code gives back the files on disk exactly, line for line,
each line with its number."""

from __future__ import annotations

import json
import os
import re
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from esqlog.agent.reading import numbered
from esqlog.agent.tokens import default_counter
from esqlog.cli import main
from esqlog.engine.client import Engine
from esqlog.indexing.bulk import doc_id
from tests.support.engines import ENGINE_URLS, call
from tests.support.repos import make_repo

anyio = pytest.importorskip("anyio")
pytest.importorskip("mcp")

ENTRY = re.compile(r"^1\. (\S+):(\d+)-(\d+)(?: (\S+))?\n   (.*)$", re.M)
QUERY = "appends the UTF-8 encoding of Unicode code point"
# a form feed mid-file (CPython's sources have them): line numbers must not shift after it
FORM_FEED = "import os\n\x0c\n\ndef after_the_form_feed():\n    return os.sep\n"


@pytest.fixture(scope="module")
def served(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    repo = make_repo(tmp_path_factory.mktemp("mcp-repo") / "repo")
    (repo / "pages.py").write_text(FORM_FEED, encoding="utf-8")
    index = f"esqlog-test-{uuid.uuid4().hex[:10]}"
    calibration = repo.parent / "code.qlog.json"
    try:
        result = CliRunner().invoke(
            main,
            [
                "index",
                str(repo),
                "--url",
                ENGINE_URLS[engine.flavor],
                "--index",
                index,
                "--calibrate",
                str(calibration),
                "--json",
            ],
        )
        assert result.exit_code == 0, result.output
        answers = anyio.run(_conversation, engine, index, calibration)
        yield {"answers": answers, "repo": repo, "summary": json.loads(result.stdout)}
    finally:
        call(engine, "DELETE", f"/{index}", ignore_unavailable="true")


async def _conversation(engine: Engine, index: str, calibration: Path) -> dict[str, Any]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    command = str(Path(sys.executable).with_name("esqlog"))
    # this checkout's esqlog, not whichever the script's interpreter would import
    env = {k: v for k, v in os.environ.items() if not k.startswith("ESQLOG_")}
    env["PYTHONPATH"] = os.pathsep.join(
        [str(Path(__file__).resolve().parents[2]), env.get("PYTHONPATH", "")]
    )
    params = StdioServerParameters(
        command=command,
        env=env,
        args=[
            "mcp",
            "--url",
            ENGINE_URLS[engine.flavor],
            "--index",
            index,
            "--calibration",
            str(calibration),
        ],
    )
    calls: dict[str, tuple[str, dict[str, Any]]] = {
        "search": ("search_code", {"query": QUERY, "max_tokens": 1000}),
        "file": ("read_code", {"path": "go/builder.go"}),
        "python lines": ("read_code", {"path": "qlog.py", "start_line": 40, "end_line": 60}),
        "form feed": ("read_code", {"path": "pages.py"}),
        "chunk": ("read_code", {"id": doc_id("go/builder.go", 3)}),
    }
    out: dict[str, Any] = {}
    errors = calibration.with_name("mcp.stderr")
    with errors.open("w", encoding="utf-8") as errlog:
        async with (
            stdio_client(params, errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            out["description"] = (await session.initialize()).server_info.description
            for key, (tool, arguments) in calls.items():
                result = await session.call_tool(tool, arguments)
                out[key] = (
                    bool(result.is_error),
                    "".join(getattr(c, "text", "") for c in result.content),
                )
    out["stderr"] = errors.read_text(encoding="utf-8")
    return out


def test_the_default_mode_is_chosen_from_the_calibration_and_said(served: dict[str, Any]) -> None:
    from esqlog.calibration.files import load_calibration
    from esqlog.identifiers.calibrate import auto_mode

    calibration = load_calibration(served["repo"].parent / "code.qlog.json")
    assert calibration.identifiers_applies is not None  # index --calibrate wrote the statistics
    chosen, _ = auto_mode(calibration)
    # said as the server's description, not on stderr (which Claude Code logs as errors)
    assert served["answers"]["description"].startswith(f"mode {chosen}: ")
    assert served["answers"]["stderr"] == ""


def test_search_finds_the_function_by_its_doc_comment(served: dict[str, Any]) -> None:
    is_error, text = served["answers"]["search"]
    assert not is_error, text
    first = ENTRY.search(text)
    assert first is not None, text
    # the line that matched with its number (the doc comment), and no signature beside it
    assert first.groups() == (
        "go/builder.go",
        "15",
        "21",
        "Builder.WriteRune",
        "15| // WriteRune appends the UTF-8 encoding of Unicode code point r.",
    )
    assert default_counter().count(text) <= 1000


def test_read_code_gives_the_files_back_exactly(served: dict[str, Any]) -> None:
    repo: Path = served["repo"]
    answers = served["answers"]

    def lines(text: str, first: int = 1, last: int | None = None) -> str:
        rows = list(enumerate(text.rstrip("\n").split("\n"), start=1))
        return numbered(rows[first - 1 : last])

    builder = (repo / "go" / "builder.go").read_text(encoding="utf-8")
    assert answers["file"] == (False, lines(builder))
    python = (repo / "qlog.py").read_text(encoding="utf-8")
    assert answers["python lines"] == (False, lines(python, 40, 60))
    assert answers["python lines"][1].split("\n")[2].startswith("42\tdef rsj_odds(")
    assert answers["form feed"] == (False, lines(FORM_FEED))
    assert answers["chunk"] == (False, lines(builder, 15, 21))  # Builder.WriteRune
