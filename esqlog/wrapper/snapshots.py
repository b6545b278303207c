"""Vocabulary snapshots in use, and the guard that stops using one when its index changed."""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping, Sequence

from esqlog.calibration.freshness import STALE_DRIFT, freshness_of, index_identity_plan
from esqlog.calibration.record import Calibration
from esqlog.engine.steps import Plan
from esqlog.errors import UsageError
from esqlog.statistics.vocabulary import Vocabulary, load_vocabulary
from esqlog.wrapper.options import StatsSource

#: seconds between checks that an index still matches its vocabulary snapshot
SNAPSHOT_CHECK_SECONDS = 60.0


def load_snapshots(
    calibrations: Sequence[Calibration], stats: StatsSource
) -> dict[tuple[str, str], Vocabulary]:
    """The vocabulary snapshots searches may use: (index, field) -> snapshot.

    ``auto`` uses every snapshot a calibration names; ``snapshot`` also insists that each
    calibration has one; ``live`` uses none (every new term costs a statistics request).
    """
    if stats == "live":
        return {}
    out: dict[tuple[str, str], Vocabulary] = {}
    for cal in calibrations:
        path = cal.vocabulary_path()
        if path is None:
            if stats == "snapshot":
                raise UsageError(
                    f"the calibration of {cal.index}/{cal.field} has no vocabulary snapshot",
                    "run esqlog calibrate --vocabulary --out FILE, or use stats='auto'",
                )
            continue
        vocab = load_vocabulary(path, cal.vocabulary_sha256)
        if (vocab.index_uuid, vocab.field) != (cal.index_uuid, cal.field):
            raise UsageError(
                f"vocabulary file {str(path)!r} belongs to another index or field",
                "run esqlog calibrate --vocabulary --out FILE again",
            )
        out[(cal.index, cal.field)] = vocab
    return out


class SnapshotGuard:
    """Hands out a field's snapshot while its index is still the one it was taken of."""

    def __init__(
        self,
        snapshots: Mapping[tuple[str, str], Vocabulary],
        by_index: Mapping[str, Sequence[Calibration]],
    ) -> None:
        self.in_use = dict(snapshots)
        #: index -> the calibrations whose snapshot is in use, and their index UUIDs: fixed
        #: for the guard's life, so a search's check reads them instead of finding them
        self._owners = {
            index: tuple(c for c in cals if (c.index, c.field) in self.in_use)
            for index, cals in by_index.items()
        }
        self._uuids = {index: {c.index_uuid for c in cals} for index, cals in self._owners.items()}
        self._state: dict[str, tuple[bool, float]] = {}  # index -> (usable, next check)

    def check_plan(self, index: str, uuid: str | None = None) -> Plan[None]:
        """Every minute, check the index still is the one its snapshots were taken of.

        The same index (UUID) with live documents within 10% of the snapshot's keeps the
        snapshot in use; otherwise searches go back to live statistics (one warning) until
        the index is calibrated again. One search per minute pays this request; a failure
        here never fails a search (the last answer stands, the next minute retries).
        ``uuid``: the UUID the index name resolved to just now; another than calibrated
        checks at once, so a recreated index is never searched with the old statistics.
        """
        # Each snapshot is judged by the calibration it was taken with: another field's
        # calibration of the same index may be older or newer.
        owners = self._owners.get(index)
        if not owners:
            return
        now = time.monotonic()
        usable, due = self._state.get(index, (True, 0.0))
        uuids = self._uuids[index]
        if usable and uuid is not None and (len(uuids) > 1 or uuid not in uuids):
            due = 0.0  # an owner was calibrated on another index than the name's now
        if now < due:
            return
        self._state[index] = (usable, now + SNAPSHOT_CHECK_SECONDS)
        try:  # one look at the index serves every snapshot of it
            uuid, live = yield from index_identity_plan(index)
        except Exception:
            return
        checks = [(owner, freshness_of(owner, uuid, live)) for owner in owners]
        cal, fresh = max(checks, key=lambda check: (not check[1].same_index, check[1].drift))
        fits = fresh.same_index and fresh.drift <= STALE_DRIFT
        if usable and not fits:
            change = (
                f"changed by {fresh.drift:.0%} since its vocabulary snapshot ({cal.created_at})"
                if fresh.same_index
                else f"is another index now (uuid {uuid}; its vocabulary snapshot of "
                f"{cal.created_at} is of uuid {cal.index_uuid}: deleted and "
                "recreated?)"
            )
            warnings.warn(
                f"esqlog: index {index!r} {change}; using live statistics until "
                f"esqlog calibrate --vocabulary runs again",
                RuntimeWarning,
                stacklevel=6,
            )
        self._state[index] = (fits, now + SNAPSHOT_CHECK_SECONDS)

    def recheck(self, index: str) -> None:
        """Check the index at the next search, not a minute later: an answer showed that
        it may have been deleted or recreated."""
        usable, _ = self._state.get(index, (True, 0.0))
        self._state[index] = (usable, 0.0)

    def snapshot_for(self, index: str, field_name: str) -> Vocabulary | None:
        """The field's vocabulary snapshot while it is usable, else None (live statistics)."""
        vocab = self.in_use.get((index, field_name))
        if vocab is None or not self._state.get(index, (True, 0.0))[0]:
            return None
        return vocab
