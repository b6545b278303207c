"""Latency of the identifiers mode next to the native match query, side by side in one run.

    python -m scripts.bench.identifiers_latency --url http://127.0.0.1:19200 \
        --index esqlog-bench-go-full-standard --calibration results/go.identifiers.json \
        --queries data/corpora/go/queries.jsonl --n 300 --variants 'default;b=1000,smd=1'

Systems, each query text new to every system, interleaved in a rotating order so drift and
background load hit all alike: ``native`` (the plain match), ``boost`` (esqlog's q-log boost query,
built from the df snapshot), ``identifiers b=B`` (the span query with the given settings, searched
through ``esqlog.wrap`` as an application runs it: on several shards one request per shard by
default, ``fan=0`` one query with dfs) and ``rescore@K b=B`` (the boost query picks each shard's top
K, the span query re-scores them: the rescore phase only scores those K documents). The time
includes building the query (the snapshot lookups), not only the engine. On several shards
``native`` and ``boost`` are searched with dfs_query_then_fetch, as docs/benchmarks/identifiers.md
measured them before f42a5b2, and ``native, no dfs`` is what an application sends by default. Prints
p50/p95 and their ratios to native (dfs on several shards) and to the plain match without dfs.
``eq=plugin`` in a variant sends each group of terms as the esqlog-terms plugin's esqlog_terms
query (IdentifierSettings.engine_query) instead of a span.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from esqlog.calibration.files import load_calibration
from esqlog.evaluation.corpus import load_queries
from esqlog.identifiers.files import load_for_calibration
from esqlog.identifiers.query import identifier_query
from esqlog.identifiers.settings import IdentifierSettings
from esqlog.statistics.vocabulary import load_vocabulary
from scripts.bench.harness import add_corpus_args, add_out, add_url, percentile
from scripts.bench.identifiers import boost_query, parse_variant, rescored


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_url(parser)
    add_corpus_args(parser)
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument(
        "--offset",
        type=int,
        default=0,
        help="Skip this many texts first (Go's texts 750-1250 are mostly of the "
        "go-playground/locales family, scored as the plain split stream).",
    )
    parser.add_argument(
        "--variants",
        type=lambda s: [x for x in s.split(";") if x],
        default=["default", "b=300,smd=0.01,common=own,q=pred"],
        help="Identifiers settings, ';'-separated, as scripts/bench/"
        "identifiers.py --variants ('b=500,smd=0.05,common=split,q=0.8').",
    )
    parser.add_argument(
        "--window",
        type=int,
        default=0,
        help="Also time each variant as a rescore of the boost query's top K.",
    )
    parser.add_argument(
        "--warm",
        type=int,
        default=0,
        help="First send this many other texts (those after the measured "
        "ones) through every system, untimed: a running application, whose "
        "earlier searches filled the engine's caches (the esqlog-terms "
        "plugin's postings cache among them).",
    )
    parser.add_argument("--size", type=int, default=10)
    add_out(parser, None)
    args = parser.parse_args()

    from opensearchpy import OpenSearch

    client = OpenSearch(hosts=[args.url], timeout=120)
    cal = load_calibration(args.calibration)
    vocab = load_vocabulary(cal.vocabulary_path(), cal.vocabulary_sha256)  # type: ignore[arg-type]
    stats = load_for_calibration(cal.vocabulary_path(), cal.vocabulary_sha256)
    field = cal.field
    params = {"search_type": "dfs_query_then_fetch"} if cal.shards > 1 else {}
    every = list(dict.fromkeys(q.text for q in load_queries(args.queries)))
    every = every[args.offset :]
    texts, warming = every[: args.n + 1], every[args.n + 1 : args.n + 1 + args.warm]

    from esqlog.wrapper import wrap

    def body_of(build: Callable[[str], dict[str, Any]]) -> Callable[[str], Any]:
        def run(text: str) -> Any:
            body = {**build(text), "size": args.size, "_source": False}
            return client.search(index=args.index, body=body, params=params)

        return run

    systems: dict[str, Callable[[str], Any]] = {
        "native": body_of(lambda t: {"query": {"match": {field: t}}})
    }
    if cal.shards > 1:  # what an application sends by default: no dfs phase
        systems["native, no dfs"] = lambda t: client.search(
            index=args.index,
            body={"query": {"match": {field: t}}, "size": args.size, "_source": False},
        )
    systems["boost"] = body_of(lambda t: {"query": boost_query(t, field, vocab, cal.q)})
    for label, settings in (parse_variant(v) for v in args.variants):
        # through the wrapper, as an application runs the mode: on several shards one
        # request per shard (settings.fan_out, the default) or one query with dfs
        wrapped = wrap(client, args.calibration, mode="identifiers", identifiers=settings)

        def full(text: str, w: Any = wrapped) -> Any:
            return w.search(
                index=args.index,
                body={"query": {"match": {field: text}}, "size": args.size, "_source": False},
            )

        def rescore(text: str, s: IdentifierSettings = settings) -> dict[str, Any]:
            return rescored(
                boost_query(text, field, vocab, cal.q),
                identifier_query(text, field, stats, vocab.df_of, s),
                args.window,
            )

        systems[label] = full
        if args.window:
            systems[f"rescore@{args.window} {label}"] = body_of(rescore)
    names = list(systems)
    for warm in [texts.pop(0), *warming]:
        for name in names:
            systems[name](warm)
    timings: dict[str, list[float]] = {n: [] for n in names}
    for i, text in enumerate(texts):
        for name in names[i % len(names) :] + names[: i % len(names)]:
            started = time.perf_counter()
            systems[name](text)
            timings[name].append((time.perf_counter() - started) * 1000.0)
    # the ratios to native with dfs and (on several shards) to the plain match without it,
    # the default of an application; on one shard the two are the same search
    plain = "native, no dfs" if cal.shards > 1 else "native"
    base = {"dfs": timings["native"], "plain": timings[plain]}
    p50_of = {k: statistics.median(v) for k, v in base.items()}
    p95_of = {k: percentile(v, 95) for k, v in base.items()}
    print(
        f"{len(texts)} queries after {len(warming)} warm-up texts, index {args.index} "
        f"({cal.shards} shards), size {args.size}"
    )
    print(
        f"{'system':34s} {'p50 ms':>7s} {'p95 ms':>7s}  {'/native p50':>11s} {'p95':>5s}"
        f"  {'/no dfs p50':>11s} {'p95':>5s}"
    )
    rows = []
    for name in names:
        p50, p95 = statistics.median(timings[name]), percentile(timings[name], 95)
        row = {
            "system": name,
            "p50_ms": p50,
            "p95_ms": p95,
            "ratio": p50 / p50_of["dfs"],
            "ratio_p95": p95 / p95_of["dfs"],
            "ratio_plain": p50 / p50_of["plain"],
            "ratio_plain_p95": p95 / p95_of["plain"],
        }
        rows.append(row)
        print(
            f"{name:34s} {p50:7.2f} {p95:7.2f}  {row['ratio']:11.2f} {row['ratio_p95']:5.2f}"
            f"  {row['ratio_plain']:11.2f} {row['ratio_plain_p95']:5.2f}"
        )
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(
            json.dumps(
                {
                    "index": args.index,
                    "shards": cal.shards,
                    "queries": len(texts),
                    "warm": len(warming),
                    "rows": rows,
                },
                indent=2,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
