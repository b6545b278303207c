"""The node's CPU per search: the plain ``match`` against the identifiers body, in one run.

    python -m scripts.bench.node_cpu --url http://127.0.0.1:19260 \
        --index esqlog-bench-go-full-standard --calibration results/go.json \
        --queries data/corpora/go/queries.jsonl --n 600 --seconds 90

Why: a change to the plugin's scoring that saves the node CPU may not show in a search's
wall time, which on a 1-2 ms search is mostly the client's and the transport's; a cluster's
capacity is its CPU. So each side's searches run in blocks of ``--block``, alternating
(which goes first alternates too), over one keep-alive connection, and the node's own CPU
time (``GET /_nodes/_local/stats/process``: ``cpu.total_in_millis``, the process's user and
system time) is read after each block. The node keeps that reading for a second
(``monitor.process.refresh_interval``), so each reading waits ``PAUSE`` past the block: a
reading taken sooner gives part of one block's CPU to the next (blocks of 100 read at once
had put 3.5x on one side of the same work). The node's idle work during the pause (a few
milliseconds) falls on both sides alike. First ``--warm-up`` seconds untimed (the JIT, the
node's caches). The bodies are those
``esqlog.wrap`` sends with no other argument (select auto, planned on the node), built
beforehand. Prints each kind's CPU per search and the ratio; compare two plugin builds by
running it on each (restarted and warmed the same way).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any
from urllib.parse import urlparse

import urllib3

from esqlog.engine.paths import index_path
from esqlog.evaluation.corpus import load_queries
from esqlog.identifiers.node_plan import node_clause
from esqlog.identifiers.query import weigh_words
from esqlog.identifiers.settings import IdentifierSettings
from esqlog.identifiers.word_lists import lists_index_name
from scripts.bench.harness import add_corpus_args, add_url, identifier_inputs

#: seconds past a block before the node's CPU is read: its process stats are kept 1 s
PAUSE = 1.2


def _cpu_millis(pool: Any) -> int:
    """The node's process CPU time so far (user + system), in milliseconds."""
    answer = pool.urlopen("GET", "/_nodes/_local/stats/process")
    node = next(iter(json.loads(answer.data)["nodes"].values()))
    return int(node["process"]["cpu"]["total_in_millis"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_url(parser)
    add_corpus_args(parser)
    parser.add_argument("--n", type=int, default=600, help="query texts, cycled")
    parser.add_argument("--seconds", type=float, default=90.0, help="timed seconds")
    parser.add_argument("--warm-up", type=float, default=60.0, help="untimed seconds first")
    parser.add_argument("--block", type=int, default=600, help="searches a block")
    args = parser.parse_args()
    cal, stats, vocab, budget = identifier_inputs(args.calibration)
    lists = lists_index_name(str(cal.vocabulary_sha256))
    parts = urlparse(args.url)
    pool = urllib3.HTTPConnectionPool(parts.hostname, parts.port or 9200, maxsize=1)
    path = index_path(args.index, "_search")
    settings = IdentifierSettings(select="all")  # what "auto" is on nodes that keep whole words
    kinds: dict[str, list[str]] = {"match": [], "identifiers": []}
    for query in load_queries(args.queries)[: args.n]:
        words = weigh_words(query.text, stats, vocab.df_of, settings)
        base = {"size": 10, "_source": False}
        kinds["match"].append(json.dumps({"query": {"match": {cal.field: query.text}}} | base))
        kinds["identifiers"].append(
            json.dumps({"query": node_clause(words, cal.field, lists, budget)} | base)
        )
    headers = {"Content-Type": "application/json"}

    texts = len(kinds["match"])

    def block(kind: str, first: int) -> int:
        for i in range(first, first + args.block):  # each answer read whole (preloaded)
            pool.urlopen("POST", path, body=kinds[kind][i % texts], headers=headers)
        time.sleep(PAUSE)
        return _cpu_millis(pool)

    spent = {k: [0, 0] for k in kinds}
    at, turn, timed_until = 0, 0, None
    warm_until = time.monotonic() + args.warm_up
    time.sleep(PAUSE)
    last = _cpu_millis(pool)
    while timed_until is None or time.monotonic() < timed_until:
        if timed_until is None and time.monotonic() >= warm_until:
            timed_until = time.monotonic() + args.seconds
        turn += 1
        for kind in list(kinds) if turn % 2 else list(kinds)[::-1]:
            now = block(kind, at)
            if timed_until is not None:
                spent[kind][0] += now - last
                spent[kind][1] += args.block
            last = now
        at = (at + args.block) % texts
    per = {k: millis / max(n, 1) for k, (millis, n) in spent.items()}
    print(f"{args.index}: {args.seconds:.0f} s timed after {args.warm_up:.0f} s untimed")
    for kind, (_, n) in spent.items():
        print(f"  {kind:12s} {n:,} searches, node CPU {per[kind]:.3f} ms a search")
    print(f"  identifiers / match CPU: {per['identifiers'] / per['match']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
