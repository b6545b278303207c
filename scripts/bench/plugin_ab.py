"""The engine's time for the identifiers mode's bodies against the plain match, on one node.

    python -m scripts.bench.plugin_ab --url http://127.0.0.1:19280 \
        --index esqlog-bench-go-full-standard --calibration results/go.json \
        --queries data/corpora/go/queries.jsonl --n 300 --warm 300 --runs 2 \
        --hits results/hits-1.7.0.json [--compare results/hits-1.6.0.json]

Measures the engine and HTTP only, to compare two builds of the esqlog-terms plugin (or two
engines) on the same node and index: each query text's request body is first built through
``esqlog.wrap`` in the identifiers mode with the variant's settings (``--variant``, default
``eq=plugin``: the groups as ``esqlog_terms``), captured from the client's transport as the
wrapper sends it; then those bodies and the plain ``match`` bodies (size 10, no _source) are
sent interleaved, query by query in a seeded random order of the two, over one keep-alive
connection. ``--warm`` texts (those after the measured ones) are sent first, untimed. Prints,
per run, the p50 and p95 of the wall time and the mean ``took`` of each, and the identifiers
figures as ratios to the same run's match. Swap the plugin between invocations (stop the
node, ``bin/opensearch-plugin remove esqlog-terms``, install the other zip, start) and
compare the ratios, not the milliseconds. A restarted node's plain match stays slower for
minutes, which shrinks the ratio by as much as a change of the plugin moves it (measured
2026-12-06: a raised rare bound read 1.26-1.36x against 1.42-1.44x across restarts, and
within 0.06 of the old bound side by side): warm each node well, or run both builds at once
on two nodes with scripts/bench/nodes_ab.py.

``--hits FILE`` writes the top-10 ids and scores of the identifiers bodies on the first
``--hits-n`` texts; ``--compare FILE`` checks them against such a file from the other build.

``--each-term-once`` adds a third body per text, interleaved with the two: the identifiers
body with each term kept only in the first group that lists it (a group left empty keeps its
first term). Its scores are not the mode's; its cost is what a query whose groups shared
their terms' postings would come near (a median Go body lists 300 terms, 159 distinct).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import urllib3

from esqlog.calibration.files import load_calibration
from esqlog.engine.paths import index_path
from esqlog.evaluation.corpus import load_queries
from esqlog.wrapper import wrap
from scripts.bench.harness import add_corpus_args, add_url, percentile
from scripts.bench.identifiers import parse_variant

Request = tuple[str, str, bytes]


def _bodies(
    args: argparse.Namespace, texts: list[str], field: str
) -> list[tuple[Request, Request]]:
    """(identifiers request, match request) per text, the first as the wrapper sends it."""
    from opensearchpy import OpenSearch

    client = OpenSearch(hosts=[args.url], timeout=120)
    label, settings = parse_variant(args.variant)
    wrapped = wrap(client, args.calibration, mode="identifiers", identifiers=settings)
    sent: list[Request] = []
    perform = client.transport.perform_request

    def capture(method: str, url: str, params: Any = None, body: Any = None, **kw: Any) -> Any:
        query = f"?{urlencode(params)}" if params else ""
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        sent.append((method, url + query, data))
        return perform(method, url, params=params, body=body, **kw)

    client.transport.perform_request = capture  # type: ignore[method-assign,assignment]
    pairs = []
    for text in texts:
        body = {"query": {"match": {field: text}}, "size": 10, "_source": False}
        sent.clear()
        wrapped.search(index=args.index, body=body)
        searches = [
            r for r in sent if r[1].split("?")[0].endswith("/_search")
        ]  # the first one also checks the index
        if len(searches) != 1:
            raise SystemExit(f"{label}: {len(searches)} searches for {text!r}; one expected")
        match = ("POST", index_path(args.index, "_search"), json.dumps(body).encode())
        pairs.append((searches[0], match))
    return pairs


def each_term_once(body: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``body`` whose ``esqlog_terms`` groups list each term once in all: in the
    first group (in document order) that lists it; a group whose terms all came earlier keeps
    its first one, so every group still matches something."""
    seen: set[str] = set()

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, dict):
            return node
        if "esqlog_terms" in node:
            group = dict(node["esqlog_terms"])
            fresh = [t for t in group["terms"] if t not in seen]
            seen.update(fresh)
            group["terms"] = fresh or group["terms"][:1]
            return {**node, "esqlog_terms": group}
        return {key: walk(value) for key, value in node.items()}

    copied: dict[str, Any] = walk(body)
    return copied


