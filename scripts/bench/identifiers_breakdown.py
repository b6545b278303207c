"""Where the identifiers mode's time goes: Python before the request, the wire, the engine.

    python -m scripts.bench.identifiers_breakdown --index esqlog-bench-go-full-standard \
        --calibration results/go.json --queries data/corpora/go/queries.jsonl \
        --variant eq=plugin --n 300

Each query text goes to the plain match (the raw client) and through ``esqlog.wrap`` in the
identifiers mode with the variant's settings (scripts/bench/identifiers.py's
``parse_variant``), one after the other. The client's transport is wrapped to time every
request it sends, so a search's wall time splits into ``http`` (the requests: the wire and
the engine), ``took`` (the engine's own figure, whole milliseconds) and ``python`` (wall
minus http: planning, the body's JSON, the response) and ``cpu`` (the thread's CPU time
of the whole search, robust to the machine's load: on a shared machine the wall time of a
millisecond's work mostly measures the other processes). Prints the medians of each, the
requests a search sent and the bytes of their bodies. ``--warm N`` first sends N other texts
(those after the measured ones) through both, untimed, as identifiers_latency.py does.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Any

from esqlog.calibration.files import load_calibration
from esqlog.evaluation.corpus import load_queries
from esqlog.wrapper import wrap
from scripts.bench.harness import add_corpus_args, add_url
from scripts.bench.identifiers import parse_variant


def _took(response: Any) -> float:
    if isinstance(response, dict) and "responses" in response:
        return float(max(r.get("took", 0) for r in response["responses"]))
    return float(response.get("took", 0)) if isinstance(response, dict) else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_url(parser)
    add_corpus_args(parser)
    parser.add_argument("--variant", default="eq=plugin")
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--warm", type=int, default=0, help="untimed texts sent first")
    args = parser.parse_args()
    from opensearchpy import OpenSearch

    client = OpenSearch(hosts=[args.url], timeout=120)
    field = load_calibration(args.calibration).field
    every = list(dict.fromkeys(q.text for q in load_queries(args.queries)))
    texts = every[: args.n + 1]
    warming = every[args.n + 1 : args.n + 1 + args.warm]
    label, settings = parse_variant(args.variant)
    wrapped = wrap(client, args.calibration, mode="identifiers", identifiers=settings)
    sent: list[tuple[float, Any, Any]] = []
    perform = client.transport.perform_request

    def timed(method: str, url: str, params: Any = None, body: Any = None, **kw: Any) -> Any:
        started = time.perf_counter()
        response = perform(method, url, params=params, body=body, **kw)
        sent.append(((time.perf_counter() - started) * 1000, body, response))
        return response

    client.transport.perform_request = timed  # type: ignore[method-assign,assignment]
    systems = {"native": client, label: wrapped}
    rows: dict[str, list[tuple[float, ...]]] = {name: [] for name in systems}
    for text in warming:
        for target in systems.values():
            target.search(index=args.index, body={"query": {"match": {field: text}}})
    for i, text in enumerate(texts):
        body = {"query": {"match": {field: text}}, "size": 10, "_source": False}
        for name, target in systems.items():
            sent.clear()
            started, cpu = time.perf_counter(), time.thread_time()
            target.search(index=args.index, body=body)
            wall = (time.perf_counter() - started) * 1000
            cpu = (time.thread_time() - cpu) * 1000
            if i == 0:
                continue  # warms the wrapper's snapshots and the connection
            http = sum(ms for ms, _, _ in sent)
            size = sum(
                len(b if isinstance(b, str | bytes) else json.dumps(b))
                for _, b, _ in sent
                if b is not None
            )
            rows[name].append(
                (wall, http, sum(_took(r) for _, _, r in sent), wall - http, len(sent), size, cpu)
            )
    print(f"{len(texts) - 1} queries, index {args.index}, medians")
    for name, values in rows.items():
        med = [statistics.median(v[k] for v in values) for k in range(7)]
        print(
            f"{name:28s} wall {med[0]:6.2f} ms  http {med[1]:6.2f}  took {med[2]:4.1f}  "
            f"python {med[3]:5.2f}  cpu {med[6]:5.2f}  requests {med[4]:.0f}  "
            f"body {med[5]:,.0f} B"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
