"""``esqlog index --calibrate FILE``: everything the best ranking needs, and kept fresh.

Why everything: the identifiers mode found 22 of 25 answers within 8K tokens on go-git
against 17 for boost, but needs the vocabulary snapshot and the split statistics, which a
calibration alone lacked. So FILE is always the triple ``esqlog calibrate --vocabulary
--identifiers --out FILE`` writes (the same code path, the same files beside it), and it
records whether the identifiers mode applies (esqlog mcp's ``--mode auto`` reads that).

Why kept fresh: a rerun on an index whose FILE is its calibration updates the triple by the
documents the run changed (esqlog.indexing.refresh), or, past that module's staleness
bound, calibrates in full again. Either way FILE describes the index as the run left it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from typing import Any

from esqlog.calibration.record import Calibration
from esqlog.engine.client import Engine
from esqlog.engine.connection import ConnectionSettings
from esqlog.identifiers.calibrate import (
    IdentifierCalibration,
    calibrate_identifiers,
    save_with_word_lists,
)
from esqlog.identifiers.split_stats import IdentifierStats
from esqlog.identifiers.word_lists import remove_superseded
from esqlog.indexing.bulk import Stored
from esqlog.indexing.refresh import (
    FIELD,
    Changes,
    current_record,
    index_operations,
    load_triple,
    read_new,
    refreshed,
    room,
    track,
)
from esqlog.statistics.terms import (
    field_stats_plan,
    live_doc_count_plan,
    resolve_index_plan,
    shard_routings_plan,
)

ProgressFactory = Callable[[str, int], Callable[[int], None]] | None


class Calibrated:
    """One run's calibration FILE: found and refreshable, or to be calibrated in full."""

    def __init__(self, out: str, connection: ConnectionSettings | None = None) -> None:
        self.out = out
        self.connection = connection
        self.current: Calibration | None = None  # FILE, when it is this index's, complete
        self.changes: Changes | None = None
        self.lists_before: str | None = None  # the word lists FILE named for this index

    def start(self, engine: Engine, index: str, created: bool) -> None:
        """Before the write: is FILE this index's calibration, with room for a refresh?"""
        self.lists_before = _lists_named(self.out, index)
        if created:
            return
        info = engine.run(resolve_index_plan(index))
        self.current = current_record(self.out, info.uuid, index_operations(engine, index))
        if self.current is not None and room(self.current) > 0:
            self.changes = Changes()

    def watch(
        self,
        engine: Engine,
        index: str,
        stream: Iterable[dict[str, Any]],
        stored: dict[str, Stored],
    ) -> Iterable[dict[str, Any]]:
        """The bulk stream, its changes recorded when a refresh is possible."""
        if self.changes is None or self.current is None:
            return stream
        existing = {i for s in stored.values() for i in s.ids}
        return _tracked(engine, index, stream, existing, room(self.current), self.changes)

    def finish(
        self, engine: Engine, index: str, changed: bool, progress: ProgressFactory
    ) -> dict[str, Any]:
        """After the write and refresh: FILE unchanged, refreshed or calibrated in full."""
        started = time.perf_counter()
        current, changes = self.current, self.changes
        summary: dict[str, Any] = {"file": self.out, "changed_documents": 0}
        if current is not None and not changed:
            return {
                **summary,
                **_numbers(current, None),
                "how": "unchanged",
                "seconds": round(time.perf_counter() - started, 3),
            }
        found = None
        if current is not None and changes is not None and not changes.overflow:
            found = load_triple(self.out, current.index_uuid)
        operations = index_operations(engine, index)
        if found is not None and changes is not None:
            read_new(engine, index, changes)
            found, lists = _saved(
                engine,
                refreshed(found, changes, *_field_numbers(engine, index)),
                self.out,
                operations,
            )
            summary.update(how="refreshed", changed_documents=changes.documents)
        else:
            found, lists = _saved(
                engine,
                calibrate_identifiers(
                    engine, index, FIELD, progress_factory=progress, connection=self.connection
                ),
                self.out,
                operations,
            )
            summary["how"] = "calibrated"
        removed = remove_superseded(engine, self.lists_before, found.record.word_lists)
        self.lists_before = found.record.word_lists
        return {
            **summary,
            **_numbers(found.record, found.stats),
            "word_lists": found.record.word_lists,
            "word_lists_lines": [line for line in (lists, removed) if line],
            "seconds": round(time.perf_counter() - started, 3),
        }


def _numbers(record: Calibration, stats: IdentifierStats | None) -> dict[str, Any]:
    # the code/prose rule's answer as calibrate recorded it (esqlog.identifiers.code_rule)
    applies = record.identifiers_applies
    share = record.code_share
    if applies is None or share is None:  # a record from before the rule read code documents
        applies = applies if stats is None else stats.applies
        share = None if stats is None else round(stats.split_share, 4)
    return {
        "q": record.q,
        "h_tok": record.h_tok,
        "refreshed_docs": record.refreshed_docs,
        "identifiers_applies": applies,
        "split_share": share,
    }


def _tracked(
    engine: Engine,
    index: str,
    stream: Iterable[dict[str, Any]],
    existing: set[str],
    limit: int,
    changes: Changes,
) -> Iterator[dict[str, Any]]:
    """Lazily: the read-ahead starts when the bulk sender first asks (after the pause of
    refreshes), and records the written documents' text for their casings."""
    for action in track(engine, index, stream, existing, limit, changes):
        if action["_op_type"] == "index" and not changes.overflow:
            changes.text_of[action["_id"]] = str(action["_source"].get("content", ""))
        yield action


def _field_numbers(engine: Engine, index: str) -> tuple[int, int, int]:
    """(N, sum_ttf, live documents) of the content field as the run left it."""
    info = engine.run(resolve_index_plan(index))
    live = engine.run(live_doc_count_plan(info.name))
    routings = engine.run(shard_routings_plan(info.name, info.shards))
    stats = engine.run(field_stats_plan(info.name, FIELD, routings))
    return stats.doc_count, stats.sum_ttf, live


def _saved(
    engine: Engine, found: IdentifierCalibration, out: str, operations: int | None
) -> tuple[IdentifierCalibration, str | None]:
    """Saved with the index's count of write operations as of now: the next run refreshes
    only if no write happened in between (see esqlog.indexing.refresh.current_record); with
    the word lists of its statistics where the nodes plan (a refresh's statistics are new,
    so are its lists). Also the lists' report line."""
    found = replace(found, record=replace(found.record, index_operations=operations))
    record, _, _, lists = save_with_word_lists(found, out, engine)
    return replace(found, record=record), lists


def _lists_named(out: str, index: str) -> str | None:
    """The word-lists index FILE names, when FILE is a calibration of ``index`` (any other
    FILE's, or an unreadable one, names none that this run supersedes)."""
    from esqlog.calibration.files import load_calibration
    from esqlog.errors import UsageError

    try:
        record = load_calibration(out)
    except (UsageError, OSError):
        return None
    return record.word_lists if record.index == index else None
