"""Quality of the identifiers mode through a real engine, against the code-analyzer reindex.

    python -m scripts.bench.identifiers --url http://127.0.0.1:19200 --corpora go,java \
        --sizes 30000,full --out results/identifiers.jsonl

Per corpus and size (scripts/bench/quality.py's subsets and scratch indices, reused when
they already hold the documents): the ``standard`` index natively and with q-log (boost, q
from calibrate), the ``code``-analyzer reindex (OpenSearch's word_delimiter_graph; native
and q-log), and the identifiers mode on the standard index (its defaults; every sub-word a
span at a 1,000-clause budget; a fixed q; a rescore of the q-log query's top K). NDCG@10
with bootstrap intervals: each system's mean (percentile interval) and paired differences
against the code reindex.
Calibration times of ``--vocabulary`` alone and with ``--identifiers`` are recorded too.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from esqlog.calibration.calibrate import calibrate, calibrate_with_vocabulary
from esqlog.engine.client import Engine
from esqlog.evaluation.metrics import paired_bootstrap, per_query_metrics
from esqlog.evaluation.sweeps import QuerySet, evaluate_queries, system_label
from esqlog.identifiers import node_plan
from esqlog.identifiers.calibrate import calibrate_identifiers, save_with_word_lists
from esqlog.identifiers.query import identifier_query, plan_identifier_query, weigh_words
from esqlog.identifiers.settings import IdentifierSettings
from esqlog.identifiers.shards import shard_queries
from esqlog.identifiers.split_stats import IdentifierStats
from esqlog.scoring.qlog import boost_weights
from esqlog.statistics.analysis import standard_terms
from esqlog.statistics.vocabulary import Vocabulary
from scripts.bench import quality
from scripts.bench.harness import add_out, add_url, append_jsonl, engine_at


def boost_query(text: str, field: str, vocab: Vocabulary, q: float) -> dict[str, Any]:
    """esqlog's boost mode for ASCII text from the df snapshot (the wrapper's rewrite)."""
    terms = standard_terms(text) or []
    counts: dict[str, int] = {}
    for t in terms:
        counts[t] = counts.get(t, 0) + 1
    df = vocab.df_of(list(counts))
    present = [t for t in counts if df[t] > 0]
    weights = boost_weights([df[t] for t in present], vocab.doc_count, q)
    return {
        "bool": {
            "should": [
                {"term": {field: {"value": t, "boost": w * counts[t]}}}
                for t, w in zip(present, weights, strict=True)
            ]
        }
    }


def _q(value: str) -> float | None:
    return None if value == "pred" else float(value)


def parse_variant(spec: str) -> tuple[str, IdentifierSettings]:
    """``b=500,smd=0.05,common=split,q=0.8`` (any subset; the rest default) -> (label,
    settings); ``default`` alone is the defaults. ``rare=N`` sets rare_word_df (``rare=none``:
    every query at q, the default); ``eq=plugin``: groups as esqlog_terms (the engine plugin)."""
    keys: dict[str, tuple[str, Callable[[str], Any]]] = {
        "b": ("budget", int),
        "smd": ("span_max_df", float),
        "common": ("common", str),
        "q": ("q", _q),
        "select": ("select", str),
        "groups": ("shard_groups", str),
        "exact": ("shard_exact_df", float),
        "xc": ("shard_exact_clauses", int),
        "rf": ("rare_first", lambda v: v == "1"),
        "rare": ("rare_word_df", lambda v: None if v == "none" else int(v)),
        "fam": ("family_excess", lambda v: None if v == "none" else float(v)),
        "fan": ("fan_out", lambda v: v == "1"),
        "eq": ("engine_query", str),
        "node": ("node_plan", lambda v: v == "1"),
    }
    fields: dict[str, Any] = {}
    for part in filter(None, spec.split(",")):
        if part == "default":
            continue
        key, _, value = part.partition("=")
        name, cast = keys[key.strip()]
        fields[name] = cast(value.strip())
    return (
        f"identifiers {spec}" if spec != "default" else "identifiers",
        IdentifierSettings(**fields),
    )


def rescored(first: dict[str, Any], second: dict[str, Any], window: int) -> dict[str, Any]:
    """A search body part: ``first`` picks each shard's top ``window``, ``second`` reorders."""
    return {
        "query": first,
        "rescore": {
            "window_size": window,
            "query": {"rescore_query": second, "query_weight": 0.0, "rescore_query_weight": 1.0},
        },
    }


