"""Recall at token budgets: how often search_code's answer holds the gold chunk.

Native BM25, q-log (the wrapper's boost mode) and the identifiers mode, each asked exactly
what ``esqlog mcp``'s search_code asks (a match query, ``--limit`` hits) and packed by its
packer with its tokenizer (o200k_base through rs-bpe); scripts/bench/budget_recall.py defines
the metric. Prints a table, appends one JSON line per (index, query set) to --out and
redraws --plot from every line of --out.

The corpora (data/corpora/<name>/: docs.jsonl, queries.jsonl, queries_noname.jsonl):

    python -m scripts.bench.token_recall --url http://127.0.0.1:19200 --corpora go \
        --sizes full --max-queries 1000

Any index and query file (JSON lines {qid, text, gold}; gold = the gold chunk's _id), e.g. a
repository indexed by ``esqlog index`` and calibrated with --vocabulary --identifiers:

    python -m scripts.bench.token_recall --url U --index I --field content \
        --calibration I.calibration.json --dataset "my repo" \
        --queries names=q.jsonl --queries no-names=q_noname.jsonl

Corpus indices are scratch indices esqlog-recall-<corpus>-<size> (body, name, path),
created and calibrated (--vocabulary --identifiers, beside --out) when absent.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from esqlog.agent.tokens import default_counter
from esqlog.calibration.files import load_calibration
from esqlog.calibration.record import Calibration
from esqlog.engine.client import Engine
from esqlog.engine.paths import index_path
from esqlog.engine.steps import Request
from esqlog.errors import EsqlogError
from esqlog.evaluation.corpus import bulk_index_docs, create_corpus_index, load_queries
from esqlog.evaluation.plots import plot_budget_recall
from esqlog.wrapper import wrap
from scripts.bench import quality
from scripts.bench.budget_recall import (
    BUDGETS,
    BudgetOutcome,
    evaluate_budgets,
    search_chunks,
    summarize,
)
from scripts.bench.harness import add_out, add_url, append_jsonl, engine_at

#: the paper's agent-side figure (CSN Go, 8K tokens): BM25 and q-log
PAPER_8K = {"native BM25": 0.481, "q-log": 0.688}
STYLE_FILES = {"names": "queries.jsonl", "no-names": "queries_noname.jsonl"}


def ensure_corpus(
    engine: Engine, data: Path, corpus: str, size: str, seed: int, cal_dir: Path
) -> tuple[str, Calibration, dict[str, list[Any]]]:
    """The scratch index (path kept: the agent is shown it) and its identifiers calibration."""
    docs, query_sets = quality.subset(data / corpus, size, seed)
    index = f"esqlog-recall-{corpus}-{size}"
    cal_path = cal_dir / f"{index}.calibration.json"
    try:
        fresh = engine.perform(Request("GET", index_path(index, "_count")))["count"] != len(docs)
    except Exception:  # absent
        fresh = True
    if fresh:
        started = time.perf_counter()
        create_corpus_index(engine, index, replace=True)
        engine.perform(
            Request(
                "PUT",
                index_path(index, "_mapping"),
                body={"properties": {"path": {"type": "keyword"}}},
            )
        )
        bulk_index_docs(engine, index, docs, extra_fields=("path",))
        engine.perform(Request("POST", index_path(index, "_forcemerge"), {"max_num_segments": 1}))
        print(
            f"indexed {index}: {len(docs)} documents in {time.perf_counter() - started:.0f}s",
            flush=True,
        )
    if fresh or not cal_path.exists():
        from esqlog.identifiers.calibrate import calibrate_identifiers, identifier_report

        started = time.perf_counter()
        _, note = identifier_report(calibrate_identifiers(engine, index, "body"), cal_path)
        print(f"calibrated {index} in {time.perf_counter() - started:.0f}s\n{note}", flush=True)
    return index, load_calibration(cal_path), query_sets


def systems(engine: Engine, calibration: Calibration) -> dict[str, Any]:
    """The clients compared: the plain client, and the wrapper in both modes."""
    found: dict[str, Any] = {
        "native BM25": engine.client,
        "q-log": wrap(engine.client, calibration),
    }
    try:
        found["identifiers"] = wrap(engine.client, calibration, mode="identifiers")
    except EsqlogError as exc:
        print(f"identifiers mode skipped: {exc}", flush=True)
    return found


def run_set(
    engine: Engine,
    clients: dict[str, Any],
    index: str,
    field: str,
    queries: list[tuple[str, str, str]],
    limit: int,
) -> dict[str, list[BudgetOutcome]]:
    counter = default_counter()
    if counter.name != "o200k_base":
        print(
            f"warning: rs-bpe missing, counting with {counter.name} (pip install 'esqlog[mcp]')",
            flush=True,
        )
    outcomes = {}
    for name, client in clients.items():
        started = time.perf_counter()
        try:
            outcomes[name] = evaluate_budgets(
                lambda text, c=client: search_chunks(c, engine.flavor, index, field, text, limit),
                queries,
                counter,
            )
        except EsqlogError as exc:
            print(f"{name} skipped: {exc}", flush=True)
            continue
        print(
            f"  {name}: {len(queries)} queries in {time.perf_counter() - started:.0f}s", flush=True
        )
    return outcomes


def report(label: str, summary: dict[str, dict[str, Any]]) -> None:
    """The table: Recall@B [95% interval], prefix recall at 8K, median tokens to gold."""
    print(f"\n{label}")
    head = "".join(f"{f'{b // 1000}K':>19s}" for b in BUDGETS)
    print(f"{'system':12s}{head}  prefix@8K  retrieved  median tokens to gold [95%]")
    for name, entry in summary.items():
        cells = "".join(
            f"{f'{r[0]:.1%} [{r[1]:.2f},{r[2]:.2f}]':>19s}"
            for r in (entry["recall"][b] for b in BUDGETS)
        )
        med = entry["median_tokens"]
        print(
            f"{name:12s}{cells}  {entry['prefix'][8000][0]:9.1%}  {entry['retrieved']:9.1%}"
            f"  {_tokens(med[0])} [{_tokens(med[1])}, {_tokens(med[2])}]"
        )


def _tokens(value: float) -> str:
    return "not reached" if value == float("inf") else f"{value:,.0f}"


def markdown(out: Path) -> str:
    """docs/benchmarks/token-recall.md's tables from every line of ``out`` (one per index and
    query set)."""
    lines = []
    for line in out.read_text(encoding="utf-8").splitlines() if out.exists() else []:
        row = json.loads(line)
        lines += [
            "",
            f"**{row['dataset']}** ({row['docs']:,} documents), {row['queries']} "
            f"({row['n_queries']} queries, limit {row['limit']}, q {row['q']:.3f}):",
            "",
            "| system | "
            + " | ".join(f"{int(b) // 1000}K" for b in BUDGETS)
            + " | gain at 8K [95%] | prefix@8K | median tokens to gold [95%] |",
            "|---" * (len(BUDGETS) + 4) + "|",
        ]
        for name, e in row["systems"].items():
            cells = [f"{e['recall'][str(b)][0]:.1%}" for b in BUDGETS]
            gain = e["gain"].get("8000")
            med = e["median_tokens"]
            lines.append(
                f"| {name} | "
                + " | ".join(cells)
                + " | "
                + (f"{gain[0]:+.1%} [{gain[1]:+.1%}, {gain[2]:+.1%}]" if gain else "—")
                + f" | {e['prefix']['8000'][0]:.1%} | {_tokens(med[0])} "
                f"[{_tokens(med[1])}, {_tokens(med[2])}] |"
            )
    return "\n".join(lines)


def draw(out: Path, plot: Path) -> None:
    """Redraw the figure from every line of ``out`` (the newest line per panel wins)."""
    panels: dict[str, dict[str, list[tuple[int, float, float, float]]]] = {}
    lines = out.read_text(encoding="utf-8").splitlines() if out.exists() else []
    for line in lines:
        row = json.loads(line)
        name = f"{row['dataset']} ({row['docs'] // 1000}K docs) | {row['queries']}"
        panels[name] = {
            system: [(int(b), *entry["recall"][b]) for b in entry["recall"]]
            for system, entry in row["systems"].items()
        }
    if panels:
        paper = [(8000, value) for value in PAPER_8K.values()]
        plot_budget_recall(
            panels,
            plot,
            "Recall at token budgets (search_code packing)",
            marks={
                name: paper
                for name in panels
                if name.startswith("go ") and name.endswith("| names")
            },
        )
        print(f"plot written to {plot}")


def evaluate(
    engine: Engine,
    args: argparse.Namespace,
    dataset: str,
    index: str,
    field: str,
    calibration: Calibration,
    sets: dict[str, list[Any]],
    docs: int,
) -> None:
    clients = systems(engine, calibration)
    for style, queries in sets.items():
        picked = [(q.qid, q.text, q.gold) for q in queries[: args.max_queries]]
        if not picked:
            continue
        print(f"{dataset} {style}: {len(picked)} queries, limit {args.limit}", flush=True)
        outcomes = run_set(engine, clients, index, field, picked, args.limit)
        summary = summarize(outcomes, baseline="native BM25", n_resamples=args.resamples)
        report(f"{dataset} ({docs:,} docs), {style}", summary)
        row = {
            "dataset": dataset,
            "index": index,
            "docs": docs,
            "queries": style,
            "n_queries": len(picked),
            "limit": args.limit,
            "q": calibration.q,
            "tokenizer": default_counter().name,
            "systems": summary,
        }
        append_jsonl(args.out, row)
        if args.per_query:
            with args.per_query.open("a", encoding="utf-8") as handle:
                for name, rows in outcomes.items():
                    for o in rows:
                        handle.write(
                            json.dumps(
                                {
                                    "dataset": dataset,
                                    "queries": style,
                                    "system": name,
                                    "qid": o.qid,
                                    "gold_rank": o.gold_rank,
                                    "tokens_to_gold": o.tokens_to_gold if o.gold_rank else None,
                                    "shown": {str(b): v for b, v in o.shown.items()},
                                }
                            )
                            + "\n"
                        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_url(parser)
    parser.add_argument("--data", type=Path, default=Path("data/corpora"))
    parser.add_argument("--corpora", default="go")
    parser.add_argument("--sizes", default="full")
    parser.add_argument("--styles", default="names,no-names")
    parser.add_argument("--index", help="Evaluate this index instead of the corpora.")
    parser.add_argument("--field", default="body")
    parser.add_argument("--dataset", help="With --index: its name in the table and plot.")
    parser.add_argument(
        "--calibration",
        type=Path,
        help="With --index: its calibration (--vocabulary --identifiers for the identifiers mode).",
    )
    parser.add_argument(
        "--queries",
        action="append",
        default=[],
        help="With --index: [LABEL=]FILE, a JSONL query file {qid, text, gold} "
        "(repeatable; LABEL names the query set, default the file's stem).",
    )
    parser.add_argument("--max-queries", type=int, default=1000)
    parser.add_argument(
        "--limit",
        type=int,
        default=200,
        help="Hits asked per search (search_code's limit; 200 is its maximum).",
    )
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=42)
    add_out(parser, "docs/data/token_recall.jsonl")
    parser.add_argument(
        "--work",
        type=Path,
        default=Path("results/recall"),
        help="Where corpus calibrations (and their snapshots) are kept.",
    )
    parser.add_argument("--per-query", type=Path, help="Also write per-query outcomes here.")
    parser.add_argument("--plot", type=Path, default=Path("docs/plots/recall-vs-budget.png"))
    parser.add_argument(
        "--plot-only", action="store_true", help="Only redraw --plot from --out (no engine needed)."
    )
    parser.add_argument(
        "--markdown", action="store_true", help="Also print every line of --out as Markdown tables."
    )
    args = parser.parse_args()
    if not args.plot_only:
        engine = engine_at(args.url, timeout=600)
        if args.index:
            if args.calibration is None or not args.queries:
                parser.error("--index needs --calibration and at least one --queries file")
            sets = {}
            for spec in args.queries:
                label, _, path = spec.rpartition("=")
                sets[label or Path(path).stem] = load_queries(path)
            docs = engine.perform(Request("GET", index_path(args.index, "_count")))["count"]
            evaluate(
                engine,
                args,
                args.dataset or args.index,
                args.index,
                args.field,
                load_calibration(args.calibration),
                sets,
                docs,
            )
        for corpus in [] if args.index else args.corpora.split(","):
            for size in args.sizes.split(","):
                index, cal, query_sets = ensure_corpus(
                    engine, args.data, corpus, size, args.seed, args.work
                )
                docs = engine.perform(Request("GET", index_path(index, "_count")))["count"]
                sets = {s: query_sets[s] for s in args.styles.split(",")}
                evaluate(engine, args, corpus, index, "body", cal, sets, docs)
    draw(args.out, args.plot)
    if args.markdown:
        print(markdown(args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
