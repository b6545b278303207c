"""One shard's identifiers scan, run away from the calibrating process, and the merge of
such scans in shard order.

Why a module of its own: the same task runs in a local worker process
(esqlog.identifiers.processes) and on a Dask worker (esqlog.identifiers.dask_scan); both
hand back (ShardScan, ShardTables) and the parent adds them up the same way
(esqlog.identifiers.shard_tables), so the statistics are those of one collector reading
the shards in turn whichever ran them.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from pathlib import Path

from esqlog.engine.client import Flavor
from esqlog.engine.connection import ConnectionSettings, connect
from esqlog.identifiers.memory import MemoryLimit
from esqlog.identifiers.scan import SplitCollector
from esqlog.identifiers.shard_tables import ShardTables, TablesMerger
from esqlog.statistics.vocabulary import VocabularyScan
from esqlog.statistics.vocabulary_scan import Progress, ScanMerger, ShardScan, scan_shard_plan

#: one shard's scan as it comes back: its counts and its collector's tables, as arrays
ShardPart = tuple[ShardScan, ShardTables]


def scan_shard(
    connection: ConnectionSettings,
    flavor: Flavor,
    index: str,
    field_name: str,
    shard: int,
    memory: MemoryLimit,
    processes: int,
    spill_dir: str | Path | None,
    progress: Progress | None = None,
) -> ShardPart:
    """One shard's scan with a client and a collector of its own (a client does not cross
    processes): its postings flushed under ``spill_dir``, its per-term tables returned
    as arrays (esqlog.identifiers.shard_tables). A failure deletes what it spilled."""
    engine = connect(connection, flavor)
    collector = SplitCollector(field_name, memory, processes, spill_dir)
    try:
        part = engine.run(
            scan_shard_plan(index, field_name, shard, progress=progress, on_doc=collector)
        )
        collector.finish()
        collector.postings.flush()
        collector.term_id = {}  # not needed to make the arrays: let go of it first
        return part, collector.tables()
    except BaseException:
        collector.discard()
        raise


def merge_shards(
    parts: MutableMapping[int, ShardPart],
    shards: int,
    collector: SplitCollector,
    index: str,
    field_name: str,
) -> VocabularyScan:
    """Every shard's part into ``collector``, in shard order (``parts`` is emptied as it
    goes, so each shard's tables are let go once merged); the global df and ttf."""
    merger = ScanMerger()
    tables = TablesMerger(collector.postings)
    for shard in range(shards):
        part, seen = parts.pop(shard)
        merger.add(part)
        tables.add(seen)
        del part, seen
    collector.adopt(tables.result())
    return merger.result(index, field_name, collector)


def discard_parts(parts: MutableMapping[int, ShardPart]) -> None:
    """Delete the postings of parts not merged (a failed scan)."""
    for _, seen in parts.values():
        seen.discard()
    parts.clear()
