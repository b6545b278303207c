"""Fit a label-free q predictor q = a - b * h_tok on the q sweeps of scripts/bench/quality.py.

    python -m scripts.bench.fit_predictor results/quality-*.jsonl

Labels are used here, once, offline, to choose two numbers; at calibration time the
predictor sees only h_tok. The fit minimises the mean NDCG@10 regret (best q of the sweep
minus NDCG@10 at the predicted q, interpolated between sweep points) over all code-corpus
experiments with the standard analyzer and names queries, by grid search. It reports the
in-sample regret and the leave-one-corpus-out regret (the coefficients refitted without the
corpus being scored), so the number that matters is not flattered by its own data.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from scripts.bench.report import at, curve, load

A_GRID = np.round(np.arange(0.50, 1.2001, 0.01), 2)
B_GRID = np.round(np.arange(0.0, 8.0001, 0.05), 2)


def regret(row: dict, q: float) -> float:
    points = curve(row)
    return max(v for _, v in points) - at(points, float(np.clip(q, 0.0, 1.0)))


def fit(rows: list[dict]) -> tuple[float, float, float]:
    best = (1.0, 0.0, float("inf"))
    for a in A_GRID:
        for b in B_GRID:
            mean = float(np.mean([regret(r, a - b * r["h_tok"]) for r in rows]))
            if mean < best[2] - 1e-12:
                best = (float(a), float(b), mean)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path, nargs="+")
    parser.add_argument("--min-docs", type=int, default=10_000)
    args = parser.parse_args()
    rows = [
        r
        for r in load(args.results)
        if r["analyzer"] == "standard"
        and r["queries"] == "names"
        and r["docs"] >= args.min_docs
        and r["corpus"] != "man"
    ]
    a, b, mean = fit(rows)
    print(f"fit on {len(rows)} experiments: q = {a:.2f} - {b:.2f} * h_tok (mean regret {mean:.4f})")
    print(
        f"{'corpus':8s} {'docs':>8s} {'h_tok':>7s} {'q':>5s} {'regret':>7s} "
        f"{'LOCO q':>7s} {'LOCO regret':>11s}"
    )
    for row in sorted(rows, key=lambda r: (r["corpus"], r["docs"])):
        others = [r for r in rows if r["corpus"] != row["corpus"]]
        la, lb, _ = fit(others) if others else (a, b, 0.0)
        q_in = float(np.clip(a - b * row["h_tok"], 0, 1))
        q_out = float(np.clip(la - lb * row["h_tok"], 0, 1))
        print(
            f"{row['corpus']:8s} {row['docs']:8,d} {row['h_tok']:7.4f} {q_in:5.2f} "
            f"{regret(row, q_in):7.4f} {q_out:7.2f} {regret(row, q_out):11.4f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
