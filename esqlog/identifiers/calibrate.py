"""``esqlog calibrate --vocabulary --identifiers``: the vocabulary scan plus split statistics.

Why a separate step: the split statistics need each document's ``_source`` (the casing),
which the plain vocabulary scan does not fetch; they ride on the same single pass
(esqlog.calibration.calibrate's ``scan_hook``) and are written beside the vocabulary snapshot,
bound to
it by its checksum. Reads only.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np

from esqlog.calibration.calibrate import CalibrationTimings, Scanner, calibrate_with_vocabulary
from esqlog.calibration.files import save_calibration, save_with_vocabulary
from esqlog.calibration.plugin import search_path_line
from esqlog.calibration.record import Calibration
from esqlog.engine.client import Engine
from esqlog.engine.connection import ConnectionSettings
from esqlog.engine.failures import error_status
from esqlog.engine.shard_scan import DEFAULT_PARALLEL
from esqlog.errors import ClusterError, UsageError
from esqlog.identifiers.code_rule import CODE_SHARE, CodeShare, code_share_plan
from esqlog.identifiers.dask_scan import DEFAULT_CONNECT_TIMEOUT, dask_scheduler, scan_on_dask
from esqlog.identifiers.families import FAMILY_EXCESS
from esqlog.identifiers.files import (
    companion_of,
    identifiers_path_for,
    load_for_calibration,
    save_identifier_stats,
)
from esqlog.identifiers.memory import MemoryLimit
from esqlog.identifiers.processes import scan_in_processes
from esqlog.identifiers.scan import SplitCollector
from esqlog.identifiers.split_stats import APPLIES_SHARE, IdentifierStats, build_identifier_stats
from esqlog.identifiers.warm import warm_line
from esqlog.identifiers.word_lists import write_for_record
from esqlog.progress import ProgressFactory
from esqlog.scoring.qlog import DEFAULT_PREDICTOR
from esqlog.statistics.vocabulary import Vocabulary, VocabularyScan
from esqlog.statistics.vocabulary_scan import scan_vocabulary


@dataclass(frozen=True)
class IdentifierCalibration:
    """A calibration with its vocabulary snapshot and split statistics."""

    record: Calibration
    vocabulary: Vocabulary
    stats: IdentifierStats
    build_seconds: float  # turning the scan into statistics (after the scan)


def calibrate_identifiers(
    engine: Engine,
    index: str,
    field_name: str,
    predictor: str = DEFAULT_PREDICTOR,
    progress_factory: Callable[[str, int], Callable[[int], None]] | None = None,
    timings: CalibrationTimings | None = None,
    connection: ConnectionSettings | None = None,
    parallel: int = DEFAULT_PARALLEL,
    memory: MemoryLimit | None = None,
    spill_dir: str | Path | None = None,
    dask: str | Any | None = None,
    dask_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    created_at: str | None = None,
) -> IdentifierCalibration:
    """One scan: calibration, df snapshot and the identifiers mode's statistics.

    With ``connection`` (the settings ``engine`` was opened with) an index of several
    shards is scanned by up to ``parallel`` worker processes, one per shard
    (esqlog.identifiers.processes); the statistics are the same as from one process.
    ``dask`` (a scheduler address such as ``tcp://host:8786``, or a
    ``distributed.Client``) runs each shard's scan as a task on that cluster instead
    (esqlog.identifiers.dask_scan; needs ``connection``, which travels to the workers
    with its credentials), with the same statistics again.
    ``memory`` bounds what grows with the documents (esqlog.identifiers.memory): each
    document's term ids are written under ``spill_dir`` (None: the system's temporary
    directory) past that budget and deleted once the statistics are built; the statistics
    do not depend on it. ``created_at`` (default: now) stamps every file: the same one
    gives the same bytes for the same statistics.
    """
    if dask is not None and connection is None:
        raise UsageError(
            "a Dask scan needs the connection settings",
            "pass connection=ConnectionSettings(URL, ...): each task opens "
            "its own client from them",
        )
    with ExitStack() as stack:
        scheduler = (
            stack.enter_context(dask_scheduler(dask, dask_timeout))
            if isinstance(dask, str)
            else dask
        )
        return _calibrate_identifiers(
            engine,
            index,
            field_name,
            predictor,
            progress_factory,
            timings,
            connection,
            parallel,
            memory,
            spill_dir,
            scheduler,
            created_at,
        )


def _scanner(
    engine: Engine,
    connection: ConnectionSettings | None,
    parallel: int,
    collector: SplitCollector,
    scheduler: Any,
) -> Scanner | None:
    """The scan to run instead of the one-process one: on Dask, or in local processes."""
    if connection is None or (scheduler is None and parallel <= 1):
        return None

    def scanner(
        name: str, field: str, shards: int, progress: Callable[[int], None] | None
    ) -> VocabularyScan:
        if scheduler is not None:
            return scan_on_dask(
                scheduler, connection, engine.flavor, name, field, shards, collector, progress
            )
        if shards <= 1:
            return scan_vocabulary(engine, name, field, shards, 1, progress, collector)
        return scan_in_processes(
            connection, engine.flavor, name, field, shards, parallel, collector, progress
        )

    return scanner


def _calibrate_identifiers(
    engine: Engine,
    index: str,
    field_name: str,
    predictor: str,
    progress_factory: Callable[[str, int], Callable[[int], None]] | None,
    timings: CalibrationTimings | None,
    connection: ConnectionSettings | None,
    parallel: int,
    memory: MemoryLimit | None,
    spill_dir: str | Path | None,
    scheduler: Any,
    created_at: str | None,
) -> IdentifierCalibration:
    processes = parallel if connection is not None and parallel > 1 else 1
    collector = SplitCollector(field_name, memory, processes, spill_dir)
    scanner = _scanner(engine, connection, parallel, collector, scheduler)
    try:
        try:
            record, vocab = calibrate_with_vocabulary(
                engine,
                index,
                field_name,
                predictor=predictor,
                progress_factory=progress_factory,
                timings=timings,
                scan_hook=collector,
                scanner=scanner,
                parallel=parallel,
                created_at=created_at,
            )
        finally:
            collector.close()  # drops documents it had not processed yet, also on failure
        started = time.perf_counter()
        collector.finish()  # the last page, when the scan did not count df itself
        # the scan's own df of each collected term (term_statistics), capped at N as the
        # snapshot caps it: the snapshot's numbers without hashing every term again
        engine_df = (
            vocab.df_array(collector.terms)
            if collector.global_df is None
            else np.minimum(collector.global_df, max(vocab.doc_count, 0))
        )
        stats = build_identifier_stats(
            collector,
            engine_df,
            index=record.index,
            index_uuid=record.index_uuid,
            field=field_name,
            shards=record.shards,
            doc_count=record.doc_count,
            created_at=record.created_at,
            predictor=record.predictor,
        )
    finally:
        collector.discard()  # the postings on disk, whatever happened
    built = time.perf_counter() - started
    record = _with_code_rule(engine, record, stats)
    if timings is not None:
        timings.stages["identifiers"] = built
        timings.total += built
    return IdentifierCalibration(record, vocab, stats, built)


def save_identifier_calibration(
    found: IdentifierCalibration, path: str | Path
) -> tuple[Calibration, Path, int]:
    """Snapshot, then split statistics (named and bound by the snapshot's checksum), then the
    record last: a kill at any point leaves the old triple or the new one."""
    written: list[tuple[Path, int]] = []

    def companions(stem: Path, digest: str) -> None:
        written.append(
            save_identifier_stats(found.stats, identifiers_path_for(stem, digest), digest)
        )

    record = found.record
    if record.identifiers_applies is None:  # the code rule could not sample the index
        record = replace(record, identifiers_applies=found.stats.applies)
    linked = save_with_vocabulary(record, found.vocabulary, Path(path), companions)
    stats_path, size = written[0]
    return linked, stats_path, size


def save_with_word_lists(
    found: IdentifierCalibration,
    path: str | Path,
    engine: Engine,
    progress_factory: Callable[[str, int], Callable[[int], None]] | None = None,
) -> tuple[Calibration, Path, int, str | None]:
    """Save the triple, then write the word lists the nodes plan from where every data node
    can (esqlog.identifiers.word_lists) and save the record again naming them: the
    record, the statistics' file and size, and the lists' report line (None: not tried).

    Why after the triple: the lists index is named by the snapshot's checksum, which the
    save computes; a kill between the two saves leaves a whole triple that names no lists
    (searches then plan on the client)."""
    record, stats_path, size = save_identifier_calibration(
        replace(found, record=replace(found.record, word_lists=None)), path
    )
    record, lists_line = write_for_record(engine, found.stats, record, progress_factory)
    if record.word_lists:
        save_calibration(record, path)
    return record, stats_path, size, lists_line


def identifier_report(
    found: IdentifierCalibration,
    path: str | Path,
    engine: Engine | None = None,
    progress_factory: ProgressFactory = None,
    warm: bool = True,
) -> tuple[Calibration, str]:
    """Save everything and say what the identifiers statistics hold (for the CLI report);
    with ``engine``, also write the word lists the nodes plan from where they can
    (save_with_word_lists), and with ``warm`` read every word's whole group, the most
    frequent first, on the nodes where they keep them (esqlog.identifiers.warm)."""
    lists_line = None
    if engine is not None:
        record, stats_path, size, lists_line = save_with_word_lists(
            found, path, engine, progress_factory
        )
    else:
        record, stats_path, size = save_identifier_calibration(found, path)
    s = found.stats
    mode, why = auto_mode(record)
    note = (
        f"identifiers  {s.compounds:,} terms split into {s.subwords:,} sub-words; split "
        f"stream h_tok {s.h_tok:.4f}, q {s.q:.3f}; {size / 1e6:.1f} MB "
        f"({found.build_seconds:.1f} s after the scan) written to {stats_path}\n"
        f"search       wrap() and esqlog mcp with no mode: {mode} ({why})"
    )
    if mode == "identifiers":
        note += f"\n             {search_path_line(record)}"
    if lists_line:
        note += f"\n{lists_line}"
    warmed = (
        warm_line(engine, record, s, found.vocabulary, progress_factory)
        if engine and warm
        else None
    )
    if warmed:
        note += f"\n{warmed}"
    spikes = s.families(FAMILY_EXCESS)
    if spikes:
        shown = ", ".join(f"df {df:,} ({n:,} words, {x:.1f}x)" for df, n, x in spikes[:5])
        more = f" and {len(spikes) - 5} more" if len(spikes) > 5 else ""
        note += (
            f"\n             generated families (many words of one df): {shown}{more};"
            " queries naming one score at q = 1"
        )
    return record, note


def _with_code_rule(engine: Engine, record: Calibration, stats: IdentifierStats) -> Calibration:
    """The record with the code/prose rule's answer (esqlog.identifiers.code_rule), read
    from a sample of the code documents; where the sample cannot be taken (a refused
    search), the share of every document's tokens as the scan counted them decides."""
    try:
        rule: CodeShare = engine.run(code_share_plan(record.index, record.field))
    except Exception as exc:  # the client's error: the scan's share decides, as before
        if error_status(exc) is None and not isinstance(exc, ClusterError):
            raise
        return replace(
            record,
            identifiers_applies=stats.applies,
            code_share=round(stats.split_share, 4),
            code_basis="every document (the code sample was refused)",
        )
    return replace(
        record,
        identifiers_applies=rule.applies,
        code_share=round(rule.share, 4),
        code_basis=rule.basis,
    )


Mode = Literal["boost", "identifiers"]


def check_companions(calibration: Calibration) -> None:
    """One line naming every companion file the record says was written but is not there.

    Why: a calibration is a JSON record and .npz files beside it; copying the JSON alone
    used to read as "has no identifiers statistics" and silently rank in boost mode."""
    vocabulary = calibration.vocabulary_path()
    if vocabulary is None:
        return
    idents = companion_of(vocabulary)
    # missing, not merely odd: a path that is there but no regular file (a device, a FIFO)
    # is the loader's to refuse, with its own reason
    missing = [vocabulary] if not os.path.lexists(vocabulary) else []
    if (
        calibration.identifiers_applies is not None
        and idents is not None
        and not os.path.lexists(idents)
    ):
        missing.append(idents)
    if missing:
        where = calibration.location or "."
        raise UsageError(
            f"the calibration's companion file{'s' if len(missing) > 1 else ''} "
            f"{', '.join(repr(str(p)) for p in missing)} "
            f"{'are' if len(missing) > 1 else 'is'} missing (the JSON alone was copied?)",
            f"copy {'them' if len(missing) > 1 else 'it'} into {where!r} beside the JSON, "
            "or use the boost mode (--mode boost; wrap(..., mode='boost'))",
        )


def auto_mode(calibration: Calibration) -> tuple[Mode, str]:
    """The best ranking a calibration supports, with the reason (printed at start).

    identifiers when the split statistics are beside the snapshot and the field is code
    enough for them (found 22 of 25 answers within 8K tokens on go-git, against 17 for
    boost); boost otherwise, which needs nothing but the calibration.
    """
    vocabulary = calibration.vocabulary_path()
    if vocabulary is None:
        return "boost", (
            "the calibration has no vocabulary snapshot (esqlog index "
            "--calibrate writes one with the identifiers statistics)"
        )
    check_companions(calibration)
    idents = companion_of(vocabulary)
    if idents is None or not idents.is_file():
        return "boost", (
            "the calibration has no identifiers statistics (esqlog calibrate "
            "--vocabulary --identifiers writes them)"
        )
    applies = calibration.identifiers_applies
    if applies is None:  # written before calibrations recorded it: ask the statistics
        applies = load_for_calibration(vocabulary, calibration.vocabulary_sha256).applies
    measured = (
        ""
        if calibration.code_share is None
        else f": {calibration.code_share:.1%} of the tokens split in "
        f"{calibration.code_basis or 'the sample'}"
    )
    if not applies:
        floor = CODE_SHARE if calibration.code_share is not None else APPLIES_SHARE
        return "boost", (
            f"field {calibration.field!r} reads as prose (under {floor:.0%} of "
            f"its tokens are identifiers that split{measured})"
        )
    return "identifiers", (
        f"field {calibration.field!r} is code{measured}; the calibration "
        "has its identifiers statistics"
    )
