"""esqlog index when another run or a hard kill got there first: two first runs creating
the same index, and a run killed (SIGKILL) while its refreshes were paused."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from esqlog.engine.client import Engine
from esqlog.indexing.target import MARKER, prepare
from tests.support.engines import call


@pytest.fixture
def index_name(engine: Engine) -> Iterator[str]:
    name = f"esqlog-test-race-{uuid.uuid4().hex[:10]}"
    yield name
    call(engine, "DELETE", f"/{name}", ignore_unavailable="true")


class _LateCreator:
    """An engine that lets a competing run create the index right after this run's
    GET found none: the window two concurrent first runs race in, made certain."""

    def __init__(self, engine: Engine, competitor: Any) -> None:
        self.engine, self.competitor, self.calls = engine, competitor, 0

    def perform(self, request: Any) -> Any:
        self.calls += 1
        if self.calls == 1:
            try:
                return self.engine.perform(request)
            finally:
                self.competitor()
        return self.engine.perform(request)


def test_a_second_first_run_uses_the_index_the_first_created(engine: Engine, index_name: str,
                                                             tmp_path: Path) -> None:
    root = str(tmp_path)
    first = []
    racing = _LateCreator(engine, lambda: first.append(
        prepare(engine, index_name, root, False, 1, None)))
    second = prepare(racing, index_name, root, False, 1, None)  # type: ignore[arg-type]
    assert first[0].created and not second.created and not second.adopted
    assert second.name == index_name
    meta = call(engine, "GET", f"/{index_name}/_mapping")[index_name]["mappings"]["_meta"]
    assert meta[MARKER]["root"] == root
