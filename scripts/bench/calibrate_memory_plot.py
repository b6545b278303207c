"""Plot calibrate_memory.py's runs: peak RSS and time against the documents indexed.

    python scripts/bench/calibrate_memory_plot.py docs/data/calibrate_memory.jsonl \
        docs/plots/calibrate-memory.png

Two panels, one idea each: peak memory of the process tree (left), wall time (right), for
``--vocabulary`` alone, ``--vocabulary --identifiers`` before and after the bounded
implementation, and with a small ``--memory-limit``. Log-log; the documents come from
the index name (``...-<N>``). The latest run of each (index, label) is drawn.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

SERIES = [  # label, legend, colour, marker
    ("old", "--identifiers, before (all in memory)", "tab:red", "s"),
    ("new", "--identifiers, bounded (default 256M)", "tab:blue", "o"),
    ("new-small", "--identifiers, --memory-limit 4M", "tab:green", "^"),
    ("vocabulary", "--vocabulary alone", "tab:gray", "D"),
]


def main(source: str, target: str) -> int:
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    for line in Path(source).read_text(encoding="utf-8").splitlines():
        if line.strip():
            run = json.loads(line)
            latest[(run["index"], run["label"])] = run
    fig, (rss, wall) = plt.subplots(1, 2, figsize=(11, 4.4))
    for label, legend, colour, marker in SERIES:
        points = sorted((int(index.rsplit("-", 1)[1]), run)
                        for (index, name), run in latest.items() if name == label)
        if not points:
            continue
        docs = [n for n, _ in points]
        rss.plot(docs, [r["peak_rss_mib"] for _, r in points], color=colour, marker=marker,
                 label=legend)
        wall.plot(docs, [r["seconds"] for _, r in points], color=colour, marker=marker,
                  label=legend)
    rss.axhline(2048, color="black", linestyle=":", linewidth=1, label="2 GiB")
    for ax, title, unit in ((rss, "Peak RSS of the process tree", "MiB"),
                            (wall, "Wall time (shared 2-core machine)", "seconds")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("documents (mix corpus, 3 shards)")
        ax.set_ylabel(unit)
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
    rss.legend(fontsize=8, loc="upper left")
    wall.legend(fontsize=8, loc="upper left")
    fig.suptitle("esqlog calibrate --vocabulary --identifiers: memory and time by corpus size")
    fig.tight_layout()
    fig.savefig(target, dpi=110)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(*sys.argv[1:3]))
