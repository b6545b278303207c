"""Whether search_code shows the line that holds quoted text: the agent-query benchmark's
error and doc-sentence queries, each hit's shown lines read against the files.

    python -m scripts.bench.agent_quoted_lines --url http://127.0.0.1:19200 \
        --trees /tmp/aq/trees --calibrations /tmp/aq/cal \
        --results data/agent-queries/results.jsonl

Run after scripts/bench/agent_queries.py, on its indices (``--index-prefix``), trees and
per-query records. Each error and how query is asked as ``esqlog mcp`` asks it (CodeSearch,
the calibration's auto mode, defaults), twice in one run: with the line choice as shipped
and with the most-words rule alone (esqlog.agent.matching.quoted_lines answering nothing).
For every listed hit whose lines in the file hold the query's text (the quotation rule of
esqlog.agent.quoted), the hit counts as shown when one of its numbered lines holds the
quotation, or its first three words (a quotation over several lines). Printed per style:
shown / hits holding the text, for each side.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

ENTRY = re.compile(r"^\d+\. (\S+):(\d+)-(\d+)")
SHOWN = re.compile(r"^   (\d+)\| ")
STYLES = ("error", "how")


def _entries(answer: str) -> list[tuple[str, int, int, list[int]]]:
    out: list[tuple[str, int, int, list[int]]] = []
    for line in answer.split("\n"):
        if m := ENTRY.match(line):
            out.append((m[1], int(m[2]), int(m[3]), []))
        elif (m := SHOWN.match(line)) and out:
            out[-1][3].append(int(m[1]))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:19200")
    parser.add_argument("--trees", type=Path, required=True)
    parser.add_argument("--calibrations", type=Path, required=True)
    parser.add_argument("--results", type=Path, default=Path("data/agent-queries/results.jsonl"))
    parser.add_argument("--index-prefix", default="esqlog-aq-")
    args = parser.parse_args()

    from esqlog.agent import matching
    from esqlog.agent.code_search import CodeSearch
    from esqlog.agent.quoted import quotation
    from esqlog.agent.tokens import default_counter
    from esqlog.cli.query import load_for_field
    from esqlog.cli.shared_options import open_engine
    from esqlog.engine.connection import ConnectionSettings
    from esqlog.identifiers.calibrate import auto_mode

    rows = [json.loads(line) for line in args.results.read_text().splitlines() if line]
    engine = open_engine(ConnectionSettings(args.url))
    tools: dict[str, CodeSearch] = {}
    shipped = matching.quoted_lines
    sides = {"most words": lambda chunk, query: [], "shipped": shipped}
    for style in STYLES:
        tally = {side: [0, 0] for side in sides}
        for row in (r for r in rows if r["style"] == style):
            repo = row["repo"]
            if repo not in tools:
                cal, field = load_for_field(args.calibrations / f"{repo}.json", None)
                index = f"{args.index_prefix}{repo}"
                counter = default_counter()
                tools[repo] = CodeSearch(engine, cal, index, field, counter, mode=auto_mode(cal)[0])
            whole = quotation(row["query"])
            head = quotation(" ".join(re.findall(r"[A-Za-z0-9]+", row["query"])[:3]))
            if whole is None or head is None:
                continue
            for side, choice in sides.items():
                matching.quoted_lines = choice  # type: ignore[assignment]
                try:
                    answer = tools[repo].search(row["query"])
                finally:
                    matching.quoted_lines = shipped
                for path, start, end, numbers in _entries(answer):
                    text = (args.trees / repo / path).read_text(errors="replace").split("\n")
                    if not whole.search("\n".join(text[start - 1 : end])):
                        continue
                    shown = "\n".join(text[n - 1] for n in numbers)
                    tally[side][1] += 1
                    tally[side][0] += bool(whole.search(shown) or head.search(shown))
        print(style, "; ".join(f"{side}: {a} / {b}" for side, (a, b) in tally.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
