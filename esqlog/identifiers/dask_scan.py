"""The identifiers scan as tasks on a Dask distributed cluster (``calibrate --dask``).

Why: the scan's split statistics are bound by one Python interpreter per shard
(esqlog.identifiers.processes); on one machine that is as many shards as it has cores.
A Dask cluster the user already runs spreads the shards over more machines. The statistics
do not change: each task runs the very scan a local worker process runs
(esqlog.identifiers.shard_task.scan_shard) and the parent merges the shards in shard order,
so the files written are byte-identical to a local run's
(tests/engine/test_identifiers_dask.py).

What travels: each task carries the ConnectionSettings, credentials included (a client
does not pickle; the task opens its own), so the workers must be trusted with them, and
must reach the cluster. Back comes the shard's per-term tables and its postings (every
document's term ids, as int32 arrays in the result): a worker may be on another machine,
so its disk is used only while the task runs (its spill, deleted before it returns), and
the parent writes the postings into its own spill directory as each shard arrives.
``distributed`` is imported here only, when asked for: the extra ``distributed``.
"""

from __future__ import annotations

import importlib.util
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from esqlog.engine.client import Flavor
from esqlog.engine.connection import ConnectionSettings
from esqlog.errors import ClusterError, UsageError
from esqlog.identifiers.memory import MemoryLimit
from esqlog.identifiers.postings import PostingLog
from esqlog.identifiers.scan import SplitCollector
from esqlog.identifiers.shard_tables import ShardTables
from esqlog.identifiers.shard_task import ShardPart, discard_parts, merge_shards, scan_shard
from esqlog.statistics.vocabulary import VocabularyScan
from esqlog.statistics.vocabulary_scan import Progress, ShardScan

#: seconds to wait for the scheduler before saying it cannot be reached
DEFAULT_CONNECT_TIMEOUT = 10.0
EXTRA_FIX = "install the distributed extra: pip install 'esqlog[distributed]'"
#: what a task sends back: the shard's counts, its tables as arrays (postings emptied) and the
#: postings themselves (term ids, document lengths)
_Result = tuple[ShardScan, ShardTables, np.ndarray, np.ndarray]


def require_distributed() -> None:
    """UsageError naming the extra when ``distributed`` is not installed."""
    if importlib.util.find_spec("distributed") is None:
        raise UsageError("--dask needs the distributed package (not in a plain install)", EXTRA_FIX)


def _distributed() -> Any:
    """The ``distributed`` package, imported when a scan asks for it (it is untyped)."""
    require_distributed()
    return importlib.import_module("distributed")


@contextmanager
def dask_scheduler(address: str, timeout: float = DEFAULT_CONNECT_TIMEOUT) -> Iterator[Any]:
    """A ``distributed.Client`` of the scheduler at ``address``, closed on exit; one
    UsageError line when it cannot be reached within ``timeout`` seconds."""
    dask = _distributed()
    try:  # a malformed address leaves a half-made Client whose finaliser prints a traceback
        scheme, location = dask.comm.addressing.parse_address(address)
        if scheme in ("tcp", "tls"):
            dask.comm.addressing.parse_host_port(location)
    except (ValueError, TypeError) as exc:
        raise UsageError(
            f"--dask {address!r} is not a scheduler address ({exc})",
            "pass the address the scheduler prints, e.g. --dask tcp://HOST:8786",
        ) from None
    try:
        client = dask.Client(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError, ValueError, TypeError) as exc:
        reason = " ".join(str(exc).split())[:120] or type(exc).__name__
        raise UsageError(
            f"cannot reach the Dask scheduler at {address!r} ({reason})",
            "start it (dask scheduler) and pass the address it prints, e.g. --dask tcp://HOST:8786",
        ) from None
    try:
        yield client
    finally:
        client.close()


def _scan_task(
    connection: ConnectionSettings,
    flavor: Flavor,
    index: str,
    field_name: str,
    shard: int,
    memory: MemoryLimit,
    processes: int,
) -> _Result:
    """On a Dask worker: one shard's scan (spilling to the worker's temporary directory
    while it runs), its postings read back into the result and the spill deleted."""
    part, seen = scan_shard(connection, flavor, index, field_name, shard, memory, processes, None)
    try:
        terms, lengths = seen.postings.export()
    finally:
        seen.postings.discard()
    return part, seen, terms, lengths


def _received(result: _Result, into: SplitCollector) -> ShardPart:
    """A task's result as a local part: its postings written to ``into``'s spill
    directory, under ``into``'s buffer budget, before the merge reads them."""
    part, seen, terms, lengths = result
    seen.postings = PostingLog(into.postings.buffer_bytes, into.spill_dir)
    seen.postings.adopt(terms, lengths)
    return part, seen


def scan_on_dask(
    client: Any,
    connection: ConnectionSettings,
    flavor: Flavor,
    index: str,
    field_name: str,
    shards: int,
    collector: SplitCollector,
    progress: Progress | None = None,
) -> VocabularyScan:
    """Every shard's scan as one task on ``client``'s cluster, merged into ``collector``
    in shard order; the global df and ttf of every term.

    Progress is reported a shard at a time, as tasks finish. A failed task cancels the
    others and deletes the postings already received; a worker lost mid-task is one
    ClusterError line.
    """
    dask = _distributed()
    lost = (dask.client.FutureCancelledError, dask.scheduler.KilledWorker)
    run = uuid.uuid4().hex[:12]  # a retried scan submits new tasks, under new keys
    futures = {
        client.submit(
            _scan_task,
            connection,
            flavor,
            index,
            field_name,
            shard,
            collector.memory,
            max(collector.processes, 1),
            pure=False,
            key=f"esqlog-scan-{run}-shard-{shard}",
        ): shard
        for shard in range(shards)
    }
    parts: dict[int, ShardPart] = {}
    try:
        for future in dask.as_completed(futures, loop=client.loop):
            shard = futures[future]
            parts[shard] = _received(future.result(), collector)  # a failure raises
            future.release()  # the result leaves the worker's memory
            if progress is not None:
                progress(parts[shard][0].docs)
    except lost as exc:
        client.cancel(list(futures))
        discard_parts(parts)
        raise ClusterError(
            f"the Dask cluster lost a scan task ({type(exc).__name__}: "
            f"{' '.join(str(exc).split())[:120]})",
            "check the workers' logs (memory, a restart) and run again",
        ) from None
    except BaseException:
        client.cancel(list(futures))
        discard_parts(parts)
        raise
    return merge_shards(parts, shards, collector, index, field_name)
