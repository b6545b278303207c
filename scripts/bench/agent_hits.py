"""Where search_code's score cut and test ordering leave the function a query describes.

    python -m scripts.bench.agent_hits --url http://127.0.0.1:19200 \
        --repo httpx=/tmp/an/encode+httpx --repo gin=/tmp/an/gin-gonic+gin

Each repository is indexed with ``esqlog index --calibrate`` into a scratch index (deleted
after). The queries are drawn from the index itself, by a rule that knows nothing of the
ranking: a function or method outside the tests whose doc comment's first line has at least
5 words once the function's own name is taken out (its humps too: a name query is the
definitions' business, esqlog.agent.names); that line is the query and the function the
gold, --per-repo of them per repository (seeded); with --words N, N of its words drawn at
random (a vaguer query: the whole line is its function's own words and scores best).
Each query is asked as search_code asks
(the match with its definition clauses, --limit hits, one entry per function), then listed
with the score cut at each --fractions value (0: no cut) and tests ranked with the rest
(``include``) or after it (``after``). Printed per mode, tests and fraction: how often the
gold is listed, at rank 1, within the first 5, the median answer tokens (the default
2,000-token listing) and the median tokens of the listing up to the gold's entry.
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import sys
from typing import Any

from esqlog.agent.code_search import CodeSearch, search_kwargs
from esqlog.agent.hits import Hit, cut, hits_of, implementation_first, merge_parts
from esqlog.agent.matching import words_of
from esqlog.agent.names import named
from esqlog.agent.outline import outline
from esqlog.agent.packing import pack_listing
from esqlog.agent.queries import agent_query
from esqlog.agent.scope import Scope, is_test
from esqlog.agent.tokens import TokenCounter, default_counter
from esqlog.engine.connection import ConnectionSettings, connect
from esqlog.engine.paths import index_path
from esqlog.engine.steps import Request
from scripts.bench.harness import indexed_repo


def tasks(
    engine: Any, index: str, field: str, count: int, seed: str, words_kept: int = 0
) -> list[tuple[str, str, str]]:
    """(query, path, symbol) drawn from the index's functions' doc lines (``words_kept``
    of its words drawn at random, in order, when not 0: a vaguer query)."""
    body = {
        "size": 10_000,
        "query": {"terms": {"kind": ["function", "method"]}},
        "_source": [field, "path", "symbol"],
    }
    found = engine.perform(Request("POST", index_path(index, "_search"), body=body))
    out: list[tuple[str, str, str]] = []
    for hit in found["hits"]["hits"]:
        src = hit["_source"]
        path, symbol = src.get("path"), src.get("symbol")
        if not path or not symbol or is_test(path):
            continue
        doc = outline(src.get(field) or "")[1]
        if not doc:
            continue
        name = symbol.rsplit(".", 1)[-1]
        humps = {h.lower() for h in re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", name)}
        words = [
            w
            for w in re.findall(r"[A-Za-z_][\w]*", doc)
            if w.lower() != name.lower() and w.lower() not in humps
        ]
        if len(words) >= 5:
            out.append((" ".join(words), path, symbol))
    out.sort()
    draw = random.Random(seed)
    draw.shuffle(out)
    if words_kept:
        out = [
            (
                " ".join(
                    w
                    for k, w in enumerate(q.split())
                    if k in set(draw.sample(range(len(q.split())), words_kept))
                ),
                p,
                s,
            )
            for q, p, s in out
        ]
    return out[:count]


def listing_outcome(
    hits: list[Hit],
    gold: tuple[str, str],
    query: str,
    fraction: float,
    after: bool,
    counter: TokenCounter,
) -> tuple[int | None, int, int | None]:
    """(gold's rank or None, answer tokens, tokens up to the gold's entry)."""
    listed, left = cut(hits, fraction) if fraction > 0 else (list(hits), [])
    if after:
        listed = implementation_first(listed)
    chunks = [h.chunk for h in listed]
    text, shown = pack_listing(
        chunks, 2_000, counter, words_of(query), f"{len(left)} more" if left else ""
    )
    rank = next((k for k, c in enumerate(chunks, 1) if (c.path, c.symbol) == gold), None)
    if rank is None or rank not in shown:
        return None, counter.count(text), None
    lines = text.split("\n")
    end = next((i for i, line in enumerate(lines) if line.startswith(f"{rank + 1}. ")), len(lines))
    return rank, counter.count(text), counter.count("\n".join(lines[:end]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:19200")
    parser.add_argument("--repo", action="append", default=[], metavar="NAME=PATH")
    parser.add_argument("--per-repo", type=int, default=60)
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--fractions", default="0,0.2,0.3,0.4,0.5")
    parser.add_argument("--modes", default="boost,identifiers")
    parser.add_argument(
        "--words", type=int, default=0, help="words of each doc line kept, drawn at random (0: all)"
    )
    args = parser.parse_args()
    engine = connect(ConnectionSettings(args.url))
    counter = default_counter()
    fractions = [float(f) for f in args.fractions.split(",")]
    rows: dict[tuple[str, str, float], list[tuple[int | None, int, int | None]]] = {}
    ratios: dict[str, list[float]] = {}
    for spec in args.repo:
        name, path = spec.split("=", 1)
        with indexed_repo(engine, args.url, path, "esqlog-bench-hits") as (index, cal, field):
            drawn = tasks(engine, index, field, args.per_repo, f"agent-hits:{name}", args.words)
            print(f"{name}: {len(drawn)} queries", file=sys.stderr)
            for mode in args.modes.split(","):
                search = CodeSearch(engine, cal, index, field, counter, mode=mode)
                for query, gold_path, gold_symbol in drawn:
                    text = agent_query(query) or query
                    response = search.client.search(
                        **search_kwargs(
                            engine.flavor, index, field, text, args.limit, Scope(), named(query)
                        )
                    )
                    hits = merge_parts(hits_of(response["hits"]["hits"], field))
                    best = max((h.score for h in hits), default=0.0)
                    gold = next(
                        (
                            h
                            for h in hits
                            if (h.chunk.path, h.chunk.symbol) == (gold_path, gold_symbol)
                        ),
                        None,
                    )
                    if gold is not None and best > 0 and not gold.definition:
                        ratios.setdefault(mode, []).append(gold.score / best)
                    for after in (False, True):
                        for fraction in fractions:
                            key = (mode, "after" if after else "include", fraction)
                            rows.setdefault(key, []).append(
                                listing_outcome(
                                    hits, (gold_path, gold_symbol), text, fraction, after, counter
                                )
                            )
    print(
        f"{'mode':11} {'tests':7} {'cut':>4} {'n':>4} {'listed':>7} {'@1':>6} {'@5':>6} "
        f"{'answer':>7} {'to gold':>8}"
    )
    for (mode, tests, fraction), out in rows.items():
        n = len(out)
        listed = [r for r in out if r[0] is not None]
        to_gold = [r[2] for r in listed if r[2] is not None]
        print(
            f"{mode:11} {tests:7} {fraction:>4.2f} {n:>4} {len(listed) / n:>7.3f} "
            f"{sum(r[0] == 1 for r in listed) / n:>6.3f} "
            f"{sum(r[0] is not None and r[0] <= 5 for r in listed) / n:>6.3f} "
            f"{statistics.median(r[1] for r in out):>7.0f} "
            f"{statistics.median(to_gold) if to_gold else 0:>8.0f}"
        )
    for mode, found in ratios.items():
        found.sort()
        print(
            f"{mode}: the gold's match score / the best's, over {len(found)} queries whose "
            f"gold was ranked: lowest {', '.join(f'{r:.3f}' for r in found[:5])}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
