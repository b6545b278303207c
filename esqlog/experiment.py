"""Run query sets through a real engine natively and with q-log IDF, fast enough for sweeps.

The wrapper does one statistics round trip per search. A q sweep over thousands of queries
would repeat that for every q, so experiments resolve each query's terms and global
statistics once, build the rewritten bodies for every q with the same pure rewriter the
wrapper uses, and send them in ``_msearch`` batches.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from esqlog.analysis import search_analyses_plan
from esqlog.engine import Engine, Request
from esqlog.evaluate import Qrels, Run
from esqlog.joins import proposed_candidates
from esqlog.rewrite import (
    FieldCalibration,
    RewriteSettings,
    resolved_from_stats,
    rewrite_query,
)
from esqlog.stats import TextStats, shard_routings_plan, texts_stats_plan

RESOLVE_BATCH = 25
MSEARCH_BATCH = 50


@dataclass(frozen=True)
class QuerySet:
    """Queries with one gold document each, as built by scripts/corpora."""

    ids: list[str]
    texts: list[str]
    gold: list[str]

    @property
    def qrels(self) -> Qrels:
        return {qid: {g: 1} for qid, g in zip(self.ids, self.gold, strict=True)}


def resolve_all(
    engine: Engine, index: str, field_name: str, texts: Sequence[str], shards: int,
    progress: Callable[[int], None] | None = None, joins: bool = False,
) -> list[TextStats]:
    """Analyzed terms and global statistics of every query (batched round trips)."""
    routings = engine.run(shard_routings_plan(index, shards))
    # analyzed as the engine analyzes the match query: the field's search analyzer
    analyzers = engine.run(search_analyses_plan(index, [field_name], {})).per_field()
    out: list[TextStats] = []
    for start in range(0, len(texts), RESOLVE_BATCH):
        chunk = [(field_name, t) for t in texts[start:start + RESOLVE_BATCH]]
        keys = list(dict.fromkeys(chunk))
        extra = {k: proposed_candidates(k[1]) for k in keys} if joins else None
        found = engine.run(texts_stats_plan(index, keys, routings, analyzers,
                                            extra_terms=extra))
        out.extend(found[key] for key in chunk)
        if progress is not None:
            progress(len(chunk))
    return out


def qlog_query(field_name: str, text: str, stats: TextStats, q: float, mode: str = "boost",
               operator: str = "or", join_weight: float | None = None) -> dict[str, Any]:
    """The query clause esqlog sends for ``text`` at this q (with joins when weighted)."""
    match = {"match": {field_name: {"query": text, "operator": operator}}}
    resolved = {(field_name, text): resolved_from_stats(stats)}
    settings = RewriteSettings({field_name: FieldCalibration(q)},
                               "script" if mode == "script" else "boost",
                               join_weight=join_weight)
    return rewrite_query(match, resolved, settings)


def native_query(field_name: str, text: str, operator: str = "or") -> dict[str, Any]:
    return {"match": {field_name: {"query": text, "operator": operator}}}


def msearch_run(
    engine: Engine, index: str, qids: Sequence[str], queries: Sequence[dict[str, Any]],
    size: int = 100, search_type: str | None = None,
) -> tuple[Run, float]:
    """Rankings of every query via _msearch batches, and the wall time spent."""
    run: Run = {}
    started = time.perf_counter()
    header: dict[str, Any] = {"index": index}
    if search_type:
        header["search_type"] = search_type
    for start in range(0, len(queries), MSEARCH_BATCH):
        lines = []
        for query in queries[start:start + MSEARCH_BATCH]:
            lines.append(json.dumps(header))
            lines.append(json.dumps({"query": query, "size": size, "_source": False,
                                     "track_total_hits": False}))
        body = engine.perform(Request("POST", "/_msearch", body="\n".join(lines) + "\n"))
        for qid, response in zip(qids[start:start + MSEARCH_BATCH], body["responses"],
                                 strict=True):
            if "error" in response:
                raise RuntimeError(f"query {qid} failed: {response['error']}")
            run[qid] = [(h["_id"], float(h["_score"])) for h in response["hits"]["hits"]]
    return run, time.perf_counter() - started


def sweep(
    engine: Engine, index: str, field_name: str, queries: QuerySet, stats: Sequence[TextStats],
    qs: Sequence[float], size: int = 100, shards: int = 1, join_weight: float | None = None,
    mode: str = "boost",
) -> dict[float, Run]:
    """One run per q (q = 1.0 is native BM25 exactly, by construction of the weights)."""
    search_type = "dfs_query_then_fetch" if shards > 1 else None
    runs: dict[float, Run] = {}
    for q in qs:
        bodies = [
            qlog_query(field_name, text, s, q, mode, join_weight=join_weight) if s.terms
            else native_query(field_name, text)
            for text, s in zip(queries.texts, stats, strict=True)
        ]
        runs[q], _ = msearch_run(engine, index, queries.ids, bodies, size, search_type)
    return runs


def fetch_token_counts(
    engine: Engine, index: str, field_name: str, doc_ids: Sequence[str], batch: int = 500,
) -> dict[str, int]:
    """Approximate LLM tokens of each document's field text (for Recall@8K-tokens)."""
    from esqlog.evaluate import count_tokens

    counts: dict[str, int] = {}
    unique = list(dict.fromkeys(doc_ids))
    for start in range(0, len(unique), batch):
        body = engine.perform(Request("POST", f"/{index}/_mget",
                                      {"_source_includes": field_name},
                                      {"ids": unique[start:start + batch]}))
        for doc in body.get("docs", []):
            if doc.get("found"):
                text = (doc.get("_source") or {}).get(field_name) or ""
                counts[doc["_id"]] = count_tokens(text if isinstance(text, str) else str(text))
    return counts


@dataclass
class Evaluation:
    """Runs and metrics of one query set: native BM25 and q-log at each q."""

    native: Run
    runs: dict[float, Run]
    per_query: dict[str, dict[str, dict[str, float]]]  # system label -> qid -> metric -> value
    means: dict[str, dict[str, float]]
    predicted_q: float | None


def system_label(q: float) -> str:
    return f"q={q:g}"


def evaluate_queries(
    engine: Engine, index: str, field_name: str, queries: QuerySet, qs: Sequence[float],
    shards: int = 1, predicted_q: float | None = None, size: int = 100,
    progress: Callable[[int], None] | None = None, token_metric: bool = True,
    mode: str = "boost", join_weight: float | None = None,
) -> Evaluation:
    """Native BM25 (a real match query) and q-log at every q, with all metrics per query."""
    from esqlog.evaluate import mean_metrics, per_query_metrics

    stats = resolve_all(engine, index, field_name, queries.texts, shards, progress,
                        joins=join_weight is not None)
    search_type = "dfs_query_then_fetch" if shards > 1 else None
    native, _ = msearch_run(engine, index, queries.ids,
                            [native_query(field_name, t) for t in queries.texts], size,
                            search_type)
    runs = sweep(engine, index, field_name, queries, stats, qs, size, shards, join_weight, mode)
    tokens = None
    if token_metric:  # one _mget of every retrieved document: skipped in large sweeps
        all_ids = [d for run in (native, *runs.values()) for hits in run.values()
                   for d, _ in hits]
        tokens = fetch_token_counts(engine, index, field_name, all_ids)
    per_query = {"native": per_query_metrics(native, queries.qrels, tokens)}
    for q, run in runs.items():
        per_query[system_label(q)] = per_query_metrics(run, queries.qrels, tokens)
    means = {label: mean_metrics(pq) for label, pq in per_query.items()}
    return Evaluation(native, runs, per_query, means, predicted_q)
