"""Markdown tables of scripts/bench/identifiers.py results (docs/benchmarks/identifiers.md).

    python -m scripts.bench.identifiers_report results/identifiers.jsonl

Columns: the baselines, then every identifiers variant the runs hold (in first-seen order),
then each variant's paired difference against the code reindex (native).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scripts.bench.harness import read_rows

BASELINES = ["standard native", "standard q-log", "code native", "code q-log"]


def cell(entry: dict[str, float] | None) -> str:
    if entry is None:
        return "—"
    low, high = entry["ci"]
    return f"{entry['ndcg10']:.3f} [{low:.3f}, {high:.3f}]"


def delta(entry: dict[str, list[float]] | None) -> str:
    diff = (entry or {}).get("vs code native")
    return f"{diff[0]:+.3f} [{diff[1]:+.3f}, {diff[2]:+.3f}]" if diff else "—"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="*", type=Path, help="identifiers.py's JSONL files")
    rows = read_rows(*parser.parse_args().results)
    variants = list(
        dict.fromkeys(name for r in rows for name in r["systems"] if name not in BASELINES)
    )
    columns = BASELINES + variants
    print(
        "| corpus | size | shards | queries | split q | "
        + " | ".join(columns)
        + " | "
        + " | ".join(f"{v} − code native [95% CI]" for v in variants)
        + " |"
    )
    print("|---|---|---|---|---|" + "---|" * (len(columns) + len(variants)))
    for r in rows:
        systems = r["systems"]
        print(
            f"| {r['corpus']} | {r['docs']:,} | {r.get('shards', 1)} | "
            f"{r['queries']} ({r['n_queries']}) | "
            f"{r['split_q']:.3f} | "
            + " | ".join(cell(systems.get(c)) for c in columns)
            + " | "
            + " | ".join(delta(systems.get(v)) for v in variants)
            + " |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
