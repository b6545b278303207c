"""Plot scale.py's JSON lines: each figure against the number of documents (log x).

    python -m scripts.bench.scale_plot results/scale.jsonl docs/plots/scale.png

Small multiples, one idea per panel: calibrate time, calibrate peak memory, snapshot
size, process memory, cold start, latency ratio to native (p50 and p95), NDCG@10. When a
size was measured more than once, the last line wins.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

MIB = 1024 * 1024
MODES = ["boost", "script", "rerank", "identifiers"]
COLORS = {
    "native": "#444444",
    "boost": "#1f77b4",
    "script": "#2ca02c",
    "rerank": "#ff7f0e",
    "identifiers": "#d62728",
    "sampled": "#8c564b",
    "exact": "#9467bd",
    "vocabulary": "#17becf",
    "vocab": "#17becf",
    "idents": "#bcbd22",
    "vocabulary+identifiers": "#e377c2",
}


def get(row: dict[str, Any], path: str) -> Any:
    """row["a"]["b"] for "a.b", None when a part is missing."""
    value: Any = row
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value


CAL_LABELS = {
    "sampled": "sampled",
    "exact": "exact",
    "vocabulary": "vocabulary",
    "identifiers": "vocabulary+identifiers",
}
#: (title, y label, [(series label, dotted path, divisor)], log y)
PANELS: list[tuple[str, str, list[tuple[str, str, float]], bool]] = [
    (
        "calibrate: wall time",
        "seconds",
        [(CAL_LABELS[k], f"calibrate.{k}.seconds", 1) for k in CAL_LABELS],
        True,
    ),
    (
        "calibrate: peak memory of the process",
        "MiB",
        [(CAL_LABELS[k], f"calibrate.{k}.peak_rss_bytes", MIB) for k in CAL_LABELS],
        True,
    ),
    (
        "snapshot size",
        "MiB",
        [
            ("vocab file", "calibrate.vocabulary.vocab_file_bytes", MIB),
            ("idents file", "calibrate.identifiers.idents_file_bytes", MIB),
            ("vocab in memory", "probes.snapshot.vocabulary_rss_bytes", MIB),
            ("idents in memory", "probes.snapshot.identifier_rss_bytes", MIB),
            ("vocab+idents in memory", "probes.snapshot.snapshot_rss_bytes", MIB),
        ],
        True,
    ),
    (
        "application process memory (RSS)",
        "MiB",
        [
            ("native client", "probes.native.rss_bytes", MIB),
            ("boost wrapper", "probes.boost.rss_bytes", MIB),
            ("identifiers wrapper", "probes.identifiers.rss_bytes", MIB),
        ],
        False,
    ),
    (
        "cold start: spawn to first answer",
        "seconds",
        [
            ("native client", "probes.native.cold_start_seconds", 1),
            ("boost wrapper", "probes.boost.cold_start_seconds", 1),
            ("identifiers wrapper", "probes.identifiers.cold_start_seconds", 1),
        ],
        False,
    ),
    (
        "search latency p50 / native p50",
        "ratio",
        [(m, f"search.systems.{m}.p50_ratio", 1) for m in MODES],
        False,
    ),
    (
        "search latency p95 / native p95",
        "ratio",
        [(m, f"search.systems.{m}.p95_ratio", 1) for m in MODES],
        False,
    ),
    (
        "NDCG@10 (same queries at every size)",
        "NDCG@10",
        [(m, f"search.systems.{m}.ndcg10", 1) for m in ["native", *MODES]],
        False,
    ),
]


def color(label: str) -> str | None:
    """Series colour by its first word, so a mode has one colour in every panel."""
    first = label.split(" ")[0]
    return COLORS.get(first) or COLORS.get(label)


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    by_size = {r["size"]: r for r in rows}
    rows = [by_size[s] for s in sorted(by_size)]
    docs = [r["docs"] for r in rows]
    fig = Figure(figsize=(16, 8.5), layout="constrained")
    axes = fig.subplots(2, 4).ravel()
    for ax, (title, ylabel, series, logy) in zip(axes, PANELS, strict=True):
        for label, key, div in series:
            pts = [(d, get(r, key)) for d, r in zip(docs, rows, strict=True)]
            pts = [(d, v / div) for d, v in pts if v is not None]
            if pts:
                ax.plot(
                    *zip(*pts, strict=True),
                    marker="o",
                    label=label,
                    color=color(label),
                    linestyle="--" if "memory" in label else "-",
                )
        if title.startswith("search latency"):
            ax.axhline(1.0, color="#888888", linewidth=0.8, linestyle="--")
        ax.set_xscale("log")
        if logy:
            ax.set_yscale("log")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("documents")
        ax.set_ylabel(ylabel)
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=7)
    loads = ", ".join(f"{r['docs']:,}: {r['load_end'][0]:.0f}" for r in rows)
    fig.suptitle(
        f"esqlog at scale: one OpenSearch index, {rows[0]['shards']} shards "
        f"(load average at the end of each size, 2 cores: {loads})",
        fontsize=11,
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    FigureCanvasAgg(fig).print_png(str(path))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", type=Path)
    ap.add_argument("png", type=Path)
    args = ap.parse_args()
    rows = [json.loads(line) for line in args.results.read_text().splitlines() if line.strip()]
    if not rows:
        raise SystemExit(f"{args.results}: no results; run scripts/bench/scale.py first")
    plot(rows, args.png)
    print(args.png)
    return 0


if __name__ == "__main__":
    sys.exit(main())
