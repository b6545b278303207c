"""esqlog index's pause of periodic refreshes (esqlog.indexing.target.refreshes_paused): the
value is put back however the run ends, a SIGTERM arriving right at the pause included.
The engine here only records the requests the pause makes (I/O-free: the order of the
requests and the signal handler is what is checked; tests/engine/test_index_run_safety.py
stops a real run with SIGTERM against both engines)."""

from __future__ import annotations

import signal
from typing import Any

import pytest

from esqlog.engine.steps import Request
from esqlog.indexing import target as target_module
from esqlog.indexing.target import Target, refreshes_paused


class Recording:
    """Answers the settings GET with ``current``; records every request with the SIGTERM
    handler in force when it was made; ``stop_at`` raises what a SIGTERM raises under the
    handler right after that request (the process stopped there)."""

    def __init__(self, current: str, stop_at: str | None = None) -> None:
        self.current, self.stop_at = current, stop_at
        self.made: list[tuple[str, Any, Any]] = []

    def perform(self, request: Request) -> dict[str, Any]:
        body = request.body if isinstance(request.body, dict) else None
        value = (body or {}).get("index", {}).get("refresh_interval", "GET")
        self.made.append((request.method, value, signal.getsignal(signal.SIGTERM)))
        if value == self.stop_at:
            target_module._exit_on_sigterm(signal.SIGTERM, None)
        return {"ix": {"settings": {"index": {"refresh_interval": self.current}}}}


def test_a_sigterm_right_at_the_pause_still_puts_the_value_back() -> None:
    engine = Recording("7s", stop_at="-1")
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(SystemExit), refreshes_paused(engine, Target("ix", False, False)):  # type: ignore[arg-type]
        raise AssertionError("the block is never reached")
    settings = [(value, handler) for _, value, handler in engine.made if value != "GET"]
    assert [value for value, _ in settings] == ["-1", "7s"]  # paused, then put back
    # the handler that turns SIGTERM into SystemExit was in place before the pause
    assert settings[0][1] is target_module._exit_on_sigterm
    assert signal.getsignal(signal.SIGTERM) is before  # and is gone after


def test_the_value_in_force_is_put_back_after_the_block() -> None:
    engine = Recording("30s")
    with refreshes_paused(engine, Target("ix", False, False, {"refresh_interval": "30s"})):  # type: ignore[arg-type]
        assert [v for m, v, _ in engine.made if m == "PUT"] == ["-1"]
    assert [v for m, v, _ in engine.made] == ["GET", "-1", "30s"]
