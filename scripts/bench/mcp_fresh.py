"""How long an already-running ``esqlog mcp`` takes to answer a search right after a one-file
edit (it walks the folder, re-indexes the file, refreshes the calibration and searches),
against the same search when nothing changed.

A copy of REPO (never the repository itself) is indexed with ``esqlog index --calibrate``
into a fresh index; ``esqlog mcp`` is started on it over stdio (the ``mcp`` SDK's client).
Each round appends a new function to one file, waits out the folder-walk interval, and
times search_code for the new name (which must be rank 1), then times the same search
again with nothing changed. The index and the copy are deleted at the end.

    python -m scripts.bench.mcp_fresh /tmp/an/gin-gonic+gin --file gin.go \\
        --url http://127.0.0.1:19200 --rounds 5
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import anyio

from esqlog.agent.freshness import INTERVAL
from scripts.bench.harness import add_url

GO = "\nfunc FreshBench{n}Probe(x int) int {{\n\treturn x + {n}\n}}\n"
PY = "\n\ndef fresh_bench_{n}_probe(x):\n    return x + {n}\n"


async def rounds(
    url: str, index: str, calibration: Path, edited: Path, count: int
) -> list[tuple[float, float]]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    command = str(Path(sys.executable).with_name("esqlog"))
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    params = StdioServerParameters(
        command=command,
        env=env,
        args=["mcp", "--url", url, "--index", index, "--calibration", str(calibration)],
    )
    out: list[tuple[float, float]] = []
    template = GO if edited.suffix == ".go" else PY
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.call_tool("search_code", {"query": "warm up"})
        for n in range(count):
            with edited.open("a", encoding="utf-8") as f:
                f.write(template.format(n=n))
            time.sleep(INTERVAL)
            name = f"FreshBench{n}Probe" if edited.suffix == ".go" else f"fresh_bench_{n}_probe"
            started = time.perf_counter()
            result = await session.call_tool("search_code", {"query": name})
            changed = time.perf_counter() - started
            text = "".join(getattr(c, "text", "") for c in result.content)
            first = next(line for line in text.split("\n") if line.startswith("1. "))
            assert name in first and text.startswith("re-indexed 1 changed file"), text
            time.sleep(INTERVAL)
            started = time.perf_counter()
            await session.call_tool("search_code", {"query": name})
            out.append((changed, time.perf_counter() - started))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("--file", required=True, help="the file to edit, relative to REPO")
    add_url(parser)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    index = f"esqlog-bench-fresh-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "repo"
        shutil.copytree(args.repo, copy, symlinks=True)
        calibration = Path(tmp) / "code.qlog.json"
        esqlog = str(Path(sys.executable).with_name("esqlog"))
        try:
            subprocess.run(
                [
                    esqlog,
                    "index",
                    str(copy),
                    "--url",
                    args.url,
                    "--index",
                    index,
                    "--calibrate",
                    str(calibration),
                ],
                check=True,
                stdout=subprocess.DEVNULL,
            )
            timed = anyio.run(rounds, args.url, index, calibration, copy / args.file, args.rounds)
        finally:
            subprocess.run(
                ["curl", "-s", "-XDELETE", f"{args.url}/{index}"],
                stdout=subprocess.DEVNULL,
                check=False,
            )
    edit = statistics.median(t for t, _ in timed)
    still = statistics.median(t for _, t in timed)
    print(f"{args.repo.name}: {args.file} edited, {args.rounds} rounds (median s)")
    print(f"  search after the edit (re-index + search) {edit:.3f}")
    print(f"  search, nothing changed (walk + search)   {still:.3f}")
    print(f"  ratio                                     {edit / still:.1f}x")


if __name__ == "__main__":
    main()
