"""The two plan drivers (esqlog.engine.steps) on a scripted engine: every failure reaches the plan,
and its cleanup steps run before an interrupt or a cancellation goes on. (The same on real
nodes, with the scroll contexts counted: tests/engine/test_interrupts.py.)"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from esqlog.engine.client import scroll_plan
from esqlog.engine.steps import Plan, Request, adrive, drive
from tests.support.scripted import ScriptedEngine, not_found

PAGE = {"_scroll_id": "S1", "hits": {"hits": [{"_id": "1"}]}}


def _scroll_routes(next_page: Any) -> ScriptedEngine:
    return ScriptedEngine(
        {
            ("POST", "/i/_search"): PAGE,
            ("POST", "/_search/scroll"): next_page,
            ("DELETE", "/_search/scroll"): {"succeeded": True},
        }
    )


def _pages(hits: list[dict[str, Any]]) -> Plan[bool]:
    return True
    yield  # a plan that makes no request


@pytest.mark.parametrize("interrupt", [KeyboardInterrupt(), SystemExit(1)])
def test_an_interrupt_mid_scroll_still_clears_the_scroll(interrupt: BaseException) -> None:
    engine = _scroll_routes(interrupt)
    with pytest.raises(type(interrupt)):
        drive(scroll_plan("i", {}, _pages), engine.perform)
    assert engine.paths() == ["POST /i/_search", "POST /_search/scroll", "DELETE /_search/scroll"]
    clear = engine.seen[-1]
    assert isinstance(clear, Request) and clear.body == {"scroll_id": ["S1"]}


def test_a_cancelled_task_mid_scroll_still_clears_the_scroll() -> None:
    engine = _scroll_routes({"_scroll_id": "S1", "hits": {"hits": []}})
    reached = asyncio.Event()

    async def perform(step: Request) -> Any:
        if step.method == "POST" and step.path == "/_search/scroll":
            reached.set()
            await asyncio.sleep(3600)
        return engine.perform(step)

    async def main() -> None:
        task = asyncio.create_task(adrive(scroll_plan("i", {}, _pages), perform))
        await reached.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert engine.paths() == ["POST /i/_search", "DELETE /_search/scroll"]


def test_a_failure_the_plan_handles_is_answered_by_the_plan() -> None:
    def plan() -> Plan[str]:
        try:
            yield Request("GET", "/missing")
        except Exception as exc:
            return type(exc).__name__
        return "found"

    engine = ScriptedEngine({("GET", "/missing"): not_found("missing")})
    assert drive(plan(), engine.perform) == "NotFoundError"


def test_the_plan_is_closed_however_the_driver_ends() -> None:
    closed: list[bool] = []

    def plan() -> Plan[None]:
        try:
            yield Request("GET", "/a")
        finally:
            closed.append(True)

    def interrupted(step: Request) -> Any:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        drive(plan(), interrupted)
    assert closed == [True]
