"""Run query sets through a real engine natively and with q-log IDF, fast enough for sweeps.

The wrapper does one statistics round trip per search. A q sweep over thousands of queries
would repeat that for every q, so experiments resolve each query's terms and global
statistics once, build the rewritten bodies for every q with the same pure rewriter the
wrapper uses, and send them in ``_msearch`` batches.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from esqlog.engine.client import Engine
from esqlog.engine.paths import index_path
from esqlog.engine.steps import Request
from esqlog.evaluation.trec import Qrels, Run
from esqlog.scoring.joins import proposed_candidates
from esqlog.scoring.rewrite import (
    FieldCalibration,
    RewriteSettings,
    resolved_from_stats,
    rewrite_query,
)
from esqlog.statistics.analysis import search_analyses_plan
from esqlog.statistics.terms import TextStats, shard_routings_plan, texts_stats_plan

RESOLVE_BATCH = 25
MSEARCH_BATCH = 50


@dataclass(frozen=True)
class QuerySet:
    """Queries with their judgments: one gold document each (as scripts/corpora builds
    them), or any graded judgments (``judgments``, e.g. read from BEIR or TREC qrels)."""

    ids: list[str]
    texts: list[str]
    gold: list[str] | None = None
    judgments: Qrels | None = None

    @property
    def qrels(self) -> Qrels:
        if self.judgments is not None:
            return {qid: self.judgments[qid] for qid in self.ids}
        assert self.gold is not None, "a QuerySet needs gold or judgments"
        return {qid: {g: 1} for qid, g in zip(self.ids, self.gold, strict=True)}


def resolve_all(
    engine: Engine,
    index: str,
    field_name: str,
    texts: Sequence[str],
    shards: int,
    progress: Callable[[int], None] | None = None,
    joins: bool = False,
) -> list[TextStats]:
    """Analyzed terms and global statistics of every query (batched round trips)."""
    routings = engine.run(shard_routings_plan(index, shards))
    # analyzed as the engine analyzes the match query: the field's search analyzer
    analyzers = engine.run(search_analyses_plan(index, [field_name], {})).per_field()
    out: list[TextStats] = []
    for start in range(0, len(texts), RESOLVE_BATCH):
        chunk = [(field_name, t) for t in texts[start : start + RESOLVE_BATCH]]
        keys = list(dict.fromkeys(chunk))
        extra = {k: proposed_candidates(k[1]) for k in keys} if joins else None
        found = engine.run(texts_stats_plan(index, keys, routings, analyzers, extra_terms=extra))
        out.extend(found[key] for key in chunk)
        if progress is not None:
            progress(len(chunk))
    return out


def qlog_query(
    field_name: str,
    text: str,
    stats: TextStats,
    q: float,
    mode: str = "boost",
    operator: str = "or",
    join_weight: float | None = None,
) -> dict[str, Any]:
    """The query clause esqlog sends for ``text`` at this q (with joins when weighted)."""
    match = {"match": {field_name: {"query": text, "operator": operator}}}
    resolved = {(field_name, text): resolved_from_stats(stats)}
    settings = RewriteSettings(
        {field_name: FieldCalibration(q)},
        "script" if mode == "script" else "boost",
        join_weight=join_weight,
    )
    return rewrite_query(match, resolved, settings)


def native_query(field_name: str, text: str, operator: str = "or") -> dict[str, Any]:
    return {"match": {field_name: {"query": text, "operator": operator}}}


def hit_id(hit: Mapping[str, Any], id_field: str | None) -> str | None:
    """The document id a judgment names: ``_id``, or the value of ``id_field`` in
    ``_source`` (dotted paths walk objects; the first value of a list), None if absent."""
    if id_field is None:
        return str(hit["_id"])
    value: Any = hit.get("_source") or {}
    for part in id_field.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    if isinstance(value, list):
        value = value[0] if value else None
    return None if value is None or isinstance(value, dict | list) else str(value)


def msearch_run(
    engine: Engine,
    index: str,
    qids: Sequence[str],
    queries: Sequence[dict[str, Any]],
    size: int = 100,
    search_type: str | None = None,
    id_field: str | None = None,
    source_ids: dict[str, str] | None = None,
    progress: Callable[[int], None] | None = None,
) -> tuple[Run, float]:
    """Rankings of every query via _msearch batches, and the wall time spent.

    With ``id_field`` each hit is named by that field's value (hits without it are left
    out) and ``source_ids`` collects value -> ``_id`` for later ``_mget`` calls.
    """
    run: Run = {}
    started = time.perf_counter()
    header: dict[str, Any] = {"index": index}
    if search_type:
        header["search_type"] = search_type
    for start in range(0, len(queries), MSEARCH_BATCH):
        lines = []
        for query in queries[start : start + MSEARCH_BATCH]:
            lines.append(json.dumps(header))
            lines.append(
                json.dumps(
                    {
                        "query": query,
                        "size": size,
                        "_source": [id_field] if id_field else False,
                        "track_total_hits": False,
                    }
                )
            )
        body = engine.perform(Request("POST", "/_msearch", body="\n".join(lines) + "\n"))
        if progress is not None:
            progress(len(lines) // 2)
        for qid, response in zip(
            qids[start : start + MSEARCH_BATCH], body["responses"], strict=True
        ):
            if "error" in response:
                raise RuntimeError(f"query {qid} failed: {response['error']}")
            ranked = run[qid] = []
            for h in response["hits"]["hits"]:
                name = hit_id(h, id_field)
                if name is not None:
                    ranked.append((name, float(h["_score"])))
                    if source_ids is not None:
                        source_ids.setdefault(name, str(h["_id"]))
    return run, time.perf_counter() - started


def sweep(
    engine: Engine,
    index: str,
    field_name: str,
    queries: QuerySet,
    stats: Sequence[TextStats],
    qs: Sequence[float],
    size: int = 100,
    shards: int = 1,
    join_weight: float | None = None,
    mode: str = "boost",
    id_field: str | None = None,
    source_ids: dict[str, str] | None = None,
    progress: Callable[[int], None] | None = None,
) -> dict[float, Run]:
    """One run per q (q = 1.0 is native BM25 exactly, by construction of the weights)."""
    search_type = "dfs_query_then_fetch" if shards > 1 else None
    runs: dict[float, Run] = {}
    for q in qs:
        bodies = [
            qlog_query(field_name, text, s, q, mode, join_weight=join_weight)
            if s.terms
            else native_query(field_name, text)
            for text, s in zip(queries.texts, stats, strict=True)
        ]
        runs[q], _ = msearch_run(
            engine, index, queries.ids, bodies, size, search_type, id_field, source_ids, progress
        )
    return runs


def fetch_token_counts(
    engine: Engine,
    index: str,
    field_name: str,
    doc_ids: Sequence[str],
    batch: int = 500,
) -> dict[str, int]:
    """Approximate LLM tokens of each document's field text (for Recall@8K-tokens)."""
    from esqlog.evaluation.metrics import count_tokens

    counts: dict[str, int] = {}
    unique = list(dict.fromkeys(doc_ids))
    for start in range(0, len(unique), batch):
        body = engine.perform(
            Request(
                "POST",
                index_path(index, "_mget"),
                {"_source_includes": field_name},
                {"ids": unique[start : start + batch]},
            )
        )
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
    engine: Engine,
    index: str,
    field_name: str,
    queries: QuerySet,
    qs: Sequence[float],
    shards: int = 1,
    predicted_q: float | None = None,
    size: int = 100,
    progress: Callable[[int], None] | None = None,
    token_metric: bool = True,
    mode: str = "boost",
    join_weight: float | None = None,
    measures: Mapping[str, str] | None = None,
    id_field: str | None = None,
) -> Evaluation:
    """Native BM25 (a real match query) and q-log at every q, with all metrics per query
    (``measures``: see esqlog.evaluation.metrics.metric_measures; documents named by ``_id`` or by
    ``id_field``). ``progress`` counts queries resolved, then searched by each system: in all
    ``len(queries.ids) * (2 + len(qs))``."""
    from esqlog.evaluation.metrics import TOKEN_METRIC, mean_metrics, per_query_metrics

    stats = resolve_all(
        engine, index, field_name, queries.texts, shards, progress, joins=join_weight is not None
    )
    search_type = "dfs_query_then_fetch" if shards > 1 else None
    source_ids: dict[str, str] = {}
    native, _ = msearch_run(
        engine,
        index,
        queries.ids,
        [native_query(field_name, t) for t in queries.texts],
        size,
        search_type,
        id_field,
        source_ids,
        progress,
    )
    runs = sweep(
        engine,
        index,
        field_name,
        queries,
        stats,
        qs,
        size,
        shards,
        join_weight,
        mode,
        id_field,
        source_ids,
        progress,
    )
    tokens = None
    if token_metric and (measures is None or TOKEN_METRIC in measures.values()):
        # one _mget of every retrieved document: skipped in large sweeps
        by_source = {
            source_ids.get(d, d): d
            for run in (native, *runs.values())
            for hits in run.values()
            for d, _ in hits
        }
        counted = fetch_token_counts(engine, index, field_name, list(by_source))
        tokens = {by_source[s]: n for s, n in counted.items() if s in by_source}
    per_query = {"native": per_query_metrics(native, queries.qrels, tokens, measures)}
    for q, run in runs.items():
        per_query[system_label(q)] = per_query_metrics(run, queries.qrels, tokens, measures)
    means = {label: mean_metrics(pq) for label, pq in per_query.items()}
    return Evaluation(native, runs, per_query, means, predicted_q)


