"""Latency of each esqlog mode relative to the native match query, side by side in one run.

    python -m scripts.bench.latency --url http://127.0.0.1:19200 \
        --index esqlog-bench-go-full-standard \
        --calibration results/go.calibration.json --queries data/corpora/go/queries.jsonl --n 250

Every query text is sent once per system and is new to the wrapper (no per-query caching).
With a calibration made by ``esqlog calibrate --vocabulary`` the default systems take every
term's df from the vocabulary snapshot (no statistics round trip); the ``live`` systems ask
the cluster for terms not in the TTL cache, which is warmed with --warm other queries first,
as in a running app. ``script-all`` scripts every term (script_df_fraction=1.0);
``rerank-client`` fetches the top-N and rescores them client-side (rerank_in="client");
``boost-nodfs`` skips dfs_query_then_fetch on multi-shard indices (dfs=False);
``boost-fanout`` sends one request per shard with boosts from each shard's own statistics
(boost_shards="fan_out"; needs a calibration made with --identifiers); ``native-dfs`` is the
plain match with dfs_query_then_fetch.
Systems run interleaved per query in a rotating order so drift and background load hit all
of them alike. Times are wall-clock around the client call, wrapper overhead and every extra
round trip included. Prints p50/p95 per system and the ratio of medians to native.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

from esqlog.calibration.files import load_calibration
from esqlog.evaluation.corpus import load_queries
from esqlog.wrapper import wrap
from scripts.bench.harness import add_corpus_args, add_out, add_url, percentile, raw_client

#: the plain match with dfs_query_then_fetch (what the wrapper's dfs costs the engine)
NATIVE_DFS = "native-dfs"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_url(parser)
    parser.add_argument("--engine", choices=("opensearch", "elasticsearch"), default="opensearch")
    add_corpus_args(parser)
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument(
        "--modes",
        default="boost,script,script-all,rerank,boost+joins,"
        "rerank-client,boost-live,rerank-live,boost+joins-live",
    )
    parser.add_argument(
        "--source",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="Fetch _source in every search (rerank then fetches top-N).",
    )
    parser.add_argument("--size", type=int, default=10)
    parser.add_argument(
        "--warm",
        type=int,
        default=1000,
        help="Other queries run first to warm the term-statistics cache.",
    )
    add_out(parser, None)
    args = parser.parse_args()

    client = raw_client(args.url, args.engine)
    cal = load_calibration(args.calibration)
    stats = "auto" if cal.vocabulary else "live"
    clients = {
        "boost": (wrap(client, cal, stats=stats), "boost"),
        "script": (wrap(client, cal, stats=stats), "script"),
        "script-all": (wrap(client, cal, stats=stats, script_df_fraction=1.0), "script"),
        "rerank": (wrap(client, cal, stats=stats), "rerank"),
        "rerank-client": (wrap(client, cal, stats=stats, rerank_in="client"), "rerank"),
        "boost+joins": (wrap(client, cal, stats=stats, joins=True), "boost"),
        "boost-live": (wrap(client, cal, stats="live"), "boost"),
        "rerank-live": (wrap(client, cal, stats="live"), "rerank"),
        "boost+joins-live": (wrap(client, cal, stats="live", joins=True), "boost"),
        "boost-nodfs": (wrap(client, cal, stats=stats, dfs=False), "boost"),
        "boost-fanout": (wrap(client, cal, stats=stats, boost_shards="fan_out"), "boost"),
        "boost-dfs": (wrap(client, cal, stats=stats, boost_shards="dfs"), "boost"),
    }
    field = cal.field
    every = list(dict.fromkeys(q.text for q in load_queries(args.queries)))
    texts = every[: args.n + 1]
    modes = ["native", *args.modes.split(",")]
    unknown = [m for m in modes[1:] if m not in clients and m != NATIVE_DFS]
    if unknown:
        parser.error(f"unknown systems {unknown}; choose from {sorted(clients)}")
    wrapped_modes = [m for m in modes[1:] if m in clients]
    for text in every[args.n + 1 : args.n + 1 + args.warm]:  # never timed, never repeated
        for mode in wrapped_modes:
            wrapped, how = clients[mode]
            wrapped.search(
                index=args.index,
                body={"query": {"match": {field: text}}, "size": 1},
                esqlog_mode=how,
            )
    timings: dict[str, list[float]] = {m: [] for m in modes}
    warm = texts.pop(0)
    for mode in wrapped_modes:
        wrapped, how = clients[mode]
        wrapped.search(
            index=args.index, body={"query": {"match": {field: warm}}, "size": 1}, esqlog_mode=how
        )
    for i, text in enumerate(texts):
        body = {"query": {"match": {field: text}}, "size": args.size, "_source": args.source}
        order = modes[i % len(modes) :] + modes[: i % len(modes)]
        for mode in order:
            started = time.perf_counter()
            if mode == "native":
                client.search(index=args.index, body=body)
            elif mode == NATIVE_DFS:
                client.search(index=args.index, body=body, search_type="dfs_query_then_fetch")
            else:
                wrapped, how = clients[mode]
                wrapped.search(index=args.index, body=body, esqlog_mode=how)
            timings[mode].append((time.perf_counter() - started) * 1000.0)
    base = statistics.median(timings["native"])
    rows = []
    print(
        f"{len(texts)} queries, index {args.index}, size {args.size}, "
        f"_source {args.source}, stats {stats}"
    )
    print(f"{'system':17s} {'p50 ms':>8s} {'p95 ms':>8s} {'p50 / native':>13s}")
    for mode in modes:
        p50 = statistics.median(timings[mode])
        p95 = percentile(timings[mode], 95)
        rows.append({"system": mode, "p50_ms": p50, "p95_ms": p95, "ratio": p50 / base})
        print(f"{mode:17s} {p50:8.2f} {p95:8.2f} {p50 / base:13.2f}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        summary = {"queries": len(texts), "source": args.source, "rows": rows}
        args.out.write_text(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
