"""What the identifier-splitting reindex itself costs, beside the identifiers mode, in one run.

    python -m scripts.bench.reindex_latency --url http://127.0.0.1:19260 \
        --index esqlog-bench-go-full-standard --code-index esqlog-bench-go-full-code \
        --calibration results/go.json --queries data/corpora/go/queries.jsonl --n 300 --warm 300

The identifiers mode ranks a standard-analyzed index as an index reindexed with a code
analyzer would (split identifiers, docs/benchmarks/identifiers.md): its query scores every
compound that holds a query word, which is the work the reindex's plain ``match`` does on its
longer sub-word postings. This measures that work on the engine, so the mode's latency can be
read against what the ranking it reproduces costs there: the plain ``match`` on the standard
index (what the mode's floors divide by), the same ``match`` on the code-analyzed copy of the
corpus (``scripts.bench.index_corpus --analyzer code``), and ``esqlog.wrap(client,
calibration)`` with no other argument on the standard index. Each text is new to every system;
the systems run interleaved in a rotating order over one client; ``--warm`` other texts go
through every system first, untimed. Prints p50 and p95 of the wall time, each as a ratio to
the standard ``match``, and the mean engine ``took``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from esqlog.calibration.files import load_calibration
from esqlog.evaluation.corpus import load_queries
from scripts.bench.harness import add_url, percentile


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_url(parser)
    parser.add_argument("--index", required=True, help="the standard-analyzed index")
    parser.add_argument("--code-index", required=True, help="its code-analyzed copy")
    parser.add_argument("--calibration", required=True, help="the standard index's")
    parser.add_argument("--queries", required=True)
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--warm", type=int, default=300)
    parser.add_argument("--size", type=int, default=10)
    args = parser.parse_args()

    from opensearchpy import OpenSearch

    from esqlog.wrapper import wrap

    client = OpenSearch(hosts=[args.url], timeout=120)
    cal = load_calibration(args.calibration)
    field = cal.field
    wrapped = wrap(client, args.calibration)
    every = list(dict.fromkeys(q.text for q in load_queries(args.queries)))
    texts, warming = every[: args.n], every[args.n : args.n + args.warm]

    def match_on(index: str, searcher: Any) -> Callable[[str], Any]:
        def run(text: str) -> Any:
            body = {"query": {"match": {field: text}}, "size": args.size, "_source": False}
            return searcher.search(index=index, body=body)

        return run

    systems = {
        "match, standard": match_on(args.index, client),
        "match, code reindex": match_on(args.code_index, client),
        "esqlog.wrap, standard": match_on(args.index, wrapped),
    }
    names = list(systems)
    for text in warming:
        for name in names:
            systems[name](text)
    wall: dict[str, list[float]] = {n: [] for n in names}
    took: dict[str, list[float]] = {n: [] for n in names}
    for i, text in enumerate(texts):
        for name in names[i % len(names) :] + names[: i % len(names)]:
            started = time.perf_counter()
            answer = systems[name](text)
            wall[name].append((time.perf_counter() - started) * 1000)
            took[name].append(float(answer.get("took", 0)))
    base50 = statistics.median(wall[names[0]])
    base95 = percentile(wall[names[0]], 95)
    print(f"{args.index} against {args.code_index}: {len(texts)} texts, size {args.size}")
    for name in names:
        p50, p95 = statistics.median(wall[name]), percentile(wall[name], 95)
        print(
            f"{name:24s} p50 {p50:.3f} ms ({p50 / base50:.2f}x)  p95 {p95:.3f} ms "
            f"({p95 / base95:.2f}x)  took {statistics.mean(took[name]):.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
