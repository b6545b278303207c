"""Recall at token budgets of ``esqlog mcp`` as an agent receives it: the default listing,
then read_code of the hit it picks.

Each query is sent to a real ``esqlog mcp`` server over stdio (the ``mcp`` SDK's client)
as ``search_code(query=<text>)`` with every other argument at its default (a listing of
DEFAULT_LIMIT hits within DEFAULT_BUDGET tokens); the listed hit whose id is the gold is then
read with ``read_code``, as the listing tells the agent to. What the agent reads is counted
with o200k_base (esqlog.agent.tokens.default_counter) in three ways, per query:

pick
    The listing up to the end of the gold's entry, then read_code of the gold: the rule of
    docs/benchmarks/localize.md (an agent reads a listing top down and opens the hit it
    recognises).
answer
    The whole listing (the tool result an agent's context holds), then read_code of the
    gold.
in-order
    The whole listing, then read_code of every listed hit in rank order down to the gold
    (an agent that cannot tell the gold from its signature and doc line).

Recall@B = share of queries whose cost is at most B tokens (a gold that is not listed is
never reached). ``native BM25`` has no server mode; it is the same CodeSearch (listing
packer, reader) in-process with the plain client. One JSON line per (system, query) goes
to --per-query (reruns skip what is there); the summary with 95% percentile bootstrap
intervals (scripts/bench/budget_recall.py: bootstrap_interval) is printed and appended to --out.

    python -m scripts.bench.mcp_recall --url http://127.0.0.1:19200 --corpus go \
        --max-queries 1000 --systems auto,boost,native --styles names,no-names

The index (esqlog-recall-<corpus>-full) and its calibration (--vocabulary --identifiers)
are token_recall.py's, created when absent. docs/benchmarks/token-recall.md, "The default
listing", has the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from esqlog.agent.tokens import default_counter
from scripts.bench.budget_recall import bootstrap_interval
from scripts.bench.harness import add_out, add_url, append_jsonl, engine_at
from scripts.bench.token_recall import ensure_corpus

BUDGETS = (1_000, 2_000, 4_000, 8_000, 16_000)
RULES = ("pick", "answer", "in-order")
#: a listing entry's first line: "3. path:10-20 Sym" or "3. id=abc path lines 1-9 Sym"
ENTRY = re.compile(r"^(?P<rank>\d+)\. (?:id=(?P<id>\S+)|(?P<path>\S+):(?P<a>\d+)-(?P<b>\d+))")
COUNTER = default_counter()


def entries(text: str) -> list[tuple[int, str | None, int]]:
    """(rank, id, character offset past the entry) of each hit of a listing answer."""
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if ENTRY.match(line)]
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    out = []
    for j, i in enumerate(starts):
        m = ENTRY.match(lines[i])
        assert m is not None
        end = starts[j + 1] if j + 1 < len(starts) else len(lines)
        out.append((int(m.group("rank")), m.group("id"), min(offsets[end], len(text))))
    return out


def outcome(qid: str, gold: str, answer: str, read: Callable[[str], str]) -> dict[str, Any]:
    """One query's record: where the gold was listed and what each rule costs."""
    listed = entries(answer)
    total = COUNTER.count(answer)
    rec: dict[str, Any] = {
        "qid": qid,
        "listed": len(listed),
        "answer_tokens": total,
        "gold_rank": None,
        "cost": {rule: None for rule in RULES},
    }
    if gold not in {hit_id for _, hit_id, _ in listed}:
        return rec
    reads = 0
    for rank, hit_id, end in listed:
        if hit_id is None:
            continue
        cost = COUNTER.count(read(hit_id))
        reads += cost
        if hit_id == gold:
            rec["gold_rank"] = rank
            rec["cost"] = {
                "pick": COUNTER.count(answer[:end]) + cost,
                "answer": total + cost,
                "in-order": total + reads,
            }
            break
    return rec


