"""Quality experiments on a real engine: q sweeps per corpus, size and analyzer, with and
without the function's own name in the query, plus each predictor's q.

    python -m scripts.bench.quality --url http://127.0.0.1:19200 --corpora go,java \
        --sizes 1000,10000,full --analyzers standard,code --out results/quality.jsonl

Corpora come from scripts/corpora/build.py (data/corpora/<name>/). A size below the corpus
size keeps up to size/10 queries (seeded) with their gold documents and fills up with a
uniform seeded sample of the other documents. Each (corpus, size, analyzer) gets its own
scratch index, reused when it already holds the right number of documents. One JSON line
per experiment is appended to --out.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from typing import Any

from esqlog.calibration.calibrate import calibrate
from esqlog.engine.client import Engine
from esqlog.engine.paths import index_path
from esqlog.engine.steps import Request
from esqlog.evaluation.corpus import bulk_index_docs, create_corpus_index, load_queries, read_jsonl
from esqlog.evaluation.sweeps import QuerySet, evaluate_queries, system_label
from esqlog.scoring.qlog import PREDICTORS, CorpusFeatures
from scripts.bench.harness import add_out, add_url, append_jsonl, engine_at

SWEEP = (1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.0)


def subset(corpus_dir: Path, size: str, seed: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Documents and both query sets for one size of a corpus, each set in a seeded random
    order (the same for both sets), so that its first N queries are a random sample.

    Why the shuffle at full size: the corpus files list queries by source path, so their
    first 500 were one slice of the corpus (Go: the standard library; the 476 templated
    go-playground/locales queries came later). Full-size figures measured before this
    (3278ef3; the older entries of docs/benchmarks/identifiers.md's log) used that prefix.
    """
    docs = list(read_jsonl(corpus_dir / "docs.jsonl"))
    named = load_queries(corpus_dir / "queries.jsonl")
    noname = load_queries(corpus_dir / "queries_noname.jsonl")
    if size == "full" or int(size) >= len(docs):
        random.Random(seed).shuffle(named)
        order = {q.qid: i for i, q in enumerate(named)}
        noname.sort(key=lambda q: order.get(q.qid, len(order)))
        return docs, {"names": named, "no-names": noname}
    n = int(size)
    rng = random.Random(seed)
    keep = rng.sample(named, min(len(named), max(50, n // 10)))
    gold = {q.gold for q in keep}
    others = [d for d in docs if d["id"] not in gold]
    chosen = [d for d in docs if d["id"] in gold] + rng.sample(others, n - len(gold))
    kept_ids = {q.qid for q in keep}
    return chosen, {"names": keep, "no-names": [q for q in noname if q.qid in kept_ids]}


def ensure_index(
    engine: Engine, index: str, docs: list[dict[str, Any]], analyzer: str, shards: int = 1
) -> float:
    """Index the documents unless the index already holds exactly them; seconds spent."""
    try:
        count = engine.perform(Request("GET", index_path(index, "_count")))["count"]
        if count == len(docs):
            return 0.0
    except Exception:  # absent
        pass
    started = time.perf_counter()
    create_corpus_index(engine, index, analyzer=analyzer, shards=shards, replace=True)
    bulk_index_docs(engine, index, docs)
    engine.perform(Request("POST", index_path(index, "_forcemerge"), {"max_num_segments": 1}))
    return time.perf_counter() - started


def run_one(
    engine: Engine,
    corpus: str,
    size: str,
    analyzer: str,
    data: Path,
    seed: int,
    max_queries: int | None,
    styles: list[str],
) -> list[dict[str, Any]]:
    docs, query_sets = subset(data / corpus, size, seed)
    query_sets = {k: v[:max_queries] for k, v in query_sets.items() if k in styles}
    index = f"esqlog-bench-{corpus}-{size}-{analyzer}".lower()
    index_seconds = ensure_index(engine, index, docs, analyzer)
    t0 = time.perf_counter()
    cal = calibrate(engine, index, "body")
    calibrate_seconds = time.perf_counter() - t0
    features = CorpusFeatures(cal.h_tok, cal.doc_count, cal.avgdl)
    predictions = {name: p.predict(features) for name, p in PREDICTORS.items()}
    rows = []
    for style, queries in query_sets.items():
        if not queries:
            continue
        qs = QuerySet(
            [q.qid for q in queries], [q.text for q in queries], [q.gold for q in queries]
        )
        grid = sorted(set(SWEEP) | {round(v, 4) for v in predictions.values()}, reverse=True)
        t0 = time.perf_counter()
        result = evaluate_queries(engine, index, "body", qs, grid, token_metric=False)
        rows.append(
            {
                "corpus": corpus,
                "size": size,
                "docs": len(docs),
                "analyzer": analyzer,
                "queries": style,
                "n_queries": len(queries),
                "h_tok": cal.h_tok,
                "h_tok_ci": [cal.h_tok_low, cal.h_tok_high],
                "avgdl": cal.avgdl,
                "predictions": predictions,
                "native": result.means["native"],
                "sweep": {f"{q:g}": result.means[system_label(q)] for q in grid},
                "index_seconds": round(index_seconds, 1),
                "calibrate_seconds": round(calibrate_seconds, 2),
                "eval_seconds": round(time.perf_counter() - t0, 1),
            }
        )
        best = max(SWEEP, key=lambda q: result.means[system_label(q)]["NDCG@10"])
        print(
            f"{corpus:7s} {size:>6s} {analyzer:8s} {style:8s} h_tok={cal.h_tok:.4f} "
            f"native={result.means['native']['NDCG@10']:.4f} best q={best:g} "
            f"({result.means[system_label(best)]['NDCG@10']:.4f}) "
            + " ".join(
                f"{k}:q={v:.2f}->{result.means[system_label(round(v, 4))]['NDCG@10']:.4f}"
                for k, v in predictions.items()
            ),
            flush=True,
        )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_url(parser)
    parser.add_argument("--data", type=Path, default=Path("data/corpora"))
    parser.add_argument("--corpora", default="go,java,python,ruby,man")
    parser.add_argument("--sizes", default="1000,10000,full")
    parser.add_argument("--analyzers", default="standard")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument(
        "--max-queries",
        type=int,
        default=None,
        help="Use at most this many queries per query set (file order).",
    )
    parser.add_argument("--styles", default="names,no-names")
    add_out(parser, "results/quality.jsonl")
    args = parser.parse_args()
    engine = engine_at(args.url, timeout=300)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    for corpus in args.corpora.split(","):
        for size in args.sizes.split(","):
            for analyzer in args.analyzers.split(","):
                for row in run_one(
                    engine,
                    corpus,
                    size,
                    analyzer,
                    args.data,
                    args.seed,
                    args.max_queries,
                    args.styles.split(","),
                ):
                    append_jsonl(args.out, row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
