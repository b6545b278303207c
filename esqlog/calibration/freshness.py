"""Whether a calibration still fits the index it is about to be used on.

Why a module of its own: a calibration file outlives the index it was computed on. The
index can be deleted and recreated under the same name (a new UUID: the record describes
another index and is refused) or grow and shrink (the q and statistics drift: a warning).
Every query-side entry point checks this before it uses a record; the calibration itself
is computed in esqlog.calibration.calibrate and read from disk by esqlog.calibration.files.
"""

from __future__ import annotations

from dataclasses import dataclass

from esqlog.calibration.record import Calibration
from esqlog.engine.steps import Plan
from esqlog.errors import UsageError
from esqlog.statistics.terms import live_doc_count_plan, resolve_index_plan

STALE_DRIFT = 0.10  # relative change in live documents that makes a calibration stale


@dataclass(frozen=True)
class Freshness:
    """How a calibration relates to the index it is about to be used on."""

    same_index: bool
    drift: float  # relative change of live documents since calibration

    @property
    def stale(self) -> bool:
        return self.drift > STALE_DRIFT


def freshness_plan(calibration: Calibration, index: str) -> Plan[Freshness]:
    """Compare UUID and live document count with the index as it is now."""
    uuid, live = yield from index_identity_plan(index)
    return freshness_of(calibration, uuid, live)


def index_identity_plan(index: str) -> Plan[tuple[str, int]]:
    """(UUID, live documents) of the index as it is now: what freshness is judged by."""
    info = yield from resolve_index_plan(index)
    live = yield from live_doc_count_plan(info.name)
    return info.uuid, live


def freshness_of(calibration: Calibration, uuid: str, live: int) -> Freshness:
    """How a calibration relates to an index with this UUID and live document count."""
    base = max(calibration.live_docs, 1)
    return Freshness(uuid == calibration.index_uuid, abs(live - calibration.live_docs) / base)


def check_calibration_plan(calibration: Calibration, index: str) -> Plan[Freshness]:
    """Refuse a calibration of another index; report drift for the caller to warn about.

    Identity (UUID, then shard count) is checked on the one answer that resolves the name,
    before anything else is asked: a record claiming a million shards must cost one
    request, not one per claimed shard.
    """
    info = yield from resolve_index_plan(index)
    fix = f"run esqlog calibrate --index {index} --field {calibration.field}"
    if info.uuid != calibration.index_uuid:
        raise UsageError(
            f"the calibration is for index {calibration.index!r} (uuid "
            f"{calibration.index_uuid}), not for {index!r} as it exists now",
            fix,
        )
    if info.shards != calibration.shards:
        raise UsageError(
            f"the calibration says index {calibration.index!r} has {calibration.shards:,} "
            f"shards but it has {info.shards} (the file was edited or damaged)",
            fix,
        )
    live = yield from live_doc_count_plan(info.name)
    return freshness_of(calibration, info.uuid, live)


def stale_warning(calibration: Calibration, fresh: Freshness) -> str | None:
    """The warning text for a stale calibration, or None."""
    if not fresh.stale:
        return None
    return (
        f"warning: the index changed by {fresh.drift:.0%} of its documents since it was "
        f"calibrated ({calibration.created_at}); re-run esqlog calibrate --index "
        f"{calibration.index} --field {calibration.field}"
    )