def id_field_plan_check(engine: Engine, index: str, id_field: str) -> None:
    """Refuse an ``--id-field`` that cannot name documents exactly (absent, or analyzed).

    Judgments name documents by exact strings; a ``text`` field matches analyzed tokens,
    so ``Foo_Bar`` would never be found (or ``foo`` would find ``Foo``).
    """
    from esqlog.errors import UsageError

    body = engine.perform(Request("GET", index_path(index, "_mapping", "field", id_field)))
    types = {
        m.get("mapping", {}).get(id_field.rsplit(".", 1)[-1], {}).get("type")
        for entry in body.values()
        for m in (entry.get("mappings") or {}).values()
    }
    types.discard(None)
    if not types:
        raise UsageError(
            f"index {index!r} has no field {id_field!r} (--id-field)",
            "pass the field that holds the ids your judgments use, or omit --id-field to use _id",
        )
    if types & {"text", "match_only_text"}:
        raise UsageError(
            f"--id-field {id_field!r} is a text field: its values are analyzed, "
            "so ids cannot be matched exactly",
            f"pass a keyword field (e.g. {id_field}.keyword if it exists)",
        )


def missing_documents(
    engine: Engine,
    index: str,
    doc_ids: Sequence[str],
    id_field: str | None = None,
    batch: int = 1000,
) -> list[str]:
    """The ids of ``doc_ids`` that no document of ``index`` has (read-only searches).

    Why ask: a judgment for a document the index does not hold can never be retrieved, so
    it caps recall below 1; a user comparing with published numbers needs to know.
    """
    unique = list(dict.fromkeys(doc_ids))
    found: set[str] = set()
    for start in range(0, len(unique), batch):
        chunk = unique[start : start + batch]
        query = {"ids": {"values": chunk}} if id_field is None else {"terms": {id_field: chunk}}
        body = engine.perform(
            Request(
                "POST",
                index_path(index, "_search"),
                body={
                    "query": query,
                    "size": 2 * len(chunk),
                    "track_total_hits": False,
                    "_source": [id_field] if id_field else False,
                },
            )
        )
        for hit in body["hits"]["hits"]:
            name = hit_id(hit, id_field)
            if name is not None:
                found.add(name)
    return [d for d in unique if d not in found]
