"""The identifiers scan with one process per shard (``calibrate --vocabulary --identifiers``).

Why: the split statistics are collected in the client (each document's text is tokenised
and its casings split), and that work is bound by one Python interpreter: threads do not
help (tried: the same wall time for 40% more CPU), so the shards used to be read one after
another. Measured on Go 153K in 3 shards on 2 cores (docs/benchmarks/identifiers.md), the
scan then took 1.8-1.9x the wall time of ``--vocabulary`` alone, which reads shards at
once; with a process per shard 1.1-1.3x.

How: each worker process opens its own client from the same connection settings (a client
cannot cross processes), scans one shard (esqlog.identifiers.shard_task.scan_shard) with a
SplitCollector of its own and writes what it saw to a file; the parent adds the shards up in shard
order (esqlog.identifiers.shard_task.merge_shards), which gives exactly the statistics of one
collector reading the shards in turn (esqlog.identifiers.scan). Progress comes back through
a queue. Workers are spawned, not forked: the parent may hold threads and connections.
Only the CLI passes connection settings, so library callers keep the one-process scan.
"""

from __future__ import annotations

import multiprocessing
import pickle
import shutil
import tempfile
import threading
from collections.abc import Iterator, MutableMapping
from concurrent.futures import FIRST_EXCEPTION, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any

from esqlog.engine.client import Flavor
from esqlog.engine.connection import ConnectionSettings
from esqlog.identifiers.memory import MemoryLimit
from esqlog.identifiers.scan import SplitCollector
from esqlog.identifiers.shard_task import ShardPart, discard_parts, merge_shards, scan_shard
from esqlog.statistics.vocabulary import VocabularyScan
from esqlog.statistics.vocabulary_scan import Progress

_progress: Any = None  # the worker's end of the progress queue (set by _start)


def _start(queue: Any) -> None:
    global _progress
    _progress = queue


def _scan_shard(
    connection: ConnectionSettings,
    flavor: Flavor,
    index: str,
    field_name: str,
    shard: int,
    memory: MemoryLimit,
    processes: int,
    spill_dir: str | None,
    parts_dir: str,
) -> str:
    """One shard's scan, in a worker process: its postings written to disk (the parent
    reads them from there), its progress sent through the queue, its per-term tables
    pickled to a file in ``parts_dir`` (the path is returned)."""
    report = None if _progress is None else _progress.put
    part = scan_shard(
        connection, flavor, index, field_name, shard, memory, processes, spill_dir, report
    )
    path = Path(parts_dir) / f"shard-{shard}.pickle"
    try:
        with path.open("wb") as out:
            pickle.dump(part, out, protocol=pickle.HIGHEST_PROTOCOL)
    except BaseException:
        part[1].discard()
        raise
    return str(path)


class _PartsOnDisk(MutableMapping[int, ShardPart]):
    """The shards' parts as the workers pickled them, each loaded when the merge takes it.

    Why: handed back through the pool, every shard's tables (hundreds of MiB each at a
    million documents) were unpickled into the parent as soon as its worker finished and
    all held until the merge reached them; from files, the parent holds the merged tables
    and one shard's. The files are this run's own, in a private temporary directory.
    """

    def __init__(self) -> None:
        self.paths: dict[int, Path] = {}

    def __getitem__(self, shard: int) -> ShardPart:
        with self.paths[shard].open("rb") as source:
            found: ShardPart = pickle.load(source)
        return found

    def __setitem__(self, shard: int, part: ShardPart) -> None:
        raise TypeError("parts are added as files")

    def __delitem__(self, shard: int) -> None:
        self.paths.pop(shard).unlink(missing_ok=True)

    def __iter__(self) -> Iterator[int]:
        return iter(list(self.paths))

    def __len__(self) -> int:
        return len(self.paths)


def scan_in_processes(
    connection: ConnectionSettings,
    flavor: Flavor,
    index: str,
    field_name: str,
    shards: int,
    parallel: int,
    collector: SplitCollector,
    progress: Progress | None = None,
) -> VocabularyScan:
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
    parts = _PartsOnDisk()
    workers = min(parallel, shards)
    spill = None if collector.spill_dir is None else str(collector.spill_dir)
    parts_dir = tempfile.mkdtemp(prefix="esqlog-shards-", dir=spill)
    try:
        # one shard a process: each exits when its shard is sent back, so its memory is
        # free before the parent merges them
        with ProcessPoolExecutor(
            workers,
            mp_context=context,
            initializer=_start,
            initargs=(queue,),
            max_tasks_per_child=1,
        ) as pool:
            pending = {
                pool.submit(
                    _scan_shard,
                    connection,
                    flavor,
                    index,
                    field_name,
                    shard,
                    collector.memory,
                    workers,
                    spill,
                    parts_dir,
                ): shard
                for shard in range(shards)
            }
            try:
                while pending:
                    done, _ = wait(pending, return_when=FIRST_EXCEPTION)
                    for future in done:
                        shard = pending.pop(future)
                        parts.paths[shard] = Path(future.result())  # a failure raises
            except BaseException:
                for future in pending:
                    future.cancel()
                raise
    except BaseException:
        discard_parts(parts)
        shutil.rmtree(parts_dir, ignore_errors=True)
        raise
    finally:
        queue.put(None)
        listener.join()
        queue.close()
    try:
        return merge_shards(parts, shards, collector, index, field_name)
    finally:
        shutil.rmtree(parts_dir, ignore_errors=True)