def bootstrap_mean(values: list[float], seed: int = 0, n: int = 5000) -> tuple[float, float]:
    arr = np.asarray(values)
    rng = np.random.default_rng(seed)
    means = arr[rng.integers(0, arr.size, (n, arr.size))].mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def run_bodies(
    engine: Engine, index: str, qs: QuerySet, bodies: list[dict[str, Any]], search_type: str | None
) -> tuple[dict[str, dict[str, float]], float]:
    """Per-query metrics of full search bodies (query + optional rescore) via _msearch."""
    from esqlog.engine.steps import Request

    run: dict[str, list[tuple[str, float]]] = {}
    header: dict[str, Any] = {
        "index": index,
        **({"search_type": search_type} if search_type else {}),
    }
    started = time.perf_counter()
    for start in range(0, len(bodies), 25):
        lines = []
        for body in bodies[start : start + 25]:
            lines += [
                json.dumps(header),
                json.dumps({**body, "size": 100, "_source": False, "track_total_hits": False}),
            ]
        found = engine.perform(Request("POST", "/_msearch", body="\n".join(lines) + "\n"))
        for qid, response in zip(qs.ids[start : start + 25], found["responses"], strict=True):
            if "error" in response:
                raise RuntimeError(f"query {qid} failed: {str(response['error'])[:300]}")
            run[qid] = [(h["_id"], float(h["_score"])) for h in response["hits"]["hits"]]
    return per_query_metrics(run, qs.qrels), time.perf_counter() - started


def run_fanned_out(
    engine: Engine,
    index: str,
    qs: QuerySet,
    stats: IdentifierStats,
    vocab: Vocabulary,
    settings: IdentifierSettings,
) -> tuple[dict[str, dict[str, float]], float]:
    """Per-query metrics of the identifiers mode as the wrapper sends a plain search on
    several shards: one request per shard (esqlog.identifiers.shards), merged by score."""
    from esqlog.engine.steps import Request
    from esqlog.wrapper.fan_out import merge_responses

    run: dict[str, list[tuple[str, float]]] = {}
    shards = stats.shards
    started = time.perf_counter()
    for start in range(0, len(qs.texts), 10):
        lines = []
        for text in qs.texts[start : start + 10]:
            plan = plan_identifier_query(text, stats, vocab.df_of, settings, 1)
            for k, query in enumerate(shard_queries(plan, stats, "body", settings)):
                lines += [
                    json.dumps({"index": index, "preference": f"_shards:{k}"}),
                    json.dumps(
                        {"query": query, "size": 100, "_source": False, "track_total_hits": False}
                    ),
                ]
        found = engine.perform(Request("POST", "/_msearch", body="\n".join(lines) + "\n"))
        answers = found["responses"]
        for i, qid in enumerate(qs.ids[start : start + 10]):
            merged = merge_responses(answers[i * shards : (i + 1) * shards], 0, 0, 100, False)
            if merged is None:
                raise RuntimeError(f"query {qid} failed on a shard")
            run[qid] = [(h["_id"], float(h["_score"])) for h in merged["hits"]["hits"]]
    return per_query_metrics(run, qs.qrels), time.perf_counter() - started


def by_path(
    pq: dict[str, dict[str, dict[str, float]]], qs: QuerySet, paths: dict[str, str], part: str
) -> dict[str, dict[str, float]]:
    """Each system's NDCG@10 over the queries whose gold document's path holds ``part`` and
    over the rest (how docs/benchmarks/identifiers.md splits Go's go-playground/locales off)."""
    inside = [part in paths[gold] for gold in qs.gold or []]
    out: dict[str, dict[str, float]] = {}
    for label, want in ((f"gold path holds {part!r}", True), ("the rest", False)):
        ids = [qid for qid, hit in zip(qs.ids, inside, strict=True) if hit == want]
        out[f"{label} ({len(ids)})"] = {
            name: float(np.mean([per[qid]["NDCG@10"] for qid in ids])) if ids else 0.0
            for name, per in pq.items()
        }
    return out


def bench_index(corpus: str, size: str, analyzer: str, shards: int) -> str:
    """The bench index of one corpus, size and analyzer; several shards end in -Ns."""
    return f"esqlog-bench-{corpus}-{size}-{analyzer}" + (f"-{shards}s" if shards > 1 else "")