def _once(request: Request) -> Request:
    method, path, data = request
    return (method, path, json.dumps(each_term_once(json.loads(data))).encode())


def _send(pool: urllib3.HTTPConnectionPool, request: Request) -> tuple[float, dict[str, Any]]:
    method, path, data = request
    started = time.perf_counter()
    response = pool.request(
        method, path, body=data, headers={"Content-Type": "application/json"}, retries=False
    )
    wall = (time.perf_counter() - started) * 1000
    if response.status != 200:
        raise SystemExit(f"{path}: HTTP {response.status}: {response.data[:300]!r}")
    return wall, json.loads(response.data)


def _hits(response: dict[str, Any]) -> list[tuple[str, float]]:
    return [(h["_id"], h["_score"]) for h in response["hits"]["hits"]]


def _figures(values: list[tuple[float, float]]) -> tuple[float, float, float]:
    """(p50 and p95 of the wall times, as every bench takes them; the mean ``took``)."""
    walls = [v[0] for v in values]
    return (
        statistics.median(walls),
        percentile(walls, 95),
        statistics.fmean(v[1] for v in values),
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_url(parser)
    add_corpus_args(parser)
    parser.add_argument("--variant", default="eq=plugin")
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--warm", type=int, default=300, help="untimed texts sent first")
    parser.add_argument("--runs", type=int, default=1, help="measured passes over the texts")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--hits", type=Path, help="write the identifiers bodies' top 10 here")
    parser.add_argument("--hits-n", type=int, default=100)
    parser.add_argument("--compare", type=Path, help="a --hits file of the other build")
    parser.add_argument("--label", default="", help="printed before each run's line")
    parser.add_argument(
        "--each-term-once",
        action="store_true",
        help="also send each identifiers body with every term in its first group only",
    )
    args = parser.parse_args()
    field = load_calibration(args.calibration).field
    every = list(dict.fromkeys(q.text for q in load_queries(args.queries)))
    texts, warming = every[: args.n], every[args.n : args.n + args.warm]
    pairs = _bodies(args, texts + warming, field)
    measured, warm = pairs[: len(texts)], pairs[len(texts) :]
    host = urllib3.util.parse_url(args.url)
    pool = urllib3.HTTPConnectionPool(host.host, host.port or 9200, maxsize=1, timeout=120)
    for ident, match in warm:
        _send(pool, ident)
        _send(pool, match)
        if args.each_term_once:
            _send(pool, _once(ident))
    if args.hits or args.compare:
        top = {texts[i]: _hits(_send(pool, measured[i][0])[1]) for i in range(args.hits_n)}
        if args.hits:
            args.hits.write_text(json.dumps(top, indent=0))
        if args.compare:
            other = {
                k: [tuple(h) for h in v] for k, v in json.loads(args.compare.read_text()).items()
            }
            same = sum(other.get(t) == hits for t, hits in top.items())
            print(f"top 10 ids and scores identical to {args.compare}: {same} of {len(top)}")
    rng = random.Random(args.seed)
    print(f"{len(texts)} texts after {len(warm)}, index {args.index}, variant {args.variant}")
    print(
        f"{'':8s}{'run':>4s} {'ident p50':>10s} {'p95':>7s} {'took':>6s} {'match p50':>10s} "
        f"{'p95':>7s} {'took':>6s} {'p50 / match':>12s} {'p95 / match':>12s}"
    )
    once = [_once(ident) for ident, _ in measured] if args.each_term_once else []
    for run in range(1, args.runs + 1):
        rows: dict[str, list[tuple[float, float]]] = {"ident": [], "match": [], "once": []}
        for i, (ident, match) in enumerate(measured):
            order = [("ident", ident), ("match", match)] + [("once", r) for r in once[i : i + 1]]
            rng.shuffle(order)
            for name, request in order:
                wall, response = _send(pool, request)
                rows[name].append((wall, float(response.get("took", 0))))
        m50, m95, mtook = _figures(rows["match"])
        for name in ("ident", "once") if once else ("ident",):
            i50, i95, itook = _figures(rows[name])
            label = f"{args.label} once" if name == "once" else args.label
            print(
                f"{label:8s}{run:4d} {i50:8.2f}ms {i95:7.2f} {itook:6.2f} {m50:8.2f}ms "
                f"{m95:7.2f} {mtook:6.2f} {i50 / m50:11.2f}x {i95 / m95:11.2f}x"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
