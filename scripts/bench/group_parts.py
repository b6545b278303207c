"""Which terms of an identifiers query cost the engine its time: the groups with parts left out.

    python -m scripts.bench.group_parts --url http://127.0.0.1:19260 \
        --index esqlog-bench-go-full-standard --calibration results/go.json \
        --queries data/corpora/go/queries.jsonl --n 300 --rounds 4

For each query text, the identifiers query the client plans with the esqlog-terms plugin
(``esqlog_terms`` groups, esqlog.identifiers.query) is sent as it is and with each group cut
down to: its most frequent term alone; its terms in 128 documents or more (those the plugin
scores one by one); its most frequent term and its terms in fewer than 128 documents (those the
plugin reads at once per group and segment, esqlog-terms' RareTerms). A group left empty keeps
its most frequent term. The df is the calibration's snapshot of the whole index, so the split
is the plugin's own on a one-segment index (a force-merged bench index on one shard) and an
approximation elsewhere. The cut bodies rank differently: this measures cost, not quality.
The plain match and the bodies, built beforehand, go interleaved in a seeded random order over
one keep-alive connection, the first round untimed; prints p50 wall time, its ratio to the
match, the mean engine ``took`` and the mean number of terms a body names.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlparse

import urllib3

from esqlog.engine.paths import index_path
from esqlog.evaluation.corpus import load_queries
from esqlog.identifiers.query import plan_identifier_query
from esqlog.identifiers.settings import IdentifierSettings
from scripts.bench.harness import add_corpus_args, add_rounds_args, add_url, identifier_inputs

#: Below this many documents a term is read with its group's other rare terms (RareTerms.MAX_DF).
RARE = 128

Cut = Callable[[list[str], dict[str, int], str], list[str]]
CUTS: dict[str, Cut] = {
    "groups as planned": lambda terms, df, top: terms,
    "most frequent term only": lambda terms, df, top: [top],
    "terms in >= 128 docs": lambda terms, df, top: [t for t in terms if df[t] >= RARE],
    "top + terms in < 128 docs": lambda terms, df, top: [top] + [t for t in terms if df[t] < RARE],
}


def groups_of(query: Any) -> list[dict[str, Any]]:
    """Every ``esqlog_terms`` clause object inside ``query``."""
    found: list[dict[str, Any]] = []
    stack = [query]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                (found.append if key == "esqlog_terms" else stack.append)(value)
        elif isinstance(node, list):
            stack.extend(node)
    return found


def cut(query: dict[str, Any], keep: Cut, df_of: Callable[[list[str]], dict[str, int]]) -> Any:
    """A copy of ``query`` whose groups keep what ``keep`` returns (their top term if nothing)."""
    copy = json.loads(json.dumps(query))
    for group in groups_of(copy):
        terms = list(group["terms"])
        found = df_of(terms)
        df = {t: int(found.get(t, 0)) for t in terms}
        top = max(terms, key=lambda t: df[t])
        group["terms"] = sorted(set(keep(terms, df, top))) or [top]
    return copy


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_url(parser)
    add_corpus_args(parser)
    add_rounds_args(parser)
    args = parser.parse_args()
    cal, stats, vocab, budget = identifier_inputs(args.calibration)
    settings = IdentifierSettings(engine_query="plugin", budget=budget)
    url = urlparse(args.url)
    pool = urllib3.HTTPConnectionPool(url.hostname or "127.0.0.1", url.port or 9200, maxsize=1)
    path = index_path(args.index, "_search")

    names = ["match", *CUTS]
    requests: list[list[str]] = []
    terms: dict[str, list[int]] = {name: [] for name in CUTS}
    for query in load_queries(args.queries)[: args.n]:
        planned = plan_identifier_query(query.text, stats, vocab.df_of, settings)
        full = planned.query(cal.field, settings)
        bodies = [json.dumps({"query": {"match": {cal.field: query.text}}, "size": 10})]
        for name, keep in CUTS.items():
            body = cut(full, keep, vocab.df_of)
            terms[name].append(sum(len(g["terms"]) for g in groups_of(body)))
            bodies.append(json.dumps({"query": body, "size": 10}))
        requests.append(bodies)
    wall: list[list[float]] = [[] for _ in names]
    took: list[list[float]] = [[] for _ in names]
    rng = random.Random(args.seed)
    for round_ in range(args.rounds):
        for bodies in requests:
            for k in rng.sample(range(len(names)), len(names)):
                started = time.perf_counter()
                answer = pool.urlopen(
                    "POST", path, body=bodies[k], headers={"Content-Type": "application/json"}
                )
                if round_:
                    wall[k].append((time.perf_counter() - started) * 1000)
                    took[k].append(float(json.loads(answer.data).get("took", 0)))
    base = statistics.median(wall[0])
    print(f"{args.index}: {len(requests)} texts, budget {budget}, {args.rounds - 1} timed rounds")
    for k, name in enumerate(names):
        p50 = statistics.median(wall[k])
        named = f"  terms {statistics.mean(terms[name]):.0f}" if name in terms else ""
        print(
            f"{name:26s} p50 {p50:.3f} ms ({p50 / base:.2f}x)  "
            f"took {statistics.mean(took[k]):.3f}{named}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
