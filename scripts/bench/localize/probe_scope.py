"""Where a task's changed function ranks in search_code listings with and without test code.

For each given task the tree at its parent is written, indexed fresh into its own index
(``esqlog-localize-probe-<repo>``, deleted at the end) with ``esqlog index --calibrate``, and
``esqlog mcp`` (mode auto, as the shipped defaults) answers the commit message four ways:
the default listing (20 hits within 2,000 tokens), the same with ``tests="exclude"``, and
both deeper (``limit=50``, ``max_tokens=8000``). Printed per task and listing: the rank of
the first hit overlapping a changed function and the listing tokens up to the end of its
entry, and how many of the first 20 hits are test files.

    PYTHONPATH=$PWD python -m scripts.bench.localize.probe_scope \\
        --gitdir gson=/work/.mirror/google+gson/repo gson-710a76c8b8 gson-6fc1c8f7f1
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from scripts.bench.harness import add_url
from scripts.bench.localize import run as R  # the benchmark's own tree, index and parsing helpers

LISTINGS: list[tuple[str, dict[str, Any]]] = [
    ("default", {}),
    ("no-tests", {"tests": "exclude"}),
    ("deep", {"limit": 50, "max_tokens": 8000}),
    ("deep-no-tests", {"limit": 50, "max_tokens": 8000, "tests": "exclude"}),
]


def is_test(path: str) -> bool:
    parts = path.lower().split("/")
    name = parts[-1]
    return (
        any("test" in p for p in parts[:-1])
        or name.endswith("_test.go")
        or name.startswith("test_")
        or name == "conftest.py"
        or name.endswith("test.java")
    )


async def listings(url: str, index: str, calibration: Path, query: str) -> dict[str, str]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    exe = str(Path(sys.executable).with_name("esqlog"))
    params = StdioServerParameters(
        command=exe,
        args=["mcp", "--url", url, "--index", index, "--calibration", str(calibration)],
        env=dict(os.environ),
    )
    out = {}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for name, extra in LISTINGS:
            res = await session.call_tool("search_code", {"query": query, **extra})
            out[name] = R.tool_text(res)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("task_ids", nargs="+")
    ap.add_argument("--tasks", default="data/localize/tasks.jsonl")
    ap.add_argument("--gitdir", action="append", required=True, help="REPO=GITDIR")
    add_url(ap)
    ap.add_argument(
        "--work", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "esqlog-localize-probe")
    )
    ap.add_argument("--save", default="", help="folder for the listings' text")
    args = ap.parse_args()
    gitdirs = dict(g.split("=", 1) for g in args.gitdir)
    tasks = {
        t["task_id"]: t
        for t in (json.loads(ln) for ln in Path(args.tasks).read_text().splitlines() if ln)
    }
    chosen = sorted((tasks[i] for i in args.task_ids), key=lambda t: (t["repo"], t["time"]))
    work = Path(args.work)
    trees: dict[str, R.Tree] = {}
    for t in chosen:
        repo = t["repo"]
        index = f"esqlog-localize-probe-{repo}"
        if repo not in trees:
            trees[repo] = R.Tree(gitdirs[repo], work / "trees" / repo)
        trees[repo].move(t["parent"])
        cal = work / f"{repo}.json"
        R.clean_calibration(cal)
        R.delete_index(args.url, index)
        R.esqlog_cli(
            "index",
            str(trees[repo].path),
            "--url",
            args.url,
            "--index",
            index,
            "--calibrate",
            str(cal),
        )
        texts = asyncio.run(listings(args.url, index, cal, t["message"]))
        cells = [t["task_id"]]
        for name, text in texts.items():
            if args.save:
                Path(args.save).mkdir(parents=True, exist_ok=True)
                (Path(args.save) / f"{t['task_id']}.{name}.txt").write_text(text)
            hits = R.parse_hits(text)
            gold = next(
                (
                    (h.rank, R.count(text[: h.end_offset]))
                    for h in hits
                    if R.in_gold(t["gold"], h.path, h.start, h.end)
                ),
                None,
            )
            tests = sum(1 for h in hits[:20] if is_test(h.path))
            cells.append(
                f"{name}: gold rank/tokens {gold or '-'}, tests in top 20 "
                f"{tests}/{min(20, len(hits))}"
            )
        print(" | ".join(cells), flush=True)
    for repo in trees:
        R.delete_index(args.url, f"esqlog-localize-probe-{repo}")


if __name__ == "__main__":
    main()
