"""Markdown tables of scripts/bench/identifiers.py results (BENCHMARKS.md section 7).

    python scripts/bench/identifiers_report.py results/identifiers.jsonl
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

COLUMNS = ["standard native", "standard q-log", "code native", "code q-log",
           "identifiers", "identifiers all spans b=1000", "identifiers q=0.8", "rescore@100"]


def cell(entry: dict[str, float] | None) -> str:
    if entry is None:
        return "—"
    low, high = entry["ci"]
    return f"{entry['ndcg10']:.3f} [{low:.3f}, {high:.3f}]"


def main() -> int:
    rows = [json.loads(line) for path in sys.argv[1:]
            for line in Path(path).read_text(encoding="utf-8").splitlines()
            if line.strip()]
    print("| corpus | size | queries | split q | " + " | ".join(COLUMNS)
          + " | identifiers − code native [95% CI] | all spans − code native |")
    print("|---|---|---|---|" + "---|" * (len(COLUMNS) + 2))
    for r in rows:
        systems = r["systems"]
        deltas = []
        for name in ("identifiers", "identifiers all spans b=1000"):
            diff = systems.get(name, {}).get("vs code native")
            deltas.append(f"{diff[0]:+.3f} [{diff[1]:+.3f}, {diff[2]:+.3f}]" if diff else "—")
        delta = " | ".join(deltas)
        print(f"| {r['corpus']} | {r['docs']:,} | {r['queries']} ({r['n_queries']}) | "
              f"{r['split_q']:.3f} | " + " | ".join(cell(systems.get(c)) for c in COLUMNS)
              + f" | {delta} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
