"""Freshness after an edit: ``esqlog index --calibrate`` on a real repository, one file
edited, the rerun's wall time, and the rank at which ``search_code`` (the MCP tool's own
code path, default arguments, the mode ``esqlog mcp --mode auto`` picks) lists the new and
the renamed function when asked for their exact names.

    python -m scripts.bench.index_fresh --url http://127.0.0.1:19200 \\
        [--path /usr/share/go-1.19/src] [--file net/http/transport.go] [--repeat 3]

Copies PATH to a temp folder (default: the Go 1.19 tree Debian ships in golang-1.19-src,
~8,200 files), runs ``esqlog index --calibrate`` as a user does (a subprocess of the CLI),
then per repeat: renames the longest function of FILE to a new name (every occurrence in
that file), appends a new documented function, reruns the same command and asks for both
names. The index is created by ``esqlog index`` (its marker) and deleted at the end; the
1-minute load average is printed beside each wall time (the machine is shared).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from esqlog.agent.code_search import CodeSearch
from esqlog.agent.tokens import default_counter
from esqlog.calibration.files import load_calibration
from esqlog.identifiers.calibrate import auto_mode
from esqlog.indexing.target import delete_indexed
from scripts.bench.harness import add_url, engine_at

FUNC = re.compile(r"^func (?:\([^)]*\) )?([A-Za-z_]\w*)\(", re.M)
NEW_NAMES = [
    ("dialConnWithProxyBackoff", "reticulateIdleConnPool"),
    ("waitForResponseHeaderBudget", "drainPendingRequestQueue"),
    ("probeAltProtocolUpgrade", "recycleBrokenPersistConn"),
]


def longest_function(text: str) -> tuple[str, int]:
    """The name and line count of the longest top-level function of a Go file (its start
    to the next top-level ``}`` line)."""
    lines = text.split("\n")
    best, best_len = "", 0
    for match in FUNC.finditer(text):
        start = text.count("\n", 0, match.start())
        end = next((i for i in range(start, len(lines)) if lines[i] == "}"), start)
        if end - start + 1 > best_len:
            best, best_len = match.group(1), end - start + 1
    return best, best_len


def index_once(url: str, tree: Path, index: str, calibration: Path) -> tuple[float, str]:
    """One ``esqlog index --calibrate`` as a user runs it: wall seconds and its last line."""
    load = os.getloadavg()[0]
    start = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "esqlog.cli",
            "index",
            str(tree),
            "--url",
            url,
            "--index",
            index,
            "--calibrate",
            str(calibration),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"esqlog index failed: {done.stderr.strip()[-400:]}")
    last = (done.stdout.strip() or done.stderr.strip()).splitlines()[-1:]
    return seconds, f"{seconds:6.1f} s at load {load:4.1f}: {' '.join(last)[:160]}"


def rank_of(url: str, index: str, calibration: Path, name: str, path: str) -> int:
    """The 1-based position of ``path``'s function ``name`` in search_code's default
    listing for the query ``name`` (0 when it is not listed)."""
    record = load_calibration(calibration)
    mode = auto_mode(record)[0]
    engine = engine_at(url)
    search = CodeSearch(engine, record, index, record.field, default_counter(), url, mode=mode)
    entries = [line for line in search.search(name).splitlines() if re.match(r"^\d+\. ", line)]
    for position, entry in enumerate(entries, start=1):
        if path in entry and name in entry:
            if position > 1:
                print("    above it: " + " | ".join(entries[: position - 1]))
            return position
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_url(parser, required=True)
    parser.add_argument("--path", default="/usr/share/go-1.19/src")
    parser.add_argument("--file", default="net/http/transport.go")
    parser.add_argument("--index", default="esqlog-bench-fresh-go")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="esqlog-fresh-"))
    tree, calibration = work / "src", work / "cal" / "code.qlog.json"
    shutil.copytree(args.path, tree, symlinks=True)
    files = sum(1 for p in tree.rglob("*") if p.is_file())
    engine = engine_at(args.url)
    delete_indexed(engine, args.index)
    try:
        _, line = index_once(args.url, tree, args.index, calibration)
        print(f"tree {args.path}: {files:,} files\nfirst run  {line}")
        _, line = index_once(args.url, tree, args.index, calibration)
        print(f"no change  {line}")
        mode = auto_mode(load_calibration(calibration))[0]
        print(f"search_code mode (auto): {mode}")
        for new_name, renamed in NEW_NAMES[: args.repeat]:
            edited = tree / args.file
            text = edited.read_text(encoding="utf-8")
            old, length = longest_function(text)
            text = re.sub(rf"\b{old}\b", renamed, text)
            text += (
                f"\n// {new_name} waits before the next dial attempt.\n"
                f"func {new_name}(attempt int) time.Duration {{\n"
                "\treturn time.Duration(attempt) * time.Second\n}\n"
            )
            edited.write_text(text, encoding="utf-8")
            _, line = index_once(args.url, tree, args.index, calibration)
            print(f"edit       {line}")
            new_rank = rank_of(args.url, args.index, calibration, new_name, args.file)
            renamed_rank = rank_of(args.url, args.index, calibration, renamed, args.file)
            print(
                f"  new {new_name}: rank {new_rank}; renamed {old} ({length} lines) -> "
                f"{renamed}: rank {renamed_rank}"
            )
    finally:
        delete_indexed(engine, args.index)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
