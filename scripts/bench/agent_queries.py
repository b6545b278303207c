"""The agent-query benchmark: queries as agents write them, esqlog mcp against an rg policy.

    for n in httpx gin viper black javapoet logrus; do
      esqlog index /tmp/aq/trees/$n --url http://127.0.0.1:19200 --index esqlog-aq-$n \
          --calibrate /tmp/aq/cal/$n.json
    done
    python -m scripts.bench.agent_queries --url http://127.0.0.1:19200 \
        --trees /tmp/aq/trees --calibrations /tmp/aq/cal \
        --repo httpx=/work/.mirror/encode+httpx/repo --repo gin=... [--per-style 6]

Each repository's HEAD checkout is ``TREES/NAME`` (``git archive HEAD``), indexed as
``esqlog-aq-NAME`` with its calibration ``CALIBRATIONS/NAME.json``. The queries
(agent_query_build: symbol, dotted, frame, error, bug, how, missing; --per-style per
repository, seeded) are asked through ``esqlog mcp`` with its defaults (the mcp SDK's stdio
client, ``search_code`` with ``query`` only) and through the rg policy of the localization
benchmark (localize/run.py: keywords() picks up to 3 keywords, ``rg -n -i -w -F`` per
keyword, outputs read in order). Measured per query: the answer's tokens (o200k_base), the
rank of the first listed hit on a gold definition (for symbol, dotted and frame queries: a
hit holding the definition's name line; else a hit overlapping a gold function), the tokens
read up to the end of the first gold entry (esqlog) or the first line inside a gold
function (rg), and for missing names whether the answer says ``no definition named``.
Results go to data/agent-queries/results.jsonl, the summary to --summary.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

from scripts.bench.agent_query_build import STYLES, Builder
from scripts.bench.agent_query_defs import definitions
from scripts.bench.localize.run import (
    count,
    file_word_sets,
    grep_ranked,
    grep_seq,
    in_gold,
    keywords,
    parse_hits,
    read_lines,
    tool_text,
)

DEFINITION_STYLES = ("symbol", "dotted", "frame")
MISSING_ANSWER = "no definition named"


def repo_language(defs: list[Any]) -> str:
    langs = [d.lang for d in defs]
    return max(set(langs), key=langs.count)


def build_queries(
    name: str, tree: Path, gitdir: str, per_style: int, seed: str, other_names: list[str]
) -> list[dict[str, Any]]:
    defs = definitions(tree)
    b = Builder(name, tree, gitdir, defs, seed)
    return (
        b.symbols(per_style)
        + b.dotted(per_style)
        + b.frames(per_style)
        + b.errors(per_style)
        + b.bugs(per_style, repo_language(defs))
        + b.hows(per_style)
        + b.missing(per_style, other_names)
    )


def gold_rank(hits: list[Any], query: dict[str, Any]) -> tuple[int | None, int | None]:
    """(rank of the first gold hit, its index in ``hits``): a definition style's hit must
    hold the definition's name line; other styles' any line of a gold function."""
    strict = query["style"] in DEFINITION_STYLES
    for i, h in enumerate(hits):
        for g in query["gold"]:
            if h.path != g["path"]:
                continue
            if (h.start <= g["line"] <= h.end) if strict else in_gold([g], h.path, h.start, h.end):
                return h.rank, i
    return None, None


async def ask_esqlog(
    url: str, index: str, calibration: Path, queries: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    exe = str(Path(sys.executable).with_name("esqlog"))
    params = StdioServerParameters(
        command=exe,
        args=["mcp", "--url", url, "--index", index, "--calibration", str(calibration)],
        env=dict(os.environ),
    )
    out = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for q in queries:
            text = tool_text(await session.call_tool("search_code", {"query": q["query"]}))
            hits = parse_hits(text)
            rank, i = gold_rank(hits, q)
            seen = None
            if i is not None:
                seen = count(text[: hits[i].end_offset])
            elif not hits and not q["gold"]:
                seen = None
            out.append(
                {
                    "answer_tokens": count(text),
                    "rank": rank,
                    "tokens_to_gold": seen,
                    "first_line": text.split("\n", 1)[0][:200],
                    "missing_ok": text.startswith(MISSING_ANSWER),
                }
            )
    return out


def ask_rg(tree: Path, word_sets: list[set[str]], q: dict[str, Any]) -> dict[str, Any]:
    kws = keywords(q["query"], word_sets)
    lines = grep_seq(tree, kws) if kws else []
    tokens, total, _ = read_lines(lines, q["gold"]) if q["gold"] else (None, 0, -1)
    if not q["gold"]:
        total = sum(count(f"{p}:{n}:{t}\n") for p, n, t in lines[:2000])
    ranked = read_lines(grep_ranked(tree, kws), q["gold"])[0] if kws and q["gold"] else None
    return {
        "rg_keywords": kws,
        "rg_tokens_to_gold": tokens,
        "rg_total_tokens": total,
        "rg_lines": len(lines),
        "rg_ranked_tokens_to_gold": ranked,
    }


def wilson(k: int, n: int, z: float = 1.96) -> list[float]:
    """The 95% Wilson interval of a share k/n (honest at shares near 0 or 1)."""
    if n == 0:
        return [0.0, 1.0]
    p, d = k / n, 1 + z * z / n
    mid, half = p + z * z / (2 * n), z * ((p * (1 - p) + z * z / (4 * n)) / n) ** 0.5
    return [round((mid - half) / d, 3), round((mid + half) / d, 3)]


def median_inf(values: list[int | None]) -> float:
    """The median with a miss counted as never reached (inf when half or more missed)."""
    return statistics.median([float("inf") if v is None else v for v in values])


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for style in STYLES:
        rs = [r for r in rows if r["style"] == style]
        if not rs:
            continue
        s: dict[str, Any] = {
            "n": len(rs),
            "repos": len({r["repo"] for r in rs}),
            "median_answer_tokens": statistics.median(r["answer_tokens"] for r in rs),
        }
        if style == "missing":
            s["answered_missing"] = sum(r["missing_ok"] for r in rs) / len(rs)
            s["median_rg_tokens"] = statistics.median(r["rg_total_tokens"] for r in rs)
            s["rg_zero_lines"] = sum(r["rg_lines"] == 0 for r in rs) / len(rs)
        else:
            s["rank1"] = sum(r["rank"] == 1 for r in rs) / len(rs)
            s["rank1_interval"] = wilson(sum(r["rank"] == 1 for r in rs), len(rs))
            s["listed"] = sum(r["rank"] is not None for r in rs) / len(rs)
            s["median_tokens_to_gold"] = median_inf([r["tokens_to_gold"] for r in rs])
            s["median_rg_tokens_to_gold"] = median_inf([r["rg_tokens_to_gold"] for r in rs])
            s["median_rg_ranked_tokens_to_gold"] = median_inf(
                [r["rg_ranked_tokens_to_gold"] for r in rs]
            )
            for budget in (2000, 8000):
                s[f"esqlog_within_{budget}"] = sum(
                    r["tokens_to_gold"] is not None and r["tokens_to_gold"] <= budget for r in rs
                ) / len(rs)
                s[f"rg_within_{budget}"] = sum(
                    r["rg_tokens_to_gold"] is not None and r["rg_tokens_to_gold"] <= budget
                    for r in rs
                ) / len(rs)
        out[style] = s
    defs = [r for r in rows if r["style"] in DEFINITION_STYLES]
    out["all"] = {
        "n": len(rows),
        "repos": len({r["repo"] for r in rows}),
        "median_answer_tokens": statistics.median(r["answer_tokens"] for r in rows),
        "definition_rank1": sum(r["rank"] == 1 for r in defs) / max(len(defs), 1),
        "definition_rank1_interval": wilson(sum(r["rank"] == 1 for r in defs), len(defs)),
    }
    return out


def print_table(summary: dict[str, Any]) -> None:
    print(
        f"{'style':8} {'n':>4} {'rank1':>6} {'listed':>7} {'answer':>7} {'esqlog':>7} "
        f"{'rg':>7} {'rg-rank':>7} {'e<=8K':>6} {'rg<=8K':>7}"
    )
    for style, s in summary.items():
        if style == "all":
            continue
        if style == "missing":
            print(
                f"{style:8} {s['n']:>4} said-missing {s['answered_missing']:.3f}; "
                f"answer {s['median_answer_tokens']:.0f}; rg zero lines "
                f"{s['rg_zero_lines']:.3f}, rg median {s['median_rg_tokens']:.0f}"
            )
            continue
        print(
            f"{style:8} {s['n']:>4} {s['rank1']:>6.3f} {s['listed']:>7.3f} "
            f"{s['median_answer_tokens']:>7.0f} {s['median_tokens_to_gold']:>7.0f} "
            f"{s['median_rg_tokens_to_gold']:>7.0f} "
            f"{s['median_rg_ranked_tokens_to_gold']:>7.0f} {s['esqlog_within_8000']:>6.3f} "
            f"{s['rg_within_8000']:>7.3f}"
        )
    a = summary["all"]
    print(
        f"all {a['n']} queries, {a['repos']} repositories: median answer "
        f"{a['median_answer_tokens']:.0f} tokens; symbol+dotted+frame rank 1 "
        f"{a['definition_rank1']:.3f} {a['definition_rank1_interval']}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:19200")
    parser.add_argument("--repo", action="append", default=[], metavar="NAME=GITDIR")
    parser.add_argument("--trees", type=Path, required=True)
    parser.add_argument("--calibrations", type=Path, required=True)
    parser.add_argument("--per-style", type=int, default=6)
    parser.add_argument("--seed", default="agent-queries-v1")
    parser.add_argument(
        "--index-prefix",
        default="esqlog-aq-",
        help="the indices are PREFIX<name> (another prefix lets a second run "
        "go beside this one on the same node)",
    )
    parser.add_argument("--out", type=Path, default=Path("data/agent-queries"))
    parser.add_argument("--summary", type=Path, default=Path("docs/data/agent-queries.json"))
    args = parser.parse_args()
    repos = dict(spec.split("=", 1) for spec in args.repo)
    names = {n: [d.name for d in definitions(args.trees / n)] for n in repos}
    rows: list[dict[str, Any]] = []
    for name, gitdir in repos.items():
        tree = args.trees / name
        others = [x for other, ns in names.items() if other != name for x in ns]
        queries = build_queries(name, tree, gitdir, args.per_style, args.seed, others)
        print(f"{name}: {len(queries)} queries", file=sys.stderr)
        answers = asyncio.run(
            ask_esqlog(
                args.url, f"{args.index_prefix}{name}", args.calibrations / f"{name}.json", queries
            )
        )
        word_sets = file_word_sets(tree)
        for q, a in zip(queries, answers, strict=True):
            rows.append(q | a | ask_rg(tree, word_sets, q))
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "results.jsonl", "w") as fh:
        for r in rows:
            fh.write(json.dumps(r) + "\n")
    summary = summarise(rows)
    args.summary.parent.mkdir(parents=True, exist_ok=True)
    args.summary.write_text(
        json.dumps(
            {
                "seed": args.seed,
                "per_style": args.per_style,
                "repos": sorted(repos),
                "styles": summary,
            },
            indent=1,
        )
        + "\n"
    )
    print_table(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
