"""Plot the identifiers mode on 1 and 3 shards against the code reindex.

The figure of docs/benchmarks/identifiers.md.

    python -m scripts.bench.identifiers_shards_plot docs/data/identifiers-1shard.jsonl \
        docs/data/identifiers-3shards.jsonl docs/plots/identifiers-shards.png

Small multiples, one panel per corpus and size present in both files; in each panel the two
query sets (with and without names), and one bar per system: the code-analyzer reindex, the
previous default on 3 shards (shard-set spans added), the current default on 1 and on 3
shards, with 95% bootstrap intervals. The idea: what several shards did to the previous
default, and that the current one keeps its 1-shard quality.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

#: (label, which file: 1 or 3 shards, system name in the rows, colour)
BARS = [
    ("code reindex (native BM25)", 1, "code native", "#444444"),
    ("previous default, 3 shards", 3, "identifiers select=multi,groups=sum,b=300", "#ff7f0e"),
    ("current default, 1 shard", 1, "identifiers", "#1f77b4"),
    ("current default, 3 shards", 3, "identifiers", "#2ca02c"),
]


def rows_of(path: Path) -> dict[tuple[str, str, str], dict[str, Any]]:
    rows = [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    return {(r["corpus"], r["size"], r["queries"]): r["systems"] for r in rows}


def main() -> int:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("one_shard", type=Path, help="identifiers.py's JSONL, 1 shard")
    parser.add_argument("three_shards", type=Path, help="the same with 3 shards")
    parser.add_argument("out", type=Path, help="the PNG to write")
    args = parser.parse_args()
    one, three, out = rows_of(args.one_shard), rows_of(args.three_shards), args.out
    panels = list(dict.fromkeys((c, s) for c, s, _ in three if (c, s, "names") in one))
    cols = min(4, len(panels))
    rows = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.8 * cols, 3.6 * rows + 0.6), squeeze=False)
    flat = [ax for row in axes for ax in row]
    for ax in flat[len(panels) :]:
        ax.set_visible(False)
    width = 0.8 / len(BARS)
    for ax, (corpus, size) in zip(flat, panels, strict=False):
        for b, (label, shards, name, colour) in enumerate(BARS):
            source = one if shards == 1 else three
            means, errors = [], [[], []]
            for style in ("names", "no-names"):
                entry = source[(corpus, size, style)][name]
                low, high = entry["ci"]
                means.append(entry["ndcg10"])
                errors[0].append(entry["ndcg10"] - low)
                errors[1].append(high - entry["ndcg10"])
            ax.bar(
                [x + (b - 1.5) * width for x in (0, 1)],
                means,
                width,
                yerr=errors,
                color=colour,
                label=label,
                capsize=2,
                error_kw={"linewidth": 0.8},
            )
        ax.set_xticks([0, 1], ["with names", "without names"])
        ax.set_title(f"{corpus}, {'all' if size == 'full' else size} documents")
        ax.set_ylabel("NDCG@10")
        ax.grid(axis="y", alpha=0.3)
    handles, labels = flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(BARS), frameon=False)
    fig.suptitle("identifiers mode against a code reindex: 1 shard and 3 shards (dfs)")
    fig.tight_layout(rect=(0, 0.06, 1, 0.96))
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
