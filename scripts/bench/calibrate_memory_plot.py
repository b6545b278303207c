"""Plot calibrate_memory.py's runs: peak RSS and time against the documents indexed.

    python -m scripts.bench.calibrate_memory_plot docs/data/calibrate_memory.jsonl \
        docs/plots/calibrate-memory.png

Two panels, one idea each: peak memory of the process tree (left), wall time (right), for
``--vocabulary`` alone, ``--vocabulary --identifiers`` before the bounded implementation,
bounded with its terms as Python objects, bounded with its terms as arrays (a run's
``tables`` field, "arrays", added when its lines were appended; absent: objects), and with
a small ``--memory-limit``. Log-log; the documents come from the index name
(``...-<N>``). The latest run of each (documents, label, tables) is drawn.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

SERIES = [  # label, tables, legend, colour, marker
    ("old", "objects", "--identifiers, before --memory-limit (all in memory)", "tab:red", "s"),
    ("new", "objects", "--identifiers, bounded, terms as Python objects", "tab:orange", "v"),
    ("new", "arrays", "--identifiers, bounded, terms as arrays (now)", "tab:blue", "o"),
    ("new-small", "arrays", "--identifiers, --memory-limit 4M (now)", "tab:green", "^"),
    ("vocabulary", "arrays", "--vocabulary alone (now)", "tab:gray", "D"),
]


def main(source: str, target: str) -> int:
    latest: dict[tuple[int, str, str], dict[str, Any]] = {}
    for line in Path(source).read_text(encoding="utf-8").splitlines():
        if line.strip():
            run = json.loads(line)
            docs = int(run["index"].rsplit("-", 1)[1])
            latest[(docs, run["label"], run.get("tables", "objects"))] = run
    fig, (rss, wall) = plt.subplots(1, 2, figsize=(11, 5.0))
    for label, tables, legend, colour, marker in SERIES:
        points = sorted(
            (
                (n, run)
                for (n, name, kind), run in latest.items()
                if name == label and kind == tables
            ),
            key=lambda p: p[0],
        )
        if not points:
            continue
        docs = [n for n, _ in points]
        rss.plot(
            docs, [r["peak_rss_mib"] for _, r in points], color=colour, marker=marker, label=legend
        )
        wall.plot(
            docs, [r["seconds"] for _, r in points], color=colour, marker=marker, label=legend
        )
    rss.axhline(2048, color="black", linestyle=":", linewidth=1, label="2 GiB")
    for ax, title, unit in (
        (rss, "Peak RSS of the process tree", "MiB"),
        (wall, "Wall time (shared 2-core machine)", "seconds"),
    ):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("documents (mix corpus, 3 shards)")
        ax.set_ylabel(unit)
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
    # one legend for both panels, under them: inside a panel it hid points
    handles, labels = rss.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=8, frameon=False)
    fig.suptitle("esqlog calibrate --vocabulary --identifiers: memory and time by corpus size")
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    fig.savefig(target, dpi=110)
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", help="calibrate_memory.py's JSONL")
    parser.add_argument("target", help="the PNG to write")
    args = parser.parse_args()
    raise SystemExit(main(args.source, args.target))
