"""One search_code answer exactly as a coding agent receives it, with what it costs.

    .venv/bin/python scripts/agent_demo.py --url http://127.0.0.1:19200 [--folder esqlog]

Indexes FOLDER (this repository's own package by default) with ``esqlog index --calibrate``
into ``esqlog-demo-code-<8 hex of the folder's path>`` (one index per folder: esqlog index
refuses to replace another folder's documents; a rerun updates it), starts ``esqlog mcp``
on it over stdio with the official MCP SDK's client (as Claude Code, Codex CLI or Cursor
start it), asks
``search_code`` one question with default arguments, and prints the tool result as the
client received it: its text, its token count (o200k_base), and the size of everything the
result carried (a structured copy would show here). ``bash scripts/demo.sh`` runs it after
``esqlog demo``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INDEX_PREFIX = "esqlog-demo-code-"
QUESTION = "where is an index name checked before it is put into a request path"


def esqlog(*args: str) -> list[str]:
    """The esqlog command of this interpreter's environment."""
    return [
        sys.executable,
        "-c",
        "import sys; from esqlog.cli import main; sys.exit(main(prog_name='esqlog'))",
        *args,
    ]


def index_for(folder: str) -> str:
    """The demo's index for FOLDER: one per folder, named by its absolute path's hash."""
    return INDEX_PREFIX + hashlib.sha1(os.path.abspath(folder).encode()).hexdigest()[:8]


async def ask(url: str, index: str, calibration: Path, question: str) -> tuple[str, int, bool]:
    """search_code's text as the client received it, the JSON size of the whole result, and
    whether it also carried a structured copy."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    command, *args = esqlog(
        "mcp", "--url", url, "--index", index, "--calibration", str(calibration)
    )
    params = StdioServerParameters(command=command, args=args)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        result = await session.call_tool("search_code", {"query": question})
    text = "".join(getattr(part, "text", "") for part in result.content)
    size = len(json.dumps(result.model_dump(mode="json", exclude_none=True)))
    return text, size, result.structured_content is not None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--folder", default=str(ROOT / "esqlog"))
    parser.add_argument("--question", default=QUESTION)
    args = parser.parse_args()
    try:
        import anyio

        from esqlog.agent.tokens import default_counter
    except ImportError:
        print(
            "[agent demo] skipped: needs the mcp extra (pip install 'esqlog[mcp,index]')",
            file=sys.stderr,
        )
        return 0
    with tempfile.TemporaryDirectory(prefix="esqlog-agent-demo-") as folder:
        calibration = Path(folder) / "code.qlog.json"
        index = index_for(args.folder)
        indexed = subprocess.run(
            esqlog(
                "index",
                args.folder,
                "--url",
                args.url,
                "--index",
                index,
                "--calibrate",
                str(calibration),
                "--no-progress",
            ),
            stdout=subprocess.DEVNULL,
            check=False,
        )
        if indexed.returncode != 0:  # esqlog index said why, in one line
            return indexed.returncode
        text, size, structured = anyio.run(ask, args.url, index, calibration, args.question)
    counter = default_counter()
    print(f"\nAn agent asks search_code: {args.question!r}\n")
    print(text)
    copy = "with a structured copy of it" if structured else "with no structured copy of it"
    print(
        f"\nThat answer is {counter.count(text):,} tokens ({counter.name}); the whole tool "
        f"result as sent is {size:,} bytes of JSON, {copy}."
    )
    print(
        f"(index {index} holds {args.folder}; esqlog mcp serves it to Claude Code, Codex or "
        "Cursor: docs/agents.md)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
