"""Ctrl-C or a cancelled task in the middle of a scroll leaves no scroll context open
(issue 12, item 10), sync and async, on both engines.

The interrupt lands where a real one does, in the I/O of the next scroll page; the plan's
``finally`` must still get its clear-scroll request through (esqlog.engine.steps.drive/adrive).
Before, the plan was dropped mid-yield and later closed by the garbage collector
("generator ignored GeneratorExit"): the context stayed open until its keep-alive ran out.
"""

from __future__ import annotations

import asyncio
import gc
from typing import Any

import pytest

from esqlog.engine.client import AsyncEngine, Engine, arun
from esqlog.engine.connection import ConnectionSettings, make_client
from esqlog.engine.steps import Request
from esqlog.statistics.vocabulary_scan import scan_vocabulary_plan
from tests.support.code_snippets import SNIPPETS
from tests.support.engines import ENGINE_URLS, bulk_index, call


def open_contexts(engine: Engine) -> int:
    body = call(
        engine,
        "GET",
        "/_nodes/stats/indices/search",
        filter_path="nodes.*.indices.search.open_contexts",
    )
    return sum(int(n["indices"]["search"]["open_contexts"]) for n in body["nodes"].values())


def _is_next_page(request: Request) -> bool:
    return request.method == "POST" and request.path == "/_search/scroll"


@pytest.fixture
def scanned(engine: Engine, fresh_index: str) -> str:
    """An index with a few scroll pages per shard (batch 2)."""
    bulk_index(engine, fresh_index, [{"id": i, "body": t} for i, t in enumerate(SNIPPETS)])
    return fresh_index


def test_ctrl_c_mid_scroll_clears_the_scroll(engine: Engine, scanned: str) -> None:
    class Interrupted(Engine):
        def perform(self, request: Request) -> Any:
            if _is_next_page(request):
                raise KeyboardInterrupt
            return super().perform(request)

    before = open_contexts(engine)
    with pytest.raises(KeyboardInterrupt):
        Interrupted(engine.client).run(scan_vocabulary_plan(scanned, "body", 3, batch=2))
    gc.collect()
    assert open_contexts(engine) <= before


def test_cancelled_task_mid_scroll_clears_the_scroll(engine: Engine, scanned: str) -> None:
    before = open_contexts(engine)

    async def main() -> None:
        client = make_client(
            ConnectionSettings(ENGINE_URLS[engine.flavor]), engine.flavor, asynchronous=True
        )
        reached = asyncio.Event()

        class Slow(AsyncEngine):
            async def perform(self, request: Request) -> Any:
                if _is_next_page(request):  # the next page takes its time: cancel now
                    reached.set()
                    await asyncio.sleep(3600)
                return await super().perform(request)

        try:
            task = asyncio.create_task(
                arun(Slow(client), scan_vocabulary_plan(scanned, "body", 3, batch=2))
            )
            await reached.wait()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        finally:
            await client.close()

    asyncio.run(main())
    gc.collect()
    assert open_contexts(engine) <= before
