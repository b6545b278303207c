"""NDCG@10 of boost mode sent one request per shard against today's dfs boost search.

    python -m scripts.bench.boost_fan_out_quality --url http://127.0.0.1:19200 \
        --index esqlog-bench-go-full-standard-3s \
        --calibration results/go-3s.calibration.json \
        --queries data/corpora/go/queries.jsonl --n 500

The queries are the ones scripts/bench/latency.py times with the same ``--n`` (the first
n + 1 distinct texts, the first one only warming up), each judged by its one gold
document. Systems: ``native`` (the plain match), ``boost-dfs`` (boost_shards="dfs": one
dfs_query_then_fetch search, the global statistics on every shard), ``boost-weighted`` (the
default, boost_shards="weighted": one request without dfs, each term's boost divided by its
shards' idfs averaged by df), ``boost-fanout`` (one request per shard, boosts from each
shard's statistics, the length norm the shard's own) and ``boost-nodfs`` (dfs=False: the
global boosts times each shard's own idf, uncorrected). Prints each system's mean NDCG@10,
each one's difference to dfs with its 95% paired bootstrap interval, and how many queries
get the same top 10 as dfs.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from esqlog.calibration.files import load_calibration
from esqlog.evaluation.corpus import load_queries
from esqlog.evaluation.metrics import compare, mean_metrics, per_query_metrics
from esqlog.wrapper import wrap
from scripts.bench.harness import add_corpus_args, add_out, add_url, raw_client


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_url(parser)
    parser.add_argument("--engine", choices=("opensearch", "elasticsearch"), default="opensearch")
    add_corpus_args(parser)
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--depth", type=int, default=100)
    add_out(parser, None)
    args = parser.parse_args()

    client = raw_client(args.url, args.engine)
    cal = load_calibration(args.calibration)
    first: dict[str, Any] = {}
    for q in load_queries(args.queries):
        first.setdefault(q.text, q)
    chosen = list(first.values())[1 : args.n + 1]  # latency.py's texts: the first warms up
    qrels = {q.qid: {q.gold: 1} for q in chosen}
    systems = {
        "native": client,
        "boost-dfs": wrap(client, cal, boost_shards="dfs"),
        "boost-weighted": wrap(client, cal),
        "boost-fanout": wrap(client, cal, boost_shards="fan_out"),
        "boost-nodfs": wrap(client, cal, dfs=False),
    }
    runs: dict[str, dict[str, list[tuple[str, float]]]] = {name: {} for name in systems}
    for q in chosen:
        body = {"query": {"match": {cal.field: q.text}}, "size": args.depth, "_source": False}
        for name, searcher in systems.items():
            hits = searcher.search(index=args.index, body=body)["hits"]["hits"]
            runs[name][q.qid] = [(h["_id"], float(h["_score"])) for h in hits]
    measures = {"NDCG@10": "nDCG@10"}
    per = {name: per_query_metrics(run, qrels, measures=measures) for name, run in runs.items()}
    means = {name: mean_metrics(p)["NDCG@10"] for name, p in per.items()}
    print(f"{len(chosen)} queries, index {args.index}, q {cal.q}")
    for name, value in means.items():
        print(f"{name:15s} NDCG@10 {value:.4f}")
    versus: dict[str, Any] = {}
    for name in ("boost-weighted", "boost-fanout", "boost-nodfs"):
        diff = compare(per["boost-dfs"], per[name], ["NDCG@10"])["NDCG@10"]
        same = sum(
            [d for d, _ in runs["boost-dfs"][q.qid][:10]] == [d for d, _ in runs[name][q.qid][:10]]
            for q in chosen
        )
        versus[name] = {"diff": diff.mean_diff, "ci": [diff.low, diff.high], "same_top10": same}
        print(
            f"{name} - dfs  {diff.mean_diff:+.4f}  95% CI [{diff.low:+.4f}, {diff.high:+.4f}]"
            f"  same top 10 {same}/{len(chosen)}"
        )
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(
            json.dumps({"queries": len(chosen), "ndcg10": means, "versus_dfs": versus}, indent=2)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
