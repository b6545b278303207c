"""esqlog index when another run or a hard kill got there first: two first runs creating
the same index, and a run killed (SIGKILL) while its refreshes were paused."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from esqlog.engine.client import Engine
from esqlog.indexing.target import MARKER, prepare
from tests.support.engines import ENGINE_URLS, call
from tests.support.esqlog_runs import run_esqlog


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


def test_a_second_first_run_uses_the_index_the_first_created(
    engine: Engine, index_name: str, tmp_path: Path
) -> None:
    root = str(tmp_path)
    first = []
    racing = _LateCreator(
        engine, lambda: first.append(prepare(engine, index_name, root, False, 1, None))
    )
    second = prepare(racing, index_name, root, False, 1, None)  # type: ignore[arg-type]
    assert first[0].created and not second.created and not second.adopted
    assert second.name == index_name
    meta = call(engine, "GET", f"/{index_name}/_mapping")[index_name]["mappings"]["_meta"]
    assert meta[MARKER]["root"] == root


_MAIN = "import sys; from esqlog.cli import main; sys.exit(main(prog_name='esqlog'))"


def _index_args(engine: Engine, repo: Path, index: str) -> list[str]:
    return [
        "index",
        str(repo),
        "--index",
        index,
        "--url",
        ENGINE_URLS[engine.flavor],
        "--no-progress",
        "--json",
    ]


def _refresh_interval(engine: Engine, index: str) -> Any:
    found = call(engine, "GET", f"/{index}/_settings/index.refresh_interval")
    # the engines answer {} when the index has no such setting (the default is in force)
    return found.get(index, {}).get("settings", {}).get("index", {}).get("refresh_interval")


def _many_files(repo: Path, count: int) -> None:
    for n in range(count):
        (repo / "pkg" / f"m{n:05d}.py").write_text(
            f"def first_{n}(x):\n    return x + {n}\n\n\ndef second_{n}(y):\n    return y * {n}\n"
        )


def test_a_run_killed_mid_way_leaves_refreshes_that_the_next_run_restores(
    engine: Engine, index_name: str, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "start.py").write_text("def start():\n    return 0\n")
    first = run_esqlog(*_index_args(engine, repo, index_name))
    assert first.returncode == 0, first.stderr
    call(engine, "PUT", f"/{index_name}/_settings", {"index": {"refresh_interval": "7s"}})
    _many_files(repo, 4000)  # ~8,000 documents: 16 bulk requests of 500
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ESQLOG_")}
    run = subprocess.Popen(
        [sys.executable, "-c", _MAIN, *_index_args(engine, repo, index_name)],
        env=clean,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and run.poll() is None:
            stats = call(engine, "GET", f"/{index_name}/_stats/indexing")
            if stats["_all"]["primaries"]["indexing"]["index_total"] > 1:
                break  # the first bulk request landed (the first run wrote one document)
            time.sleep(0.02)
        assert run.poll() is None, "the run ended before it could be killed mid-way"
        os.kill(run.pid, signal.SIGKILL)
    finally:
        run.wait(30)
    assert str(_refresh_interval(engine, index_name)) == "-1"  # what a hard kill leaves
    rerun = run_esqlog(*_index_args(engine, repo, index_name))
    assert rerun.returncode == 0, rerun.stderr
    assert json.loads(rerun.stdout)["documents"] == 1 + 2 * 4000
    assert _refresh_interval(engine, index_name) == "7s"  # the user's value, not -1/default


def test_two_first_runs_at_once_both_succeed(
    engine: Engine, index_name: str, tmp_path: Path
) -> None:
    """The real race: two processes started together on a new index name."""
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    _many_files(repo, 20)
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ESQLOG_")}
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", _MAIN, *_index_args(engine, repo, index_name)],
            env=clean,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outcomes = [run.communicate(timeout=120) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], [err for _, err in outcomes]
    summaries = [json.loads(out) for out, _ in outcomes]
    assert sorted(s["created"] for s in summaries) == [False, True]
    assert {s["documents"] for s in summaries} == {40}