async def mcp_system(
    url: str,
    index: str,
    calibration: Path,
    mode: str,
    queries: Sequence[tuple[str, str, str]],
    write: Callable[[dict[str, Any]], None],
) -> None:
    """``esqlog mcp --mode MODE`` over stdio; search_code with defaults, read_code(id)."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    exe = str(Path(sys.executable).with_name("esqlog"))
    params = StdioServerParameters(
        command=exe,
        args=[
            "mcp",
            "--url",
            url,
            "--index",
            index,
            "--calibration",
            str(calibration),
            "--mode",
            mode,
        ],
        env=dict(os.environ),
    )  # PYTHONPATH chooses the esqlog checkout
    async with stdio_client(params) as (rd, wr), ClientSession(rd, wr) as session:
        await session.initialize()
        for qid, text, gold in queries:
            res = await session.call_tool("search_code", {"query": text})
            answer = _checked(res, qid)
            read_texts: dict[str, str] = {}
            listed = [hit_id for _, hit_id, _ in entries(answer)]
            for hit_id in listed if gold in listed else []:
                if hit_id is None:
                    continue
                got = await session.call_tool("read_code", {"id": hit_id})
                read_texts[hit_id] = _checked(got, qid)
                if hit_id == gold:
                    break
            write(outcome(qid, gold, answer, read_texts.__getitem__))


def _checked(result: Any, qid: str) -> str:
    """The tool's text; a tool error (e.g. the cluster went away) stops the run rather
    than being scored as a miss (a rerun resumes after the last recorded query)."""
    text = "".join(getattr(c, "text", "") for c in result.content)
    if getattr(result, "is_error", getattr(result, "isError", False)):
        raise SystemExit(f"{qid}: tool error, nothing recorded for it: {text[:300]}")
    return text


def native_system(
    url: str,
    index: str,
    calibration: Path,
    queries: Sequence[tuple[str, str, str]],
    write: Callable[[dict[str, Any]], None],
) -> None:
    """The same tool logic in-process, searching with the plain (unwrapped) client."""
    from esqlog.agent.code_search import CodeSearch
    from esqlog.calibration.files import load_calibration

    engine = engine_at(url, timeout=600)
    search = CodeSearch(engine, load_calibration(calibration), index, "body", COUNTER, url)
    search.client = engine.client
    for qid, text, gold in queries:
        answer = search.search(text)
        write(outcome(qid, gold, answer, lambda i: search.read(i, None, None, None)))


def summarize(rows: list[dict[str, Any]], resamples: int) -> dict[str, Any]:
    """Recall@B per rule with 95% percentile bootstrap intervals, and where the gold was."""
    import numpy as np

    out: dict[str, Any] = {"n": len(rows), "recall": {}}
    for rule in RULES:
        costs = [r["cost"][rule] for r in rows]
        out["recall"][rule] = {}
        for b in BUDGETS:
            hits = [float(c is not None and c <= b) for c in costs]
            low, high = bootstrap_interval(hits, np.mean, resamples)
            out["recall"][rule][str(b)] = [float(np.mean(hits)), low, high]
    listed = [float(r["gold_rank"] is not None) for r in rows]
    out["listed"] = [float(np.mean(listed)), *bootstrap_interval(listed, np.mean, resamples)]
    out["mean_entries"] = float(np.mean([r["listed"] for r in rows]))
    out["mean_answer_tokens"] = float(np.mean([r["answer_tokens"] for r in rows]))
    return out


def report(summary: dict[str, dict[str, Any]]) -> None:
    for rule in RULES:
        print(f"\nrule {rule}")
        print(f"{'system':10s}" + "".join(f"{f'{b // 1000}K':>22s}" for b in BUDGETS))
        for name, s in summary.items():
            cells = "".join(
                f"{f'{v[0]:.1%} [{v[1]:.1%}, {v[2]:.1%}]':>22s}"
                for v in (s["recall"][rule][str(b)] for b in BUDGETS)
            )
            print(f"{name:10s}{cells}")
    for name, s in summary.items():
        print(
            f"{name}: gold listed {s['listed'][0]:.1%} [{s['listed'][1]:.1%}, "
            f"{s['listed'][2]:.1%}], {s['mean_entries']:.1f} entries, "
            f"{s['mean_answer_tokens']:.0f} tokens an answer (n={s['n']})"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_url(parser)
    parser.add_argument("--data", type=Path, default=Path("data/corpora"))
    parser.add_argument("--corpus", default="go")
    parser.add_argument("--styles", default="names")
    parser.add_argument("--max-queries", type=int, default=1000)
    parser.add_argument(
        "--systems",
        default="auto,boost,native",
        help="esqlog mcp modes (auto, boost, identifiers) and/or native.",
    )
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--work", type=Path, default=Path("results/recall"))
    parser.add_argument("--per-query", type=Path, default=Path("results/recall/mcp.jsonl"))
    add_out(parser, "docs/data/mcp_recall.jsonl")
    parser.add_argument("--label", default="", help="Stored with every line (e.g. a commit).")
    args = parser.parse_args()
    engine = engine_at(args.url, timeout=600)
    index, _, sets = ensure_corpus(engine, args.data, args.corpus, "full", args.seed, args.work)
    calibration = (args.work / f"{index}.calibration.json").resolve()
    args.per_query.parent.mkdir(parents=True, exist_ok=True)
    done: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    if args.per_query.exists():
        for line in args.per_query.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            done[(r["label"], r["style"], r["system"], r["qid"])] = r
    for style in args.styles.split(","):
        picked = [(q.qid, q.text, q.gold) for q in sets[style][: args.max_queries]]
        summary = {}
        for system in args.systems.split(","):
            todo = [q for q in picked if (args.label, style, system, q[0]) not in done]
            started = time.perf_counter()
            with args.per_query.open("a", encoding="utf-8") as handle:

                def write(rec: dict[str, Any], system: str = system, style: str = style) -> None:
                    rec |= {"label": args.label, "style": style, "system": system}
                    done[(args.label, style, system, rec["qid"])] = rec
                    handle.write(json.dumps(rec) + "\n")
                    handle.flush()

                if system == "native":
                    native_system(args.url, index, calibration, todo, write)
                elif todo:
                    asyncio.run(mcp_system(args.url, index, calibration, system, todo, write))
            print(
                f"{style} {system}: {len(todo)} queries in {time.perf_counter() - started:.0f}s",
                flush=True,
            )
            rows = [done[(args.label, style, system, q[0])] for q in picked]
            summary[system] = summarize(rows, args.resamples)
        report(summary)
        append_jsonl(
            args.out,
            {
                "corpus": args.corpus,
                "index": index,
                "style": style,
                "label": args.label,
                "n_queries": len(picked),
                "tokenizer": COUNTER.name,
                "systems": summary,
            },
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
