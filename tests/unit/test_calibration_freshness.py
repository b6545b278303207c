"""Whether a calibration still fits its index, without an engine: the drift limit is a
bound (a change of exactly 10% is still fresh), and only beyond it does the warning name
the change and the command that refreshes it. tests/engine/test_safety.py checks the same
against a live index (UUID, shard count, drift after real writes)."""

from __future__ import annotations

from esqlog.calibration.freshness import STALE_DRIFT, freshness_of, stale_warning
from esqlog.calibration.record import Calibration
from tests.support.adversarial import RECORD


def test_drift_up_to_the_limit_is_fresh_and_beyond_it_stale() -> None:
    record = Calibration.from_json({**RECORD, "live_docs": 1000})
    at_limit = freshness_of(record, "u1", 1000 + round(1000 * STALE_DRIFT))
    beyond = freshness_of(record, "u1", 1001 + round(1000 * STALE_DRIFT))
    assert at_limit.same_index and not at_limit.stale
    assert stale_warning(record, at_limit) is None
    assert beyond.stale
    warning = stale_warning(record, beyond) or ""
    assert "changed by 10% of its documents" in warning
    assert "esqlog calibrate --index code --field body" in warning


def test_another_uuid_is_another_index_whatever_its_size() -> None:
    record = Calibration.from_json(RECORD)
    assert not freshness_of(record, "u2", record.live_docs).same_index
