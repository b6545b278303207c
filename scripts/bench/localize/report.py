"""Summarise localization runs: success within token budgets and tokens to the first gold.

    python -m scripts.bench.localize.report data/localize/results-v1.jsonl \
        [--plot docs/plots/localize-success-vs-tokens.png] \
        [--summary docs/data/localize/summary-v1.json]

Per method, over all tasks, per language and per repository: success@2K/4K/8K/16K (share
of tasks whose first changed function was reached within that many tokens) and the median
tokens read until then (an unreached task counts as infinity, so a median can be "never"),
each with a 95% percentile bootstrap interval over tasks (numpy, seed 0, 2,000 resamples).
Also the paired difference in success@8K of every method against grep-seq (same
resampled tasks for both). Only tasks that every listed method answered are used.

Two reading models for a listing answer. A record with ``listing_tokens`` (run v3 on) also
yields the method ``<method>-listing``: the listing read up to the end of the first entry
overlapping a changed function (path, lines, symbol, signature: the agent knows where the
function is, as grep's output line tells it), without the read_code; ``<method>`` itself
counts that listing plus the read_code of the hit. Like for like, ``<method>-listing`` is
paired with grep-seq and ``<method>`` with grep-seq+read: differences in success at every
budget, the ratio of the medians, and how many tasks each side reaches with fewer tokens.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

BUDGETS = (2000, 4000, 8000, 16000)
ORDER = [
    "esqlog-auto-listing",
    "grep-seq",
    "esqlog-auto",
    "grep-seq+read",
    "grep-ranked",
    "grep-ranked+read",
    "native",
    "esqlog-boost",
    "esqlog-identifiers",
    "esqlog-boost-16k",
    "esqlog-identifiers-16k",
]
LABELS = {
    "grep-seq": "grep: rg per keyword",
    "grep-ranked": "grep: rg, files by keywords matched",
    "grep-seq+read": "grep per keyword, then read the function",
    "grep-ranked+read": "grep ranked, then read the function",
    "native": "native BM25 (match, hits in order)",
    "esqlog-auto-listing": "esqlog search_code listing, up to the changed function's entry",
    "esqlog-auto": "esqlog search_code listing, then read_code of that entry",
    "esqlog-boost": "esqlog MCP search_code (boost)",
    "esqlog-identifiers": "esqlog MCP search_code (identifiers)",
    "esqlog-boost-16k": "esqlog MCP boost, max_tokens=16000",
    "esqlog-identifiers-16k": "esqlog MCP identifiers, max_tokens=16000",
}
COLORS = {
    "grep-seq": "#7f7f7f",
    "grep-ranked": "#17becf",
    "grep-seq+read": "#bcbd22",
    "grep-ranked+read": "#8c564b",
    "native": "#000000",
    "esqlog-boost": "#1f77b4",
    "esqlog-identifiers": "#d62728",
    "esqlog-boost-16k": "#9467bd",
    "esqlog-identifiers-16k": "#ff7f0e",
    "esqlog-auto": "#2ca02c",
    "esqlog-auto-listing": "#2ca02c",
}
STYLES = {
    "grep-seq+read": ":",
    "grep-ranked+read": ":",
    "esqlog-boost-16k": "--",
    "esqlog-identifiers-16k": "--",
    "grep-ranked": "-.",
}
RESAMPLES, SEED = 2000, 0
LISTING = "-listing"
#: like-for-like pairs: (esqlog reading model, grep reading model)
LIKE_FOR_LIKE = [("esqlog-auto-listing", "grep-seq"), ("esqlog-auto", "grep-seq+read")]


def load(paths: list[str]) -> dict[str, dict[str, dict[str, Any]]]:
    """task_id -> method -> record (the last record wins)."""
    by_task: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for p in paths:
        opener = gzip.open if p.endswith(".gz") else open
        for ln in opener(p, "rt"):
            r = json.loads(ln)
            by_task[r["task_id"]][r["method"]] = r
            if r["method"].startswith("esqlog") and "listing_tokens" in r:
                by_task[r["task_id"]][r["method"] + LISTING] = {
                    **r,
                    "method": r["method"] + LISTING,
                    "tokens": r["listing_tokens"],
                }
    return by_task


def tokens_array(recs: list[dict[str, Any]]) -> np.ndarray:
    return np.array([math.inf if r["tokens"] is None else float(r["tokens"]) for r in recs])


def stats(tok: np.ndarray) -> dict[str, float]:
    out = {f"success@{b // 1000}K": float(np.mean(tok <= b)) for b in BUDGETS}
    out["median_tokens"] = float(np.median(tok))
    return out


def bootstrap(tok: np.ndarray, rng: np.random.Generator) -> dict[str, list[float]]:
    n = len(tok)
    idx = rng.integers(0, n, size=(RESAMPLES, n))
    sample = tok[idx]
    out = {}
    for b in BUDGETS:
        vals = np.mean(sample <= b, axis=1)
        out[f"success@{b // 1000}K"] = [
            float(np.percentile(vals, 2.5)),
            float(np.percentile(vals, 97.5)),
        ]
    med = np.median(sample, axis=1)
    # "nearest": an interval bound may be infinite (never reached) without nan arithmetic
    out["median_tokens"] = [
        float(np.percentile(med, 2.5, method="nearest")),
        float(np.percentile(med, 97.5, method="nearest")),
    ]
    return out


def fmt_tokens(x: float) -> str:
    return "never" if math.isinf(x) else f"{x:,.0f}"


def summarise(by_task: dict[str, dict[str, dict[str, Any]]], methods: list[str]) -> dict[str, Any]:
    tasks = sorted(t for t, m in by_task.items() if all(x in m for x in methods))
    groups: dict[str, list[str]] = {"all": tasks}
    for t in tasks:
        r = by_task[t][methods[0]]
        groups.setdefault(f"language:{r['language']}", []).append(t)
        groups.setdefault(f"repo:{r['repo']}", []).append(t)
    out: dict[str, Any] = {"tasks": len(tasks), "methods": methods, "groups": {}}
    for g, ts in groups.items():
        rng = np.random.default_rng(SEED)
        res = {}
        for m in methods:
            tok = tokens_array([by_task[t][m] for t in ts])
            res[m] = {"n": len(ts), **stats(tok), "ci95": bootstrap(tok, rng)}
        out["groups"][g] = res
    # paired success@8K difference against grep-seq, over all tasks
    if "grep-seq" in methods:
        rng = np.random.default_rng(SEED)
        base = tokens_array([by_task[t]["grep-seq"] for t in tasks]) <= 8000
        idx = rng.integers(0, len(tasks), size=(RESAMPLES, len(tasks)))
        diffs = {}
        for m in methods:
            if m == "grep-seq":
                continue
            other = tokens_array([by_task[t][m] for t in tasks]) <= 8000
            d = other.astype(float) - base.astype(float)
            boots = d[idx].mean(axis=1)
            diffs[m] = {
                "diff": float(d.mean()),
                "ci95": [float(np.percentile(boots, 2.5)), float(np.percentile(boots, 97.5))],
            }
        out["paired_success@8K_vs_grep-seq"] = diffs
    # other paired differences in success@8K (a - b)
    pairs = [
        ("esqlog-identifiers", "native"),
        ("esqlog-identifiers", "esqlog-boost"),
        ("esqlog-boost", "native"),
        ("esqlog-identifiers", "grep-seq+read"),
    ]
    rng = np.random.default_rng(SEED)
    idx = rng.integers(0, len(tasks), size=(RESAMPLES, len(tasks)))
    paired = {}
    for a, b in pairs:
        if a in methods and b in methods:
            d = (tokens_array([by_task[t][a] for t in tasks]) <= 8000).astype(float) - (
                tokens_array([by_task[t][b] for t in tasks]) <= 8000
            ).astype(float)
            boots = d[idx].mean(axis=1)
            paired[f"{a} - {b}"] = {
                "diff": float(d.mean()),
                "ci95": [float(np.percentile(boots, 2.5)), float(np.percentile(boots, 97.5))],
            }
    out["paired_success@8K"] = paired
    out["like_for_like"] = {
        f"{a} - {b}": paired_like(by_task, tasks, a, b)
        for a, b in LIKE_FOR_LIKE
        if a in methods and b in methods
    }
    # what the agent receives from search_code besides the text
    extra = {}
    for m in methods:
        if m.startswith("esqlog") and not m.endswith(LISTING):
            recs = [by_task[t][m] for t in tasks]
            text = [r["total_tokens"] for r in recs]
            sc = [r["structured_tokens"] for r in recs if r.get("structured_tokens")]
            extra[m] = {
                "median_answer_tokens": float(np.median(text)),
                "median_structured_tokens": float(np.median(sc)) if sc else None,
                "structured_sent": len(sc),
                "listing_answers": sum(1 for r in recs if r.get("listing")),
            }
    out["answers"] = extra
    return out


def paired_like(
    by_task: dict[str, dict[str, dict[str, Any]]], tasks: list[str], a: str, b: str
) -> dict[str, Any]:
    """a against b on the same resampled tasks: success differences at every budget, the
    ratio of the median tokens, and the tasks each reaches with fewer tokens."""
    ta = tokens_array([by_task[t][a] for t in tasks])
    tb = tokens_array([by_task[t][b] for t in tasks])
    rng = np.random.default_rng(SEED)
    idx = rng.integers(0, len(tasks), size=(RESAMPLES, len(tasks)))
    out: dict[str, Any] = {"tasks": len(tasks)}
    for bud in BUDGETS:
        d = (ta <= bud).astype(float) - (tb <= bud).astype(float)
        boots = d[idx].mean(axis=1)
        out[f"success@{bud // 1000}K"] = {
            "diff": float(d.mean()),
            "ci95": [float(np.percentile(boots, 2.5)), float(np.percentile(boots, 97.5))],
        }
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.median(ta) / np.median(tb)
        boots = np.median(ta[idx], axis=1) / np.median(tb[idx], axis=1)
    out["median_ratio"] = {
        "ratio": float(ratio),
        "ci95": [float(np.nanpercentile(boots, 2.5)), float(np.nanpercentile(boots, 97.5))],
    }
    never = np.isinf(ta) & np.isinf(tb)
    out["fewer_tokens"] = {
        a: int(np.sum(ta < tb)),
        b: int(np.sum(tb < ta)),
        "equal": int(np.sum((ta == tb) & ~never)),
        "neither reached": int(np.sum(never)),
    }
    return out


def fmt_like(name: str, d: dict[str, Any]) -> str:
    parts = [f"{name} ({d['tasks']} tasks):"]
    for bud in BUDGETS:
        s = d[f"success@{bud // 1000}K"]
        parts.append(
            f"  success@{bud // 1000}K {s['diff']:+.3f} "
            f"({s['ci95'][0]:+.3f} to {s['ci95'][1]:+.3f})"
        )
    r = d["median_ratio"]
    parts.append(f"  median tokens ratio {r['ratio']:.2f} ({r['ci95'][0]:.2f}-{r['ci95'][1]:.2f})")
    parts.append(f"  fewer tokens: {d['fewer_tokens']}")
    return "\n".join(parts)


def table(summary: dict[str, Any], group: str = "all") -> str:
    rows = [
        "| method | success@2K | success@4K | success@8K | success@16K | median tokens to "
        "first gold |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for m, s in summary["groups"][group].items():
        ci = s["ci95"]
        cells = [
            f"{s[k]:.3f} ({ci[k][0]:.3f}-{ci[k][1]:.3f})"
            for k in (f"success@{b // 1000}K" for b in BUDGETS)
        ]
        lo, hi = ci["median_tokens"]
        cells.append(f"{fmt_tokens(s['median_tokens'])} ({fmt_tokens(lo)}-{fmt_tokens(hi)})")
        rows.append(f"| {m} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


#: column titles of the plot, one reading model a column
MODEL_TITLES = {
    "esqlog-auto-listing": "where the function is:\nlisting up to its entry / grep up to its line",
    "esqlog-auto": "its code too:\nlisting + read_code / grep + reading the function",
}


def plot(
    by_task: dict[str, dict[str, dict[str, Any]]], methods: list[str], tasks: list[str], path: str
) -> None:
    """One panel per (language group, reading model): the like-for-like pairs side by side,
    one column each; without such pairs (runs before v3) one column of every method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = [[a, b] for a, b in LIKE_FOR_LIKE if a in methods and b in methods]
    if not columns:
        columns = [methods]
    langs = ["all", *sorted({by_task[t][methods[0]]["language"] for t in tasks})]
    xs = np.logspace(1, 5, 400)
    fig, grid = plt.subplots(
        len(langs),
        len(columns),
        figsize=(6.2 * len(columns), 3.3 * len(langs)),
        sharex=True,
        sharey=True,
        squeeze=False,
    )
    for r, lang in enumerate(langs):
        ts = [t for t in tasks if lang == "all" or by_task[t][methods[0]]["language"] == lang]
        for c, col in enumerate(columns):
            ax = grid[r][c]
            for m in col:
                tok = tokens_array([by_task[t][m] for t in ts])
                ys = [(tok <= x).mean() for x in xs]
                ax.plot(
                    xs,
                    ys,
                    color=COLORS.get(m),
                    linestyle=STYLES.get(m, "-"),
                    lw=1.8,
                    label=LABELS.get(m, m),
                )
            for b in BUDGETS:
                ax.axvline(b, color="#dddddd", lw=0.8, zorder=0)
            ax.set_xscale("log")
            ax.set_xlim(10, 100_000)
            ax.set_ylim(0, 1)
            name = (
                "all languages"
                if lang == "all"
                else {"go": "Go", "python": "Python", "java": "Java"}.get(lang, lang)
            )
            title = f"{name} ({len(ts)} tasks)"
            if r == 0 and len(columns) > 1:
                title = MODEL_TITLES.get(col[0], col[0]) + "\n" + title
            ax.set_title(title, fontsize=10)
            ax.grid(True, which="major", axis="y", color="#eeeeee")
            if c == 0:
                ax.set_ylabel("share of tasks:\nchanged function reached")
            if r == len(langs) - 1:
                ax.set_xlabel("tokens read (o200k); grey lines: 2K, 4K, 8K, 16K")
                ax.legend(
                    loc="upper center", bbox_to_anchor=(0.5, -0.28), frameon=False, fontsize=9
                )
    fig.suptitle(
        f"Localization from {len(tasks)} commit messages: tokens read until the "
        "first changed function"
    )
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, bbox_inches="tight")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="+")
    ap.add_argument("--methods", default="")
    ap.add_argument("--plot", default="")
    ap.add_argument("--summary", default="")
    args = ap.parse_args()
    by_task = load(args.results)
    present = {m for ms in by_task.values() for m in ms}
    methods = [m for m in (args.methods.split(",") if args.methods else ORDER) if m in present]
    summary = summarise(by_task, methods)
    print(f"{summary['tasks']} tasks answered by all of: {', '.join(methods)}\n")
    print(table(summary))
    for g in summary["groups"]:
        if g == "all":
            continue
        print(f"\n{g} ({summary['groups'][g][methods[0]]['n']} tasks)")
        print(table(summary, g))
    if "paired_success@8K_vs_grep-seq" in summary:
        print("\npaired success@8K difference vs grep-seq (95% CI):")
        for m, d in summary["paired_success@8K_vs_grep-seq"].items():
            print(f"  {m:24s} {d['diff']:+.3f} ({d['ci95'][0]:+.3f} to {d['ci95'][1]:+.3f})")
    for name, d in summary.get("paired_success@8K", {}).items():
        print(f"  {name:40s} {d['diff']:+.3f} ({d['ci95'][0]:+.3f} to {d['ci95'][1]:+.3f})")
    for name, d in summary.get("like_for_like", {}).items():
        print("\n" + fmt_like(name, d))
    print("\nsearch_code answers (median tokens: text, structuredContent):")
    for m, a in summary["answers"].items():
        print(f"  {m:24s} {a}")
    if args.summary:
        Path(args.summary).parent.mkdir(parents=True, exist_ok=True)
        Path(args.summary).write_text(json.dumps(summary, indent=1) + "\n")
    if args.plot:
        tasks = sorted(t for t, m in by_task.items() if all(x in m for x in methods))
        plot(by_task, methods, tasks, args.plot)


if __name__ == "__main__":
    main()
