"""knn + query (hybrid search) through the wrapper on a multi-shard Elasticsearch index:
how close its ranking is to the exact global one, and what per-shard statistics would cost.

    python -m scripts.bench.hybrid_dfs --url http://127.0.0.1:19331 --docs 20000 --queries 200

Elasticsearch refuses ``search_type`` beside a top-level ``knn`` and runs such searches as
``dfs_query_then_fetch`` itself, so the wrapper sends no ``search_type`` there. This script
measures what that gives against the exact hybrid (the wrapped query scored with explicit
dfs, plus the knn scores, summed and ranked here), and, for comparison, the same sum with
per-shard statistics (``query_then_fetch``: what scores would be without any dfs). Vectors
are a fixed random projection of hashed words (deterministic; quality is not the point,
statistics are). Prints NDCG@10 against the exact ranking (gain: the exact hybrid score),
the share of queries whose top-10 is identical in order (up to ties), and the largest
relative score difference.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import sys
import uuid
from pathlib import Path
from typing import Any

import numpy as np

from esqlog.calibration.calibrate import calibrate
from esqlog.engine.client import Engine
from esqlog.engine.paths import index_path
from esqlog.engine.scratch import create_scratch, delete_scratch
from esqlog.engine.steps import Request
from esqlog.evaluation.corpus import load_queries, read_jsonl
from esqlog.wrapper import wrap
from scripts.bench.harness import add_url, engine_at

DIMS = 16
TOP = 10


def _embed(text: str, projection: np.ndarray) -> list[float]:
    counts = np.zeros(projection.shape[0])
    for word in re.findall(r"[a-z]+", text.lower())[:400]:
        counts[
            int(hashlib.blake2b(word.encode(), digest_size=4).hexdigest(), 16) % projection.shape[0]
        ] += 1.0
    vec = counts @ projection
    norm = float(np.linalg.norm(vec)) or 1.0
    return [round(float(v) / norm, 6) for v in vec]


def _build(engine: Engine, docs: list[dict[str, Any]], projection: np.ndarray, shards: int) -> str:
    index = f"esqlog-bench-hybrid-{uuid.uuid4().hex[:8]}"
    create_scratch(
        engine,
        index,
        "bench",
        {"number_of_shards": shards, "number_of_replicas": 0},
        {
            "body": {"type": "text"},
            "vec": {"type": "dense_vector", "dims": DIMS, "index": True, "similarity": "cosine"},
        },
        replace=False,
    )
    for start in range(0, len(docs), 2000):
        lines = []
        for doc in docs[start : start + 2000]:
            lines.append(json.dumps({"index": {"_index": index, "_id": doc["id"]}}))
            lines.append(json.dumps({"body": doc["text"], "vec": _embed(doc["text"], projection)}))
        engine.perform(Request("POST", "/_bulk", body="\n".join(lines) + "\n"))
    engine.perform(Request("POST", index_path(index, "_refresh")))
    return index


def _scores(response: Any) -> dict[str, float]:
    body = getattr(response, "body", response)
    return {h["_id"]: float(h["_score"]) for h in body["hits"]["hits"]}


def _ranked(scores: dict[str, float]) -> list[str]:
    return [d for d, _ in sorted(scores.items(), key=lambda item: (-item[1], item[0]))][:TOP]


def _ndcg(got: list[str], exact: dict[str, float]) -> float:
    """NDCG@10 with each document's exact hybrid score as its gain (ties cost nothing)."""
    ideal = sorted(exact.values(), reverse=True)[:TOP]
    dcg = sum(exact.get(d, 0.0) / math.log2(r + 2) for r, d in enumerate(got))
    best = sum(g / math.log2(r + 2) for r, g in enumerate(ideal))
    return dcg / best if best else 1.0


def _same(got: list[str], exact: dict[str, float]) -> bool:
    """The same top-10 up to ties: the exact scores, position by position."""
    ideal = sorted(exact.values(), reverse=True)[:TOP]
    return len(got) == len(ideal) and all(
        math.isclose(exact.get(d, -1.0), g, rel_tol=1e-5) for d, g in zip(got, ideal, strict=True)
    )


def _hybrid_sum(
    wrapped: Any, index: str, query: dict[str, Any], knn: dict[str, float], search_type: str
) -> dict[str, float]:
    """q-log query scores (global or per-shard statistics) + knn scores, every candidate."""
    top = _scores(
        wrapped.search(
            index=index, query=query, size=TOP + len(knn), search_type=search_type, source=False
        )
    )
    extra = _scores(
        wrapped.search(
            index=index,
            size=len(knn),
            search_type=search_type,
            source=False,
            query={"bool": {"must": [query], "filter": {"ids": {"values": list(knn)}}}},
        )
    )
    text = {**top, **extra}
    return {d: text.get(d, 0.0) + knn.get(d, 0.0) for d in {*text, *knn}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_url(parser, "http://127.0.0.1:19201")
    parser.add_argument("--data", type=Path, default=Path("/work/data/corpora/go"))
    parser.add_argument("--docs", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--shards", type=int, default=3)
    args = parser.parse_args()
    engine = engine_at(args.url, timeout=300)
    if engine.flavor != "elasticsearch":
        print("top-level knn is Elasticsearch's: pass an Elasticsearch URL", file=sys.stderr)
        return 2
    docs = [r for _, r in zip(range(args.docs), read_jsonl(args.data / "docs.jsonl"), strict=False)]
    projection = np.random.default_rng(13).standard_normal((4096, DIMS))
    index = _build(engine, docs, projection, args.shards)
    try:
        wrapped = wrap(engine.client, calibrate(engine, index, "body", sample=2000))
        rows = []
        for query_record in load_queries(args.data / "queries.jsonl")[: args.queries]:
            query = {"match": {"body": query_record.text}}
            knn = {
                "field": "vec",
                "query_vector": _embed(query_record.text, projection),
                "k": TOP,
                "num_candidates": 100,
            }
            sent = _scores(
                wrapped.search(index=index, query=query, knn=knn, size=TOP, source=False)
            )
            knn_scores = _scores(engine.client.search(index=index, knn=knn, size=TOP, source=False))
            exact = _hybrid_sum(wrapped, index, query, knn_scores, "dfs_query_then_fetch")
            local = _hybrid_sum(wrapped, index, query, knn_scores, "query_then_fetch")
            worst = max(abs(s - exact[d]) / max(exact[d], 1e-9) for d, s in sent.items())
            rows.append(
                (
                    _ndcg(_ranked(sent), exact),
                    _same(_ranked(sent), exact),
                    worst,
                    _ndcg(_ranked(local), exact),
                    _same(_ranked(local), exact),
                )
            )
    finally:
        delete_scratch(engine, index)
    n = len(rows)
    print(
        f"Elasticsearch {engine.label}, {len(docs)} Go docs, {args.shards} shards, "
        f"{n} queries, knn k={TOP} + match, q-log wrapper"
    )
    print(f"{'scoring of the query part':44} {'NDCG@10':>8} {'same top-10':>12}")
    print(
        f"{'wrapper (no search_type: ES runs dfs)':44} {sum(r[0] for r in rows) / n:8.4f} "
        f"{sum(r[1] for r in rows) / n:12.1%}"
    )
    print(
        f"{'per-shard statistics (query_then_fetch)':44} {sum(r[3] for r in rows) / n:8.4f} "
        f"{sum(r[4] for r in rows) / n:12.1%}"
    )
    print(f"largest relative score difference, wrapper vs exact: {max(r[2] for r in rows):.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
