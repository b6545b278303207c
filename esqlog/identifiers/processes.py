"""The identifiers scan with one process per shard (``calibrate --vocabulary --identifiers``).

Why: the split statistics are collected in the client (each document's text is tokenised
and its casings split), and that work is bound by one Python interpreter: threads do not
help (tried: the same wall time for 40% more CPU), so the shards used to be read one after
another. Measured on Go 153K in 3 shards on 2 cores (docs/benchmarks/identifiers.md), the
scan then took 1.8-1.9x the wall time of ``--vocabulary`` alone, which reads shards at
once; with a process per shard 1.1-1.3x.

How: each worker process opens its own client from the same connection settings (a client
cannot cross processes), scans one shard (esqlog.statistics.vocabulary_scan.scan_shard_plan) with a
SplitCollector of its own and returns what it saw; the parent adds the shards up in shard
order (ScanMerger, esqlog.identifiers.scan.absorb), which gives exactly the statistics of one
collector reading the shards in turn (esqlog.identifiers.scan). Progress comes back through
a queue. Workers are spawned, not forked: the parent may hold threads and connections.
Only the CLI passes connection settings, so library callers keep the one-process scan.
"""

from __future__ import annotations

import multiprocessing
import threading
from concurrent.futures import FIRST_EXCEPTION, ProcessPoolExecutor, wait
from typing import Any

from esqlog.engine.client import Flavor
from esqlog.engine.connection import ConnectionSettings, connect
from esqlog.identifiers.memory import MemoryLimit
from esqlog.identifiers.scan import SplitCollector, absorb
from esqlog.statistics.vocabulary import VocabularyScan
from esqlog.statistics.vocabulary_scan import Progress, ScanMerger, ShardScan, scan_shard_plan

_progress: Any = None  # the worker's end of the progress queue (set by _start)


def _start(queue: Any) -> None:
    global _progress
    _progress = queue


def _scan_shard(connection: ConnectionSettings, flavor: Flavor, index: str, field_name: str,
                shard: int, memory: MemoryLimit, processes: int,
                spill_dir: str | None) -> tuple[ShardScan, SplitCollector]:
    """One shard's scan, in a worker process: its postings written to disk (the parent
    reads them from there), its per-term tables sent back."""
    engine = connect(connection, flavor)
    collector = SplitCollector(field_name, memory, processes, spill_dir)
    report = None if _progress is None else _progress.put
    try:
        part = engine.run(scan_shard_plan(index, field_name, shard, progress=report,
                                          on_doc=collector))
        collector.finish()
        collector.postings.flush()
    except BaseException:
        collector.discard()
        raise
    collector.tried = set()  # a cache of the scan, not sent back
    collector.term_id = {}  # absorb reads the terms in order: the dictionary is not sent
    return part, collector


def scan_in_processes(connection: ConnectionSettings, flavor: Flavor, index: str,
                      field_name: str, shards: int, parallel: int, collector: SplitCollector,
                      progress: Progress | None = None) -> VocabularyScan:
    """Every shard's term vectors and texts, ``parallel`` processes at once, into
    ``collector`` (in shard order); the global df and ttf of every term.

    Each worker shares ``collector.memory``'s buffer budget and spills its postings
    beside the collector's; the parent takes them over in shard order (absorb) and a
    failure deletes those already written."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()

    def relay() -> None:
        while (n := queue.get()) is not None:
            if progress is not None:
                progress(n)

    listener = threading.Thread(target=relay, name="esqlog-scan-progress", daemon=True)
    listener.start()
    parts: dict[int, tuple[ShardScan, SplitCollector]] = {}
    workers = min(parallel, shards)
    spill = None if collector.spill_dir is None else str(collector.spill_dir)
    try:
        # one shard a process: each exits when its shard is sent back, so its memory is
        # free before the parent merges them
        with ProcessPoolExecutor(workers, mp_context=context, initializer=_start,
                                 initargs=(queue,), max_tasks_per_child=1) as pool:
            pending = {pool.submit(_scan_shard, connection, flavor, index, field_name,
                                   shard, collector.memory, workers, spill): shard
                       for shard in range(shards)}
            try:
                while pending:
                    done, _ = wait(pending, return_when=FIRST_EXCEPTION)
                    for future in done:
                        parts[pending.pop(future)] = future.result()  # a failure raises
            except BaseException:
                for future in pending:
                    future.cancel()
                raise
    except BaseException:
        for _, seen in parts.values():
            seen.discard()
        raise
    finally:
        queue.put(None)
        listener.join()
        queue.close()
    merger = ScanMerger()
    for shard in range(shards):
        part, seen = parts.pop(shard)
        merger.add(part)
        absorb(collector, seen)
        del part, seen  # each shard's tables go as soon as they are merged
    return merger.result(index, field_name, collector)
