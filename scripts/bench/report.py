"""Turn results/quality*.jsonl into the markdown tables and plots of docs/benchmarks/quality.md.

    python -m scripts.bench.report results/quality-r2.jsonl [...] --plots docs/plots

For every experiment: native NDCG@10, the best q of the sweep with its NDCG@10, and for each
predictor its q (computed now from the measured h_tok), the NDCG@10 there (linear
interpolation between sweep points when q is off-grid and was not run) and its regret (best
minus predicted).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path
from typing import Any


def load(paths: list[Path]) -> list[dict[str, Any]]:
    rows: dict[tuple[str, ...], dict[str, Any]] = {}
    for path in paths:
        for line in path.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                key = (row["corpus"], str(row["docs"]), row["analyzer"], row["queries"])
                row["predictions"] = predictions(row)
                rows[key] = row  # a later run of the same experiment wins
    return list(rows.values())


def predictions(row: dict[str, Any]) -> dict[str, float]:
    """Every registered predictor's q from the experiment's measured h_tok (label-free)."""
    from esqlog.scoring.qlog import PREDICTORS, CorpusFeatures

    features = CorpusFeatures(row["h_tok"], row["docs"], row["avgdl"])
    return {name: p.predict(features) for name, p in PREDICTORS.items()}


def curve(row: dict[str, Any], metric: str = "NDCG@10") -> list[tuple[float, float]]:
    return sorted((float(q), m[metric]) for q, m in row["sweep"].items())


def at(points: list[tuple[float, float]], q: float) -> float:
    for (q0, v0), (q1, v1) in itertools.pairwise(points):
        if q0 <= q <= q1:
            if q1 == q0:
                return v0
            return v0 + (v1 - v0) * (q - q0) / (q1 - q0)
    return points[0][1] if q < points[0][0] else points[-1][1]


def table(rows: list[dict[str, Any]]) -> str:
    predictors = sorted({p for r in rows for p in r["predictions"]})
    head = ["corpus", "docs", "analyzer", "queries", "h_tok", "native", "best q", "best"]
    for p in predictors:
        head += [f"{p} q", f"{p} NDCG", f"{p} regret"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    order = {"1000": 0, "10000": 1, "30000": 2, "full": 3}
    for r in sorted(
        rows, key=lambda r: (r["corpus"], order.get(str(r["size"]), 9), r["analyzer"], r["queries"])
    ):
        points = curve(r)
        best_q, best = max(points, key=lambda p: p[1])
        cells = [
            r["corpus"],
            f"{r['docs']:,}",
            r["analyzer"],
            r["queries"],
            f"{r['h_tok']:.4f}",
            f"{r['native']['NDCG@10']:.4f}",
            f"{best_q:g}",
            f"{best:.4f}",
        ]
        for p in predictors:
            q = r["predictions"].get(p)
            if q is None:
                cells += ["", "", ""]
                continue
            value = at(points, q)
            cells += [f"{q:.2f}", f"{value:.4f}", f"{best - value:.4f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path, nargs="+")
    parser.add_argument("--plots", type=Path)
    args = parser.parse_args()
    rows = load(args.results)
    print(table(rows))
    if args.plots:
        from esqlog.evaluation.plots import plot_q_sweep

        args.plots.mkdir(parents=True, exist_ok=True)
        corpus_order = ["go", "java", "python", "ruby", "man"]  # code first, the prose control last
        for style in sorted({r["queries"] for r in rows}):
            for analyzer in sorted({r["analyzer"] for r in rows}):
                chosen = sorted(
                    (r for r in rows if r["queries"] == style and r["analyzer"] == analyzer),
                    key=lambda r: (
                        corpus_order.index(r["corpus"]) if r["corpus"] in corpus_order else 99,
                        int(r["docs"]),
                    ),
                )
                if not chosen:
                    continue
                panels: dict[str, dict[str, list[tuple[float, float]]]] = {}
                marks: dict[str, dict[str, float]] = {}
                for r in chosen:  # one panel per corpus, one line per size
                    label = f"{int(r['docs']):,} docs"
                    panels.setdefault(r["corpus"], {})[label] = curve(r)
                    if "esqlog-linear" in r["predictions"]:
                        marks.setdefault(r["corpus"], {})[label] = r["predictions"]["esqlog-linear"]
                out = args.plots / f"ndcg-vs-q-{analyzer}-{style}.png"
                what = (
                    "identifiers split at index time (code analyzer)"
                    if analyzer == "code"
                    else f"{analyzer} analyzer"
                )
                queries = (
                    "queries keep the function's name"
                    if style == "names"
                    else "the function's name removed from the queries"
                )
                plot_q_sweep(panels, marks, out, title=f"{what}; {queries}")
                print(f"\nplot: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
