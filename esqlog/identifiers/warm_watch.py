"""Keeping the nodes warm without a hand: ``esqlog plugin warm --watch SECONDS``.

Why: a node keeps the whole-word groups it read in memory only, so after it starts again
(or a shard copy moves to it) its first searches read their words: 1.8-2.3x the plain match
at p50 on a node just started, 1.2-1.4x once warmed (docs/benchmarks/identifiers.md). The
plugin cannot read ahead by itself (it knows no calibration: which words, in which order),
so a process that holds the calibrations (this one, run by a service manager) looks every
SECONDS at which nodes hold a started copy of each index and since when each runs (its JVM's
start time), and warms the nodes whose copies are new to it: a node started again, a copy
moved or added. A node already warmed at the same start time with the same copies costs two
small requests a look. Read only, as the warm itself (esqlog.identifiers.warm).

A watcher outlives the cluster's restarts: a look that fails (the node down, a refused
request) is said once, and the next look tries again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from esqlog.engine.failures import error_status
from esqlog.engine.paths import api_path, index_path
from esqlog.engine.steps import Plan, Request
from esqlog.errors import ClusterError
from esqlog.identifiers.settings import IdentifierSettings
from esqlog.identifiers.split_stats import IdentifierStats
from esqlog.identifiers.warm import Warmed, holders_of, warm_plan
from esqlog.progress import ProgressFactory
from esqlog.statistics.vocabulary import Vocabulary

#: (the node's JVM start time in ms, the shards of the index it holds a started copy of)
NodeKey = tuple[int, tuple[int, ...]]


@dataclass(frozen=True)
class WatchJob:
    """One calibration to keep warm: its index, field, word lists and statistics."""

    where: str  # how lines name it: "FILE: index/field"
    index: str
    field: str
    lists: str
    stats: IdentifierStats
    vocab: Vocabulary


def job_plan(
    job: WatchJob,
    share: float,
    most: int | None,
    progress: ProgressFactory = None,
    nodes: Collection[str] | None = None,
) -> Plan[Warmed]:
    """The warm of ``job``'s words with the wrapper's default settings (warm_plan)."""
    return warm_plan(
        job.index,
        job.field,
        job.lists,
        job.stats,
        job.vocab,
        IdentifierSettings(),
        share,
        most,
        progress,
        nodes,
    )


def node_keys_plan(index: str) -> Plan[dict[str, NodeKey]]:
    """node id -> NodeKey of every node holding a started copy of ``index``'s shards."""
    holders = holders_of((yield Request("GET", index_path(index, "_search_shards"))))
    info = yield Request(
        "GET", api_path("_nodes", "jvm"), {"filter_path": "nodes.*.jvm.start_time_in_millis"}
    )
    nodes = info.get("nodes") if isinstance(info, Mapping) else None
    starts: dict[str, int] = {}
    for node, body in (nodes if isinstance(nodes, Mapping) else {}).items():
        jvm = body.get("jvm") if isinstance(body, Mapping) else None
        start = jvm.get("start_time_in_millis") if isinstance(jvm, Mapping) else None
        starts[str(node)] = int(start) if isinstance(start, int) else 0
    return {node: (starts.get(node, 0), tuple(shards)) for node, shards in holders.items()}


def due(keys: Mapping[str, NodeKey], warmed: Mapping[str, NodeKey]) -> list[str]:
    """The nodes to warm: those whose start time or copies differ from those they were
    warmed with (every node, the first time)."""
    return sorted(node for node, key in keys.items() if warmed.get(node) != key)


def watch(
    run: Callable[[Plan[Any]], Any],
    jobs: Sequence[WatchJob],
    interval: float,
    say: Callable[[str], None],
    share: float = 0.5,
    most: int | None = None,
    rounds: int | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Warm each job's new nodes, look again every ``interval`` seconds; ``rounds``: stop
    after that many looks (None: until interrupted). ``run`` runs a plan (Engine.run)."""
    warmed: dict[str, dict[str, NodeKey]] = {}  # job -> node -> the key it was warmed at
    failing: set[str] = set()  # the jobs whose last look failed: said once
    looks = 0
    while rounds is None or looks < rounds:
        for job in jobs:
            try:
                keys = run(node_keys_plan(job.index))
                if job.where in failing:
                    failing.discard(job.where)
                    say(f"{job.where}: the cluster answers again")
                mine = warmed.setdefault(job.where, {})
                nodes = due(keys, mine)
                if nodes:
                    done = run(job_plan(job, share, most, nodes=nodes))
                    say(_warmed_line(job, done, keys))
                    mine.update({node: keys[node] for node in nodes})
            except Exception as exc:  # a watcher outlives the cluster's restarts
                if job.where not in failing:
                    failing.add(job.where)
                    say(f"{job.where}: {_failure(exc)}; looking again every {interval:g} s")
        looks += 1
        if rounds is None or looks < rounds:
            sleep(interval)


def _warmed_line(job: WatchJob, done: Warmed, keys: Mapping[str, NodeKey]) -> str:
    counts = ", ".join(f"{node} {n:,}" for node, n in sorted(done.words.items()))
    return (
        f"{job.where}: warmed words on node {counts} (of {len(keys)} holding it), "
        f"{done.grown_bytes / 1e6:.1f} MB, {done.seconds:.1f} s"
    )


def _failure(exc: Exception) -> str:
    """One line for a failed look, naming no credential (a client's message may hold the
    URL it was given)."""
    if isinstance(exc, ClusterError):
        return exc.problem
    status = error_status(exc)
    if status is not None:
        return f"the cluster answered HTTP {status}"
    return f"the cluster did not answer ({type(exc).__name__})"
