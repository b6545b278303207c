"""Two nodes holding the same indices, one build (or setting) of the plugin each, in one run.

    python -m scripts.bench.nodes_ab --urls http://127.0.0.1:19260,http://127.0.0.1:19261 \
        --index esqlog-bench-go-full-standard --calibration results/go.json \
        --queries data/corpora/go/queries.jsonl --n 300 --rounds 4

Why two nodes: comparing builds by swapping the plugin between runs (scripts/bench/plugin_ab.py)
restarts the node, and a node's first minutes (its JIT) and the machine's drift between runs
move the ratios by as much as a change of the plugin does. Here both nodes run side by side
(the second started on a copy of the first one's data folder, so the same segments and word
lists, and the calibration serves both), and each query text's plain ``match`` and its
identifiers body as ``esqlog.wrap`` sends it with no other argument (planned on the node,
``esqlog_identifiers``) go to both nodes in a seeded random order of the four, over one
keep-alive connection per node, the first round untimed. ``--select all``: the bodies of
``IdentifierSettings(select="all")`` (every compound, whole words kept on the nodes).
Prints, per node, the p50 and p95 of the wall time, the identifiers body's as ratios to the
same node's match, and the mean ``took``; then whether the two nodes gave the same top 10
ids, totals and scores.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from urllib.parse import urlparse

import urllib3

from esqlog.engine.paths import index_path
from esqlog.evaluation.corpus import load_queries
from esqlog.identifiers.node_plan import node_clause
from esqlog.identifiers.query import weigh_words
from esqlog.identifiers.settings import IdentifierSettings
from esqlog.identifiers.word_lists import lists_index_name
from scripts.bench.harness import add_corpus_args, add_rounds_args, identifier_inputs, percentile


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--urls", required=True, help="the two nodes, comma-separated")
    parser.add_argument(
        "--select", default="cover", help="IdentifierSettings.select of the bodies (e.g. all)"
    )
    add_corpus_args(parser)
    add_rounds_args(parser)
    args = parser.parse_args()
    urls = args.urls.split(",")
    if len(urls) != 2:
        parser.error("--urls takes two node addresses, comma-separated")
    cal, stats, vocab, budget = identifier_inputs(args.calibration)
    lists = lists_index_name(str(cal.vocabulary_sha256))
    pools = []
    for url in urls:
        parts = urlparse(url)
        pools.append(urllib3.HTTPConnectionPool(parts.hostname, parts.port or 9200, maxsize=1))
    path = index_path(args.index, "_search")

    bodies = []
    for query in load_queries(args.queries)[: args.n]:
        words = weigh_words(query.text, stats, vocab.df_of, IdentifierSettings(select=args.select))
        bodies.append(
            (
                json.dumps({"query": {"match": {cal.field: query.text}}, "size": 10}),
                json.dumps(
                    {
                        "query": node_clause(words, cal.field, lists, budget),
                        "size": 10,
                        "track_total_hits": True,
                    }
                ),
            )
        )
    wall: dict[tuple[int, int], list[float]] = {(n, k): [] for n in range(2) for k in range(2)}
    took: dict[tuple[int, int], list[float]] = {(n, k): [] for n in range(2) for k in range(2)}
    top: list[list[object]] = [[], []]
    rng = random.Random(args.seed)
    for round_ in range(args.rounds):
        for pair in bodies:
            for node, kind in rng.sample([(0, 0), (0, 1), (1, 0), (1, 1)], 4):
                started = time.perf_counter()
                answer = pools[node].urlopen(
                    "POST", path, body=pair[kind], headers={"Content-Type": "application/json"}
                )
                elapsed = (time.perf_counter() - started) * 1000
                data = json.loads(answer.data)
                if round_:
                    wall[(node, kind)].append(elapsed)
                    took[(node, kind)].append(float(data.get("took", 0)))
                elif kind == 1:
                    hits = data["hits"]
                    top[node].append(
                        (hits["total"], [(h["_id"], h["_score"]) for h in hits["hits"]])
                    )
    print(f"{args.index}: {len(bodies)} texts, {args.rounds - 1} timed rounds")
    for node, url in enumerate(urls):
        match50 = statistics.median(wall[(node, 0)])
        match95 = percentile(wall[(node, 0)], 95)
        ident50 = statistics.median(wall[(node, 1)])
        ident95 = percentile(wall[(node, 1)], 95)
        print(
            f"{url}: match p50 {match50:.3f} ms p95 {match95:.3f}  identifiers p50 "
            f"{ident50:.3f} ms ({ident50 / match50:.2f}x) p95 {ident95:.3f} "
            f"({ident95 / match95:.2f}x)  took {statistics.mean(took[(node, 0)]):.3f} / "
            f"{statistics.mean(took[(node, 1)]):.3f}"
        )
    differ = sum(a != b for a, b in zip(top[0], top[1], strict=True))
    print(f"top 10 ids, totals and scores differ between the nodes on {differ} texts")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
