"""Run one query set through native BM25 and esqlog's modes, one search per query, timed.

Why one search at a time through ``esqlog.wrap`` (and not the batched ``_msearch`` of
esqlog.evaluation.sweeps): ``bench-beir`` and ``compare`` answer "what would my application get,
and how fast", so each system must be what an application runs: the client's own search for
native, the wrapped client (every statistics lookup and rewrite included) for each mode, and
the identifiers mode's plain query DSL built by esqlog.identifiers.query. Searches only read.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from esqlog.engine.client import Engine
from esqlog.evaluation.sweeps import hit_id
from esqlog.evaluation.trec import Run

#: The systems bench-beir runs, in report order (identifiers and script when available).
SYSTEMS: tuple[str, ...] = ("native", "boost", "boost+joins", "script", "rerank", "identifiers")

Search = Callable[[str], list[tuple[str, float]]]


@dataclass
class SystemRun:
    """One system's ranking of every query, and each search's wall time in seconds."""

    name: str
    run: Run = field(default_factory=dict)
    seconds: list[float] = field(default_factory=list)

    def latency_ms(self, quantile: float = 0.5) -> float:
        """A latency quantile in milliseconds (0.5: the median)."""
        if not self.seconds:
            return float("nan")
        if len(self.seconds) == 1:
            return self.seconds[0] * 1000
        cuts = statistics.quantiles(self.seconds, n=100, method="inclusive")
        return cuts[min(98, max(0, round(quantile * 100) - 1))] * 1000


@dataclass(frozen=True)
class Target:
    """Where the systems search: index, field, the calibration, and how hits are named."""

    engine: Engine
    index: str
    field: str
    calibration: Path
    size: int = 100
    id_field: str | None = None
    shards: int = 1


def _request(target: Target, query: dict[str, Any]) -> dict[str, Any]:
    """Keyword arguments for either client's own search (same request on both)."""
    source: Any = [target.id_field] if target.id_field else False
    kwargs: dict[str, Any] = {"index": target.index}
    if target.shards > 1:  # global statistics, as the q-log weights assume
        kwargs["search_type"] = "dfs_query_then_fetch"
    if target.engine.flavor == "opensearch":
        kwargs["body"] = {"query": query, "size": target.size, "_source": source}
    else:
        kwargs.update(query=query, size=target.size, source=source)
    return kwargs


def _hits(target: Target, response: Any) -> list[tuple[str, float]]:
    body = getattr(response, "body", response)
    out: list[tuple[str, float]] = []
    for hit in (body.get("hits") or {}).get("hits") or []:
        name = hit_id(hit, target.id_field)
        if name is not None:
            out.append((name, float(hit.get("_score") or 0.0)))
    return out


def searcher(target: Target, system: str) -> Search:
    """The search function of one system (native, boost, boost+joins, script, rerank,
    identifiers)."""
    client = target.engine.client
    if system == "native":
        return lambda text: _hits(
            target, client.search(**_request(target, {"match": {target.field: text}}))
        )
    if system == "identifiers":
        return _identifier_searcher(target)
    from esqlog.wrapper import wrap

    mode = "boost" if system == "boost+joins" else system
    wrapped = wrap(client, target.calibration, joins=system == "boost+joins")
    return lambda text: _hits(
        target,
        wrapped.search(**_request(target, {"match": {target.field: text}}), esqlog_mode=mode),
    )


def _identifier_searcher(target: Target) -> Search:
    """The identifiers mode: its query from the calibration's snapshot and split stats."""
    from esqlog.calibration.files import load_calibration
    from esqlog.identifiers.files import load_with_vocabulary
    from esqlog.identifiers.query import plan_identifier_query
    from esqlog.identifiers.settings import IdentifierSettings

    stats, vocab = load_with_vocabulary(load_calibration(target.calibration))
    settings = IdentifierSettings()
    client = target.engine.client

    def search(text: str) -> list[tuple[str, float]]:
        plan = plan_identifier_query(text, stats, vocab.df_of, settings)
        return _hits(target, client.search(**_request(target, plan.query(target.field, settings))))

    return search


def run_system(
    name: str,
    search: Search,
    qids: Sequence[str],
    texts: Sequence[str],
    progress: Callable[[int], None] | None = None,
) -> SystemRun:
    """Every query through one system, each search timed on its own."""
    out = SystemRun(name)
    if texts:  # one untimed search: connections, index resolution, snapshot loading
        search(texts[0])
    for qid, text in zip(qids, texts, strict=True):
        started = time.perf_counter()
        out.run[qid] = search(text)
        out.seconds.append(time.perf_counter() - started)
        if progress is not None:
            progress(1)
    return out


def run_paired(
    first: tuple[str, Search], second: tuple[str, Search], qids: Sequence[str], texts: Sequence[str]
) -> tuple[SystemRun, SystemRun]:
    """Two systems query by query, alternating which goes first.

    Why alternate: the second search of the same text finds the engine's caches warm (its
    terms' postings, the statistics); always running one system second would flatter it.
    """
    a, b = SystemRun(first[0]), SystemRun(second[0])
    if texts:  # one untimed search each: connections, index resolution, snapshot loading
        first[1](texts[0])
        second[1](texts[0])
    for i, (qid, text) in enumerate(zip(qids, texts, strict=True)):
        order = [(a, first[1]), (b, second[1])]
        for out, search in order if i % 2 == 0 else order[::-1]:
            started = time.perf_counter()
            out.run[qid] = search(text)
            out.seconds.append(time.perf_counter() - started)
    return a, b
