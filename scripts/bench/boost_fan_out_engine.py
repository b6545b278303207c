"""Where boost mode's fan-out spends its time: the engine alone, against the one dfs search.

    python -m scripts.bench.boost_fan_out_engine --url http://127.0.0.1:19200 \
        --index esqlog-bench-go-full-standard-3s \
        --calibration results/go-3s.calibration.json \
        --queries data/corpora/go/queries.jsonl --n 300

For each query text (others than scripts/bench/latency.py times: from --skip on), the
requests each wrapper sends are recorded once (boost_shards="fan_out": one msearch of one
request per shard; False: one dfs_query_then_fetch search), then replayed on the raw
client beside the plain match, interleaved per query. ``wrapped`` is the time through the
wrapper (its own work included), ``raw`` the same requests sent as they are: the
difference is the client-side work, the raw ratio is the engine's.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Any

from esqlog.calibration.files import load_calibration
from esqlog.evaluation.corpus import load_queries
from esqlog.wrapper import wrap
from scripts.bench.harness import add_corpus_args, add_url, raw_client


def recording(client: Any) -> list[tuple[str, dict[str, Any]]]:
    """Make the client's search and msearch record each call's keywords (the wrapper
    only wraps the clients' own classes, so the instance's methods are replaced)."""
    calls: list[tuple[str, dict[str, Any]]] = []
    for kind in ("search", "msearch"):
        method = getattr(client, kind)

        def recorded(*args: Any, _kind: str = kind, _method: Any = method, **kwargs: Any) -> Any:
            calls.append((_kind, kwargs))
            return _method(*args, **kwargs)

        setattr(client, kind, recorded)
    return calls


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_url(parser)
    parser.add_argument("--engine", choices=("opensearch", "elasticsearch"), default="opensearch")
    add_corpus_args(parser)
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--skip", type=int, default=600)
    args = parser.parse_args()

    client = raw_client(args.url, args.engine)
    cal = load_calibration(args.calibration)
    texts = list(dict.fromkeys(q.text for q in load_queries(args.queries)))
    texts = texts[args.skip : args.skip + args.n]
    spied = {"fanout": raw_client(args.url, args.engine), "dfs": raw_client(args.url, args.engine)}
    recorders = {name: recording(c) for name, c in spied.items()}
    wrapped = {
        "fanout": wrap(spied["fanout"], cal, boost_shards="fan_out"),
        "dfs": wrap(spied["dfs"], cal, boost_shards="dfs"),
    }
    times: dict[str, list[float]] = {
        k: [] for k in ("native", "wrapped fanout", "wrapped dfs", "raw fanout", "raw dfs")
    }
    for text in texts:
        body = {"query": {"match": {cal.field: text}}, "size": 10, "_source": False}
        for name, w in wrapped.items():
            recorders[name].clear()
            started = time.perf_counter()
            w.search(index=args.index, body=body)
            times[f"wrapped {name}"].append(time.perf_counter() - started)
        started = time.perf_counter()
        client.search(index=args.index, body=body)
        times["native"].append(time.perf_counter() - started)
        for name, calls in recorders.items():
            kind, kwargs = calls[-1]
            started = time.perf_counter()
            getattr(client, kind)(**kwargs)
            times[f"raw {name}"].append(time.perf_counter() - started)
    base = statistics.median(times["native"])
    print(f"{len(texts)} queries, index {args.index}")
    for name, values in times.items():
        p50 = statistics.median(values)
        print(f"{name:15s} p50 {p50 * 1000:6.2f} ms  {p50 / base:5.2f}x native")
    return 0


if __name__ == "__main__":
    sys.exit(main())
