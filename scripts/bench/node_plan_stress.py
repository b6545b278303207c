"""The node's plan under the heaviest word lists: many-word queries at once, the cache defeated.

    python -m scripts.bench.node_plan_stress --url http://127.0.0.1:19260 \
        --index esqlog-bench-go-full-standard --field body \
        --calibrations results/go.json,results/java.json --words 1000 --threads 16 --seconds 45

Why: an ``esqlog_identifiers`` query makes the coordinating node read each of its words'
compound lists (up to 5,000 compounds, ~150 KB, a list) before any shard runs; a query may
name up to 1,024 words, and a list the node's cache (WordLists, ``word_lists_cache_size``)
does not hold is fetched by a multi-get and held while the plan runs. This sends queries of
``--words`` words drawn at random from the ``--top`` words with the longest lists of each
calibration's statistics (its lists index named in the calibration: ``word_lists``), from
``--threads`` threads for ``--seconds``, and samples the node's heap and breakers every
second: the answers by status, the latency, the heap's peak, the breakers tripped, and the
word-lists cache's misses and evictions during the run (many evictions: the cache was
defeated, as intended). The node is expected to answer every query and stay up.
"""

from __future__ import annotations

import argparse
import json
import random
import threading
import time
from typing import Any
from urllib.parse import urlparse

import numpy as np
import urllib3

from esqlog.calibration.files import load_calibration
from esqlog.engine.paths import index_path
from esqlog.identifiers.files import load_for_calibration
from esqlog.identifiers.node_plan import QUERY_NAME
from scripts.bench.harness import add_url, percentile


def longest_lists(path: str, top: int) -> tuple[str, list[str]]:
    """(lists index, the ``top`` words with the most compounds) of one calibration."""
    cal = load_calibration(path)
    if not cal.word_lists or not cal.vocabulary_sha256:
        raise SystemExit(f"{path} names no word lists: calibrate with the plugin 1.9.0 first")
    stats = load_for_calibration(cal.vocabulary_path(), cal.vocabulary_sha256)
    order = np.argsort(-np.diff(stats.comp_ptr), kind="stable")[:top]
    return cal.word_lists, [stats.words[i] for i in order.tolist()]


class Run:
    """The answers of every thread, and the node's samples, of one run."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.status: dict[str, int] = {}
        self.seconds: list[float] = []
        self.heap: list[int] = []
        self.tripped = 0

    def answered(self, key: str, seconds: float) -> None:
        with self.lock:
            self.status[key] = self.status.get(key, 0) + 1
            if key == "200":
                self.seconds.append(seconds)


def _get(pool: urllib3.HTTPConnectionPool, path: str) -> Any:
    return json.loads(pool.urlopen("GET", path).data)


def _sample(pool: urllib3.HTTPConnectionPool, run: Run, stop: float) -> None:
    while time.time() < stop:
        nodes = _get(pool, "/_nodes/stats/jvm,breaker")["nodes"].values()
        for node in nodes:
            run.heap.append(int(node["jvm"]["mem"]["heap_used_percent"]))
            run.tripped = max(run.tripped, sum(b["tripped"] for b in node["breakers"].values()))
        time.sleep(1.0)


def _send(
    pool: urllib3.HTTPConnectionPool,
    args: argparse.Namespace,
    sets: list[tuple[str, list[str]]],
    run: Run,
    seed: int,
    stop: float,
) -> None:
    rnd = random.Random(seed)
    path = index_path(args.index, "_search")
    while time.time() < stop:
        lists, words = sets[rnd.randrange(len(sets))]
        picked = rnd.sample(words, min(args.words, len(words)))
        clause = {
            "field": args.field,
            "lists": lists,
            "budget": 300,
            "select": "cover",
            "words": [
                {"word": w, "weight": 1.0, "first": False, "tier": 1.0, "own": True} for w in picked
            ],
        }
        body = json.dumps({"size": 10, "query": {QUERY_NAME: clause}})
        started = time.perf_counter()
        try:
            answer = pool.urlopen(
                "POST", path, body=body, headers={"Content-Type": "application/json"}
            )
            key = str(answer.status)
            if answer.status != 200:
                key += " " + str(json.loads(answer.data).get("error", {}).get("type"))
        except Exception as exc:  # the node went away, or timed out
            key = type(exc).__name__
        run.answered(key, time.perf_counter() - started)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_url(parser)
    parser.add_argument("--index", required=True)
    parser.add_argument("--field", default="body")
    parser.add_argument("--calibrations", required=True, help="comma-separated")
    parser.add_argument("--words", type=int, default=1000)
    parser.add_argument("--top", type=int, default=3000)
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=45.0)
    args = parser.parse_args()
    sets = [longest_lists(p, args.top) for p in args.calibrations.split(",")]
    url = urlparse(args.url)
    pool = urllib3.HTTPConnectionPool(
        url.hostname or "127.0.0.1", url.port or 9200, maxsize=args.threads + 2, timeout=120
    )
    before = _get(pool, "/_esqlog/terms/stats")["word_lists"]
    run, stop = Run(), time.time() + args.seconds
    threads = [threading.Thread(target=_sample, args=(pool, run, stop))]
    threads += [
        threading.Thread(target=_send, args=(pool, args, sets, run, seed, stop))
        for seed in range(args.threads)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    after = _get(pool, "/_esqlog/terms/stats")["word_lists"]
    health = _get(pool, "/_cluster/health")["status"]
    ms = sorted(s * 1000 for s in run.seconds)
    print(
        f"{args.threads} threads x {args.seconds:.0f} s, {args.words} words a query from the "
        f"{args.top} longest lists of {len(sets)} calibrations"
    )
    print(f"answers       {dict(sorted(run.status.items()))}")
    if ms:
        print(
            f"latency ms    p50 {percentile(ms, 50):.0f}  p95 {percentile(ms, 95):.0f}  "
            f"max {ms[-1]:.0f}"
        )
    print(f"heap          peak {max(run.heap, default=0)}% (samples every second: {len(run.heap)})")
    print(f"breakers      tripped {run.tripped}")
    print(
        f"word lists    misses {after['misses'] - before['misses']:,}, evictions "
        f"{after['evictions'] - before['evictions']:,}, refused "
        f"{after['refused'] - before['refused']:,}; cache {after['size_in_bytes'] / 1e6:.0f} of "
        f"{after['limit_in_bytes'] / 1e6:.0f} MB"
    )
    print(f"cluster       {health}")
    return 0 if set(run.status) == {"200"} and health != "red" else 1


if __name__ == "__main__":
    raise SystemExit(main())
