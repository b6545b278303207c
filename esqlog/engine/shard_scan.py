"""Run one read plan per shard, several shards at once (the parallel scans of calibrate).

Why: ``calibrate --exact`` and ``--vocabulary`` read every document's term vectors. Read
shard after shard, the client waits on one shard copy at a time, so adding nodes does not
make the scan faster. Each shard's scan is independent (its own scroll pinned to the shard
with ``preference=_shards:k``, its own term-vector batches), and what they count (df per
shard, tokens, documents) adds up as integers, so reading them concurrently gives exactly
the sequential result whatever order the shards finish in.

Bounded: at most ``parallel`` shards are read at once, each in a thread of the caller's
process using the same sync client (the client packages' connection pools are
thread-safe). The first failure stops the others at their next request (their scroll
contexts are still cleared) and propagates; the caller retries the scan as a whole.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from typing import Any, TypeVar

from esqlog.engine.client import Engine
from esqlog.engine.steps import Plan, Request, drive

T = TypeVar("T")
#: Shards read at once by default: beyond a few, one client process is CPU-bound on
#: decoding the term-vector answers (measured in scripts/bench/parallel_scan.py).
DEFAULT_PARALLEL = 4
MAX_PARALLEL = 64
Progress = Callable[[int], None]


class ScanCancelled(Exception):
    """Another shard's scan failed: this one stops at its next request."""


def check_parallel(parallel: int) -> int:
    """The number of shards to read at once, or a one-line error with the fix."""
    from esqlog.errors import UsageError

    if not 1 <= parallel <= MAX_PARALLEL:
        raise UsageError(
            f"--parallel must be between 1 and {MAX_PARALLEL}, got {parallel}",
            "pass 1 to read shard after shard, or the number of data nodes",
        )
    return parallel


def locked(progress: Progress | None) -> Progress | None:
    """A progress callback safe to call from several scan threads."""
    if progress is None:
        return None
    lock = threading.Lock()

    def report(n: int) -> None:
        with lock:
            progress(n)

    return report


def run_per_shard(
    engine: Engine,
    make_plan: Callable[[int], Plan[T]],
    shards: int,
    parallel: int,
    on_result: Callable[[int, T], None],
) -> None:
    """Run ``make_plan(shard)`` for every shard, ``parallel`` at once.

    ``on_result(shard, result)`` is called in the caller's thread as each shard finishes,
    so merging needs no lock and at most ``parallel`` unmerged shard results exist.
    """
    if parallel <= 1 or shards <= 1:
        for shard in range(shards):
            on_result(shard, engine.run(make_plan(shard)))
        return
    stop = threading.Event()

    def perform(request: Request) -> Any:
        if stop.is_set() and request.method != "DELETE":  # cleanups still go through
            raise ScanCancelled
        return engine.perform(request)

    def one(shard: int) -> tuple[int, T]:
        return shard, drive(make_plan(shard), perform)

    with ThreadPoolExecutor(min(parallel, shards), thread_name_prefix="esqlog-scan") as pool:
        pending: set[Future[tuple[int, T]]] = {pool.submit(one, s) for s in range(shards)}
        try:
            while pending:
                done, pending = wait(pending, return_when=FIRST_EXCEPTION)
                for future in done:
                    on_result(*future.result())  # the first failure raises here
        except BaseException:
            stop.set()
            for future in pending:
                future.cancel()
            wait(pending)
            raise
