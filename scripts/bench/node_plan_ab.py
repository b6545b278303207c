"""The node's plan against the client's, on one node: the same hits, and the engine's time.

    python -m scripts.bench.node_plan_ab --url http://127.0.0.1:19260 \
        --index esqlog-bench-go-full-standard --calibration results/go.json \
        --queries data/corpora/go/queries.jsonl --n 500 [--rounds 4]

For each query text: the identifiers query the client plans (``esqlog_terms`` groups,
esqlog.identifiers.query) and the one the node plans (``esqlog_identifiers``,
esqlog.identifiers.node_plan) from the calibration's word lists (``lists_index_name`` of its
snapshot: write them first, ``esqlog calibrate`` does where the nodes run esqlog-terms 1.9.0),
both sent with size 10; prints how many texts differ in their top-10 ids or hits.total and the
largest relative score difference (0 and 0: the same ranking, so the same NDCG). Then, with
``--rounds`` > 0, the plain match and both bodies (built beforehand) sent interleaved in a
seeded random order over one keep-alive connection, the first round untimed: p50 and p95 of
the wall time, the mean ``took``, the median body size.
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
from esqlog.identifiers.query import plan_identifier_query, weigh_words
from esqlog.identifiers.settings import IdentifierSettings
from esqlog.identifiers.word_lists import lists_index_name
from scripts.bench.harness import (
    add_corpus_args,
    add_rounds_args,
    add_url,
    identifier_inputs,
    percentile,
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_url(parser)
    add_corpus_args(parser)
    add_rounds_args(parser, n=500)
    args = parser.parse_args()
    cal, stats, vocab, budget = identifier_inputs(args.calibration)
    lists = lists_index_name(str(cal.vocabulary_sha256))
    settings = IdentifierSettings(engine_query="plugin", budget=budget)
    url = urlparse(args.url)
    pool = urllib3.HTTPConnectionPool(url.hostname or "127.0.0.1", url.port or 9200, maxsize=1)
    path = index_path(args.index, "_search")

    def send(body: str) -> tuple[float, dict]:  # type: ignore[type-arg]
        start = time.perf_counter()
        answer = pool.urlopen("POST", path, body=body, headers={"Content-Type": "application/json"})
        return (time.perf_counter() - start) * 1000, json.loads(answer.data)

    requests = []
    for query in load_queries(args.queries)[: args.n]:
        plan = plan_identifier_query(query.text, stats, vocab.df_of, settings)
        words = weigh_words(query.text, stats, vocab.df_of, settings)
        requests.append(
            [
                json.dumps({"query": {"match": {cal.field: query.text}}, "size": 10}),
                json.dumps({"query": plan.query(cal.field, settings), "size": 10}),
                json.dumps({"query": node_clause(words, cal.field, lists, budget), "size": 10}),
            ]
        )
    differ, largest = 0, 0.0
    for _, client, node in requests:
        a, b = send(client)[1], send(node)[1]
        ha = [(h["_id"], h["_score"]) for h in a["hits"]["hits"]]
        hb = [(h["_id"], h["_score"]) for h in b["hits"]["hits"]]
        if [i for i, _ in ha] != [i for i, _ in hb] or a["hits"]["total"] != b["hits"]["total"]:
            differ += 1
        for (_, sa), (_, sb) in zip(ha, hb, strict=False):
            largest = max(largest, abs(sa - sb) / max(abs(sa), 1e-9))
    print(
        f"{args.index}: {len(requests)} texts, top 10 or hits.total differ on {differ}, "
        f"largest relative score difference {largest:.3g}"
    )
    times: list[list[float]] = [[], [], []]
    took: list[list[float]] = [[], [], []]
    rng = random.Random(args.seed)
    for round_ in range(args.rounds):
        for request in requests:
            for k in rng.sample(range(3), 3):
                wall, answer = send(request[k])
                if round_:
                    times[k].append(wall)
                    took[k].append(float(answer.get("took", 0)))
    for k, name in enumerate(("match", "client plan", "node plan")):
        if times[k]:
            print(
                f"{name:12s} p50 {statistics.median(times[k]):.3f} ms  "
                f"p95 {percentile(times[k], 95):.3f}  took {statistics.mean(took[k]):.3f}  "
                f"body {statistics.median(len(r[k]) for r in requests):.0f} B"
            )
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