def _variant_query(
    text: str,
    stats: IdentifierStats,
    vocab: Vocabulary,
    settings: IdentifierSettings,
    lists: str | None,
) -> dict[str, Any]:
    """One variant's query: select "all" as the wrapper sends it to the nodes
    (esqlog_identifiers: every compound of each word, planned on the node from the word lists
    calibrate wrote), any other as the client plans it."""
    if settings.select == "all":
        if not lists:
            raise SystemExit("select=all needs the word lists: a node with esqlog-terms 1.11.0")
        budget = settings.budget_for(stats.shards, True)
        return node_plan.node_clause(
            weigh_words(text, stats, vocab.df_of, settings), "body", lists, budget
        )
    return identifier_query(text, "body", stats, vocab.df_of, settings)


def run_one(
    engine: Engine, args: argparse.Namespace, corpus: str, size: str
) -> list[dict[str, Any]]:
    docs, query_sets = quality.subset(args.data / corpus, size, args.seed)
    std_index = bench_index(corpus, size, "standard", args.shards)
    code_index = bench_index(corpus, size, "code", args.shards)
    quality.ensure_index(engine, std_index, docs, "standard", args.shards)
    if args.code:
        quality.ensure_index(engine, code_index, docs, "code", args.shards)
    search_type = "dfs_query_then_fetch" if args.shards > 1 else None
    seconds: dict[str, float] = {}
    if args.time_calibrate:
        t0 = time.perf_counter()
        calibrate_with_vocabulary(engine, std_index, "body")
        seconds["vocabulary"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    found = calibrate_identifiers(engine, std_index, "body")
    seconds["vocabulary+identifiers"] = time.perf_counter() - t0
    seconds["identifiers_build"] = found.build_seconds
    if any(parse_variant(v)[1].select == "all" for v in args.variants):
        # select "all" is planned on the nodes from the word lists, which esqlog calibrate
        # writes when it saves the calibration: saved so, into a scratch file
        with tempfile.TemporaryDirectory() as scratch:
            record = save_with_word_lists(found, Path(scratch) / "bench.qlog.json", engine)[0]
        found = dataclasses.replace(found, record=record)
    cal, vocab, stats = found.record, found.vocabulary, found.stats
    code_q = calibrate(engine, code_index, "body").q if args.code else None
    print(
        f"{corpus} {size}: N={cal.doc_count} q={cal.q} split q={stats.q} "
        f"h_split={stats.h_tok:.4f} words={len(stats.words)} calib={seconds}",
        flush=True,
    )
    rows = []
    for style in args.styles.split(","):
        queries = query_sets[style][args.query_offset : args.query_offset + args.max_queries]
        if not queries:
            continue
        qs = QuerySet(
            [q.qid for q in queries], [q.text for q in queries], [q.gold for q in queries]
        )
        pq: dict[str, dict[str, dict[str, float]]] = {}
        ev = evaluate_queries(
            engine, std_index, "body", qs, [cal.q], shards=args.shards, token_metric=False
        )
        pq["standard native"] = ev.per_query["native"]
        pq["standard q-log"] = ev.per_query[system_label(cal.q)]
        if code_q is not None:
            ev = evaluate_queries(
                engine, code_index, "body", qs, [code_q], shards=args.shards, token_metric=False
            )
            pq["code native"] = ev.per_query["native"]
            pq["code q-log"] = ev.per_query[system_label(code_q)]
        timing: dict[str, float] = {}
        for name, settings in (parse_variant(v) for v in args.variants):
            # the plugin's groups score alike on every shard: one plain search, as the wrapper
            node = settings.select == "all"  # planned on the nodes, one plain search
            if (
                settings.fan_out
                and stats.per_shard
                and settings.engine_query != "plugin"
                and not node
            ):
                pq[name], timing[name] = run_fanned_out(
                    engine, std_index, qs, stats, vocab, settings
                )
                continue
            bodies = [
                {"query": _variant_query(t, stats, vocab, settings, cal.word_lists)}
                for t in qs.texts
            ]
            pq[name], timing[name] = run_bodies(engine, std_index, qs, bodies, search_type)
            if name != "identifiers":
                continue
            for window in args.windows:
                rs = [
                    rescored(boost_query(t, "body", vocab, cal.q), b["query"], window)
                    for t, b in zip(qs.texts, bodies, strict=True)
                ]
                pq[f"rescore@{window}"], timing[f"rescore@{window}"] = run_bodies(
                    engine, std_index, qs, rs, search_type
                )
        # each system against the baselines and against the first variant (the paired
        # difference a variant's change makes, query by query)
        first = parse_variant(args.variants[0])[0] if args.variants else None
        bases: tuple[str, ...] = ("code native", "code q-log", "standard native", "standard q-log")
        bases += (first,) if first and first not in bases else ()
        systems = {}
        for name, per in pq.items():
            values = [per[qid]["NDCG@10"] for qid in qs.ids]
            low, high = bootstrap_mean(values)
            entry: dict[str, Any] = {"ndcg10": float(np.mean(values)), "ci": [low, high]}
            for base in bases:
                if base in pq and base != name:
                    other = [pq[base][qid]["NDCG@10"] for qid in qs.ids]
                    b = paired_bootstrap(other, values, n_resamples=2000)
                    entry[f"vs {base}"] = [b.mean_diff, b.low, b.high]
            systems[name] = entry
        parts = (
            by_path(pq, qs, {d["id"]: d["path"] for d in docs}, args.split_path)
            if args.split_path
            else {}
        )
        row = {
            "corpus": corpus,
            "size": size,
            "shards": args.shards,
            "docs": len(docs),
            "query_offset": args.query_offset,
            "queries": style,
            "n_queries": len(queries),
            "q": cal.q,
            "split_q": stats.q,
            "split_h_tok": stats.h_tok,
            "code_q": code_q,
            "calibrate_seconds": seconds,
            "systems": systems,
            "msearch_seconds": timing,
            **({"by_path": parts} if parts else {}),
        }
        rows.append(row)
        print(
            f"  {style}: " + "  ".join(f"{k}={v['ndcg10']:.4f}" for k, v in systems.items()),
            flush=True,
        )
        for part, means in parts.items():
            print(f"    {part}: " + "  ".join(f"{k}={v:.4f}" for k, v in means.items()), flush=True)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_url(parser)
    parser.add_argument("--data", type=Path, default=Path("data/corpora"))
    parser.add_argument("--corpora", default="go,java,python,ruby,man")
    parser.add_argument("--sizes", default="30000,full")
    parser.add_argument("--styles", default="names,no-names")
    parser.add_argument("--max-queries", type=int, default=500)
    parser.add_argument("--windows", type=lambda s: [int(x) for x in s.split(",") if x], default=[])
    parser.add_argument(
        "--variants",
        type=lambda s: [x for x in s.split(";") if x],
        default=["default", "b=1000,smd=1", "b=300,smd=0.01,common=own,q=pred"],
        help="Identifiers settings to run, ';'-separated, each like "
        "'b=500,smd=0.05,common=split,q=0.8' (q=pred: calibrate's prediction); "
        "'default' is the defaults.",
    )
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument(
        "--query-offset",
        type=int,
        default=0,
        help="Skip this many queries of each set: a held-out slice to choose "
        "settings on (e.g. 1000), apart from the reported first ones.",
    )
    parser.add_argument(
        "--shards",
        type=int,
        default=1,
        help="Shards of the bench indices (names end in -Ns); several are "
        "searched with dfs_query_then_fetch, as the weights assume.",
    )
    parser.add_argument(
        "--split-path",
        default="",
        help="Also report each system over the queries whose gold document's "
        "path holds this text and over the rest (e.g. go-playground/locales).",
    )
    parser.add_argument(
        "--no-code",
        dest="code",
        action="store_false",
        help="Skip the code-analyzer reindex (it needs OpenSearch).",
    )
    parser.add_argument(
        "--time-calibrate",
        action="store_true",
        help="Also time calibrate --vocabulary alone, for the ratio.",
    )
    parser.add_argument("--index-only", action="store_true")
    add_out(parser, "results/identifiers.jsonl")
    args = parser.parse_args()
    engine = engine_at(args.url, timeout=600)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    for corpus in args.corpora.split(","):
        for size in args.sizes.split(","):
            if args.index_only:
                docs, _ = quality.subset(args.data / corpus, size, args.seed)
                for analyzer in ("standard", "code") if args.code else ("standard",):
                    spent = quality.ensure_index(
                        engine,
                        bench_index(corpus, size, analyzer, args.shards),
                        docs,
                        analyzer,
                        args.shards,
                    )
                    print(f"indexed {corpus} {size} {analyzer} in {spent:.0f}s", flush=True)
                continue
            for row in run_one(engine, args, corpus, size):
                append_jsonl(args.out, row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
