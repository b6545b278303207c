"""Prototype: the identifiers query sent to each shard on its own, without the dfs phase.

    python scripts/bench/identifiers_per_shard.py quality --url URL --data data/corpora \
        --corpus go --size 30000 --budgets 200,300 --max-queries 500
    python scripts/bench/identifiers_per_shard.py latency --url URL \
        --index esqlog-bench-java-full-standard-3s --calibration results/java-3s.json \
        --queries data/corpora/java/queries.jsonl --n 300 --budget 200

Why (BENCHMARKS section 7, session 10): on several shards the mode needs
dfs_query_then_fetch, and the dfs phase looks every listed term up on every shard once more
(a third of the engine's time on Java 175K, 3 shards); its spans are grouped by shard set
because Lucene sums a span's idf over the terms the scoring shard holds. Sent as one
``_msearch`` of one request per shard (``preference=_shards:k``, query_then_fetch), each
listing only the terms that shard holds with boosts from that shard's own df and N, every
word is one exact saturation in the engine's local statistics, as on one shard; the client
merges the shards' top hits by score.

Not the product: the wrapper does not do this yet (hits merging, totals, aggregations and
paging would have to follow). ``quality`` reads each shard's df of the listed terms with a
``filters`` aggregation per shard (calibrate would record them); ``latency`` times the
per-shard path next to native and the current dfs query, interleaved, with global-df boosts
(the engine's work is the same).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import quality
from identifiers import bench_index

from esqlog.calibrate import load_calibration
from esqlog.connection import ConnectionSettings, connect
from esqlog.corpus import load_queries
from esqlog.engine import Engine, Request
from esqlog.evaluate import per_query_metrics
from esqlog.identifier_calibrate import calibrate_identifiers
from esqlog.identifier_files import load_for_calibration
from esqlog.identifier_stats import IdentifierStats
from esqlog.identifiers import IdentifierPlan, IdentifierSettings, plan_identifier_query
from esqlog.vocabulary import load_vocabulary

Held = Callable[[str, int], bool]


def shard_query(plan: IdentifierPlan, field: str, shard: int, held: Held,
                boost_of: Callable[[float, list[str]], float]) -> dict[str, Any] | None:
    """One shard's query: each word's terms that the shard holds, one span (or term) each."""
    should: list[dict[str, Any]] = []
    for word in plan.words:
        for terms, _ in word.groups:
            here = [t for t in terms if held(t, shard)]
            if not here:
                continue
            boost = boost_of(word.weight, here)
            should.append({"term": {field: {"value": here[0], "boost": boost}}} if len(here) == 1
                          else {"span_or": {"clauses": [{"span_term": {field: t}} for t in here],
                                            "boost": boost}})
    return {"bool": {"should": should}} if should else None


def _post(engine: Engine, path: str, body: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = engine.perform(Request("POST", path, body=json.dumps(body)))
    return found


def quality_main(args: argparse.Namespace) -> None:
    engine = connect(ConnectionSettings(args.url, timeout=600))
    _, qsets = quality.subset(args.data / args.corpus, args.size, 42)
    index = bench_index(args.corpus, args.size, "standard", 3)
    found = calibrate_identifiers(engine, index, "body")
    stats, vocab = found.stats, found.vocabulary
    one = replace(stats, shards=1)  # plan as on one shard: one span per word
    queries = qsets[args.style][:args.max_queries]
    shards = stats.shards
    docs = [_post(engine, f"/{index}/_search?preference=_shards:{k}",
                  {"size": 0, "track_total_hits": True,
                   "query": {"exists": {"field": "body"}}})["hits"]["total"]["value"]
            for k in range(shards)]
    print(f"{args.corpus} {args.size} {args.style}: {len(queries)} queries, documents per "
          f"shard {docs}", flush=True)
    for budget in args.budgets:
        settings = IdentifierSettings(budget=budget)
        run: dict[str, list[tuple[str, float]]] = {}
        for q in queries:
            plan = plan_identifier_query(q.text, one, vocab.df_of, settings)
            terms = sorted({t for w in plan.words for ts, _ in w.groups for t in ts})
            hits: list[tuple[float, str]] = []
            for k in range(shards):
                aggs = {"f": {"filters": {"filters": {
                    str(i): {"term": {"body": t}} for i, t in enumerate(terms)}}}}
                buckets = _post(engine, f"/{index}/_search?preference=_shards:{k}",
                                {"size": 0, "aggs": aggs})["aggregations"]["f"]["buckets"]
                df = {t: int(buckets[str(i)]["doc_count"]) for i, t in enumerate(terms)}

                def boost_of(weight: float, here: list[str], df: dict[str, int] = df,
                             n: int = docs[k]) -> float:
                    return weight / sum(math.log1p((n - df[t] + 0.5) / (df[t] + 0.5))
                                        for t in here)

                query = shard_query(plan, "body", k, lambda t, _, df=df: df.get(t, 0) > 0,
                                    boost_of)
                if query is None:
                    continue
                got = _post(engine, f"/{index}/_search?preference=_shards:{k}",
                            {"query": query, "size": 10, "_source": False})["hits"]["hits"]
                hits += [(float(h["_score"]), str(h["_id"])) for h in got]
            hits.sort(key=lambda h: -h[0])
            run[q.qid] = [(doc, score) for score, doc in hits[:10]]
        per = per_query_metrics(run, {q.qid: {q.gold: 1} for q in queries})
        values = [per[q.qid]["NDCG@10"] for q in queries]
        print(f"  per shard, exact in local statistics, budget {budget}: "
              f"NDCG@10 {np.mean(values):.4f}", flush=True)


def latency_main(args: argparse.Namespace) -> None:
    from opensearchpy import OpenSearch

    client = OpenSearch(hosts=[args.url], timeout=120)
    cal = load_calibration(args.calibration)
    vocab = load_vocabulary(cal.vocabulary_path(), cal.vocabulary_sha256)  # type: ignore[arg-type]
    stats = load_for_calibration(cal.vocabulary_path(), cal.vocabulary_sha256)
    field, index, shards = cal.field, cal.index, stats.shards
    one = replace(stats, shards=1)
    texts = list(dict.fromkeys(q.text for q in load_queries(args.queries)))[: args.n + 1]
    dfs = {"search_type": "dfs_query_then_fetch"}
    default, mine = IdentifierSettings(), IdentifierSettings(budget=args.budget)

    def held(term: str, shard: int, s: IdentifierStats = stats) -> bool:
        i = s.word_id.get(term)
        return i is None or int(s.mask[i]) == 0 or bool((int(s.mask[i]) >> shard) & 1)

    def global_boost(weight: float, here: list[str]) -> float:
        df = vocab.df_of(here)
        n = stats.doc_count
        return weight / sum(math.log1p((n - df[t] + 0.5) / (df[t] + 0.5)) for t in here)

    def native(text: str) -> None:
        client.search(index=index, body={"query": {"match": {field: text}}, "size": 10,
                                         "_source": False}, params=dfs)

    def current(text: str) -> None:
        query = plan_identifier_query(text, stats, vocab.df_of, default).query(field, default)
        client.search(index=index, body={"query": query, "size": 10, "_source": False},
                      params=dfs)

    def per_shard(text: str) -> list[dict[str, Any]]:
        plan = plan_identifier_query(text, one, vocab.df_of, mine)
        lines = []
        for k in range(shards):
            query = shard_query(plan, field, k, held, global_boost) or {"match_none": {}}
            lines += [json.dumps({"index": index, "preference": f"_shards:{k}"}),
                      json.dumps({"query": query, "size": 10, "_source": False})]
        found = client.msearch(body="\n".join(lines) + "\n")
        hits = [h for r in found["responses"] for h in r["hits"]["hits"]]
        return sorted(hits, key=lambda h: -h["_score"])[:10]  # the merge is timed too

    systems: dict[str, Callable[[str], Any]] = {
        "native (dfs)": native, "identifiers (dfs)": current,
        f"per shard, b={args.budget}": per_shard}
    names = list(systems)
    for run in systems.values():
        run(texts[0])
    times: dict[str, list[float]] = {n: [] for n in names}
    for i, text in enumerate(texts[1:]):
        for name in names[i % len(names):] + names[:i % len(names)]:
            started = time.perf_counter()
            systems[name](text)
            times[name].append((time.perf_counter() - started) * 1000.0)
    base = statistics.median(times["native (dfs)"])
    print(f"{len(texts) - 1} queries, {index} ({shards} shards)")
    for name in names:
        p50 = statistics.median(times[name])
        print(f"{name:28s} p50 {p50:7.2f} ms  {p50 / base:5.2f}x native")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    q = sub.add_parser("quality")
    q.add_argument("--url", default="http://127.0.0.1:19200")
    q.add_argument("--data", type=Path, default=Path("data/corpora"))
    q.add_argument("--corpus", default="go")
    q.add_argument("--size", default="30000")
    q.add_argument("--style", default="names")
    q.add_argument("--max-queries", type=int, default=500)
    q.add_argument("--budgets", type=lambda s: [int(x) for x in s.split(",")],
                   default=[200, 300])
    t = sub.add_parser("latency")
    t.add_argument("--url", default="http://127.0.0.1:19200")
    t.add_argument("--index", required=True)
    t.add_argument("--calibration", type=Path, required=True)
    t.add_argument("--queries", type=Path, required=True)
    t.add_argument("--n", type=int, default=300)
    t.add_argument("--budget", type=int, default=200)
    args = parser.parse_args()
    (quality_main if args.what == "quality" else latency_main)(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
