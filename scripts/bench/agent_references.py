"""find_references and grep_code against ripgrep on the same files: are the lines the same?

    pip install ripgrep   # the rg binary, if it is not on PATH
    python -m scripts.bench.agent_references --url http://127.0.0.1:19200

Each folder of tests/data/agent-names (real files of encode/httpx and gin-gonic/gin; or
``--repo NAME=PATH`` checkouts with ``--symbols NAME=a,b,c``) is indexed with
``esqlog index`` into a scratch index (deleted after). For each symbol, find_references'
lines (path, line) are compared with ``rg -w -n SYMBOL`` run on exactly the files the
index holds; for each pattern, grep_code's with ``rg -n`` (``-F`` for a literal). The tool's
answer shows at most MAX_LIMIT lines and counts the rest: its count (shown + rest) is
printed beside rg's, and the whole set of lines it finds (the same candidates and checks,
uncut) is compared with rg's: lines both find, lines only one finds, recall of rg's lines;
then the answer's tokens (o200k_base; at most MAX_LIMIT lines) and those of rg's output.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

from esqlog.agent.code_search import CodeSearch
from esqlog.agent.grep import Grep, candidate_query, compile_pattern, grep_hits
from esqlog.agent.line_scan import MAX_LIMIT, TextScan, identifier_terms
from esqlog.agent.references import References, reference_hits, reference_name
from esqlog.agent.tokens import default_counter
from esqlog.engine.connection import ConnectionSettings, connect
from esqlog.engine.paths import index_path
from esqlog.engine.steps import Request
from scripts.bench.harness import indexed_repo

DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "agent-names"
SYMBOLS = {
    "httpx": [
        "Client",
        "AsyncClient",
        "Response",
        "Request",
        "Timeout",
        "get",
        "send",
        "BaseClient",
        "USE_CLIENT_DEFAULT",
        "Headers",
    ],
    "gin": [
        "Context",
        "Next",
        "ClientIP",
        "ServeHTTP",
        "Default",
        "Engine",
        "Validator",
        "binding",
        "HandlerFunc",
        "Abort",
    ],
}
#: (pattern, regex?) per repository
PATTERNS = {
    "httpx": [("self._transport", False), (r"def \w+_timeout\(", True), (r"\d{3}", True)],
    "gin": [("c.Next()", False), (r"http\.Status\w+", True), (r"[{}]$", True)],
}
LINE = re.compile(r"^(\S+?):(\d+): ")
REST = re.compile(r"^(\d+) more ")


def listed(answer: str) -> tuple[set[tuple[str, int]], int]:
    """(path, line) of the lines shown, and how many more the answer counts."""
    lines = {
        (m.group(1), int(m.group(2))) for line in answer.splitlines() if (m := LINE.match(line))
    }
    rest = next((int(m.group(1)) for line in answer.splitlines() if (m := REST.match(line))), 0)
    return lines, rest


def ripgrep(
    rg: str, root: Path, files: list[str], args: list[str]
) -> tuple[set[tuple[str, int]], str]:
    """(path, line) of rg's lines, and its output as an agent reads it."""
    out = subprocess.run(
        [rg, "--no-config", "-n", "-H", "--no-heading", *args, "--", *files],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    found = set()
    for line in out.splitlines():
        path, number, _ = line.split(":", 2)
        found.add((path, int(number)))
    return found, out


def indexed_files(engine: object, index: str) -> list[str]:
    found = engine.perform(
        Request(
            "POST",
            index_path(index, "_search"),
            body={  # type: ignore[attr-defined]
                "size": 0,
                "aggs": {"paths": {"terms": {"field": "path", "size": 10_000}}},
            },
        )
    )
    return sorted(b["key"] for b in found["aggregations"]["paths"]["buckets"])


def every_reference(tool: CodeSearch, symbol: str) -> set[tuple[str, int]]:
    """All the lines find_references finds (what its answer shows MAX_LIMIT of): the same
    candidates and verification, without the cut."""
    wanted = reference_name(symbol)
    scan = TextScan(tool)
    candidates, _ = scan.candidates(identifier_terms(wanted.name), None)
    return {(h.where, h.line) for h in reference_hits(candidates, wanted)}


def every_line(tool: CodeSearch, pattern: str, regex: bool) -> set[tuple[str, int]]:
    """All the lines grep_code finds, without the cut."""
    candidates, _ = TextScan(tool).candidates(candidate_query(pattern, regex), None)
    return {(h.where, h.line) for h in grep_hits(candidates, compile_pattern(pattern, regex))}


def row(label: str, counted: int, ours: set[tuple[str, int]], theirs: set[tuple[str, int]]) -> str:
    """The answer's count (shown + the rest counted), rg's; lines both find, each alone;
    recall of rg's lines."""
    both = len(ours & theirs)
    recall = both / len(theirs) if theirs else 1.0
    return (
        f"{label:34} {counted:>7} {len(theirs):>5} {both:>5} "
        f"{len(ours - theirs):>6} {len(theirs - ours):>5} {recall:>7.3f}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:19200")
    parser.add_argument("--repo", action="append", default=[], metavar="NAME=PATH")
    parser.add_argument("--symbols", action="append", default=[], metavar="NAME=a,b,c")
    args = parser.parse_args()
    rg = str(Path(shutil.which("rg") or Path(sys.executable).parent / "rg").resolve())
    if not Path(rg).exists():
        print("rg not found: pip install ripgrep (or put rg on PATH)", file=sys.stderr)
        return 1
    repos = dict(spec.split("=", 1) for spec in args.repo) or {
        name: str(DATA / name) for name in SYMBOLS
    }
    symbols = {**SYMBOLS, **{k: v.split(",") for k, v in (s.split("=", 1) for s in args.symbols)}}
    engine = connect(ConnectionSettings(args.url))
    counter = default_counter()
    print(
        f"{'repository: query':34} {'esqlog':>7} {'rg':>5} {'both':>5} {'esqlog-only':>6} "
        f"{'rg-only':>5} {'recall':>7} {'tokens':>7} {'rg tok':>7}"
    )
    total_rg = total_both = counts_equal = rows = 0
    for name, path in repos.items():
        with indexed_repo(engine, args.url, path, "esqlog-bench-refs") as (index, cal, field):
            tool = CodeSearch(engine, cal, index, field, counter)
            files = indexed_files(engine, index)
            queries = [
                (
                    s,
                    ["-w", "-e", s],
                    References(tool).find(s, limit=MAX_LIMIT),
                    every_reference(tool, s),
                )
                for s in symbols.get(name, [])
            ]
            queries += [
                (
                    f"grep {p}",
                    ["-e", p] if rx else ["-F", "-e", p],
                    Grep(tool).grep(p, rx, limit=MAX_LIMIT),
                    every_line(tool, p, rx),
                )
                for p, rx in PATTERNS.get(name, [])
            ]
            for label, rg_args, answer, every in queries:
                shown, rest = listed(answer)
                theirs, output = ripgrep(rg, Path(path), files, rg_args)
                assert shown <= every, label  # the answer shows lines of the full set
                total_rg += len(theirs)
                total_both += len(every & theirs)
                counts_equal += len(shown) + rest == len(theirs)
                rows += 1
                tokens = f"{counter.count(answer):>7} {counter.count(output):>7}"
                print(row(f"{name}: {label}", len(shown) + rest, every, theirs), tokens)
    print(
        f"all: {total_both} of rg's {total_rg} lines found (recall "
        f"{total_both / max(total_rg, 1):.3f}); counts equal to rg's for {counts_equal} of "
        f"{rows} queries"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
