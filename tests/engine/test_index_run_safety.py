"""esqlog index against the engine when the ground moves: an index another run created a
moment ago (primaries still starting), and a file swapped for a FIFO mid-run (the run
ends and the paused refreshes are put back)."""

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

from esqlog.cli.index_cmd import run_index
from esqlog.engine.client import Engine
from esqlog.indexing.chunk import ChunkLimits
from esqlog.indexing.target import FIELDS, FORMAT, MARKER, prepare
from esqlog.indexing.walk import CHANGED, WalkOptions
from tests.support.engines import ENGINE_URLS, call


@pytest.fixture
def index_name(engine: Engine) -> Iterator[str]:
    name = f"esqlog-test-safety-{uuid.uuid4().hex[:10]}"
    yield name
    call(engine, "DELETE", f"/{name}", ignore_unavailable="true")


def _repo(tmp_path: Path, files: int = 20) -> Path:
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    for n in range(files):
        (repo / "pkg" / f"m{n:03d}.py").write_text(
            f"def first_{n}(x):\n    return x + {n}\n\n\ndef second_{n}(y):\n    return y * {n}\n"
        )
    return repo


def test_a_run_finding_an_index_just_created_waits_for_its_primaries(
    engine: Engine, index_name: str, tmp_path: Path
) -> None:
    """Another first run's index, made an instant ago (its PUT answered before any primary
    started, as a concurrent run's can be found): this run must wait for the primaries,
    not search them and exit with a 503. Five indices of 5 shards in a row: prepare
    returns with every primary active, and the whole run succeeds."""
    repo = _repo(tmp_path)
    root = str(repo.resolve())
    marker = {"format": FORMAT, "created_by": "esqlog index", "root": root}
    for trial in range(5):
        name = f"{index_name}-{trial}"
        try:
            call(
                engine,
                "PUT",
                f"/{name}",
                {
                    "settings": {"number_of_shards": 5},
                    "mappings": {
                        "dynamic": "strict",
                        "_meta": {MARKER: marker},
                        "properties": FIELDS,
                    },
                },
                wait_for_active_shards="0",
            )
            target = prepare(engine, name, root, False, 5, None)
            health = call(engine, "GET", f"/_cluster/health/{name}")
            assert not target.created and health["active_primary_shards"] == 5, health
            summary = run_index(
                engine,
                repo.resolve(),
                name,
                WalkOptions(),
                ChunkLimits(),
                adopt=False,
                shards=5,
                replicas=None,
                show_progress=False,
            )
            assert not summary["created"] and summary["documents"] == 40
        finally:
            call(engine, "DELETE", f"/{name}", ignore_unavailable="true")


#: the run, with one listed file swapped for a FIFO between the listing and the read
_SWAP_TO_FIFO = """
import os, sys
import esqlog.indexing.walk as walk
from esqlog.cli import main
listed = walk.list_files
def list_then_swap(root, options, report):
    files = listed(root, options, report)
    victim = files[0].on_disk
    os.remove(victim)
    os.mkfifo(victim)
    return files
walk.list_files = list_then_swap
sys.exit(main(prog_name="esqlog"))
"""


def _refresh_interval(engine: Engine, index: str) -> Any:
    found = call(engine, "GET", f"/{index}/_settings/index.refresh_interval")
    return found.get(index, {}).get("settings", {}).get("index", {}).get("refresh_interval")


def test_a_file_swapped_for_a_fifo_neither_blocks_the_run_nor_keeps_refreshes_off(
    engine: Engine, index_name: str, tmp_path: Path
) -> None:
    repo = _repo(tmp_path)
    args = [
        "index",
        str(repo),
        "--index",
        index_name,
        "--url",
        ENGINE_URLS[engine.flavor],
        "--no-progress",
        "--json",
    ]
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ESQLOG_")}
    run = subprocess.Popen(
        [sys.executable, "-c", _SWAP_TO_FIFO, *args],
        env=clean,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = run.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        run.kill()
        run.communicate()
        out, err = "", "the run blocked on the FIFO"
    assert str(_refresh_interval(engine, index_name)) != "-1"
    assert run.returncode == 0, err
    summary = json.loads(out)
    assert summary["skipped_paths"][CHANGED] == ["pkg/m000.py"]
    assert summary["documents"] == 38


def test_a_sigterm_mid_run_puts_the_refreshes_back(
    engine: Engine, index_name: str, tmp_path: Path
) -> None:
    """SIGTERM (``timeout``, a service manager) used to end the run without its
    ``finally``: the index stayed at ``refresh_interval: -1`` until the next run."""
    repo = _repo(tmp_path, 1)
    args = [
        "index",
        str(repo),
        "--index",
        index_name,
        "--url",
        ENGINE_URLS[engine.flavor],
        "--no-progress",
        "--json",
    ]
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ESQLOG_")}
    first = subprocess.run(
        [sys.executable, "-c", _RUN, *args],
        env=clean,
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert first.returncode == 0, first.stderr
    call(engine, "PUT", f"/{index_name}/_settings", {"index": {"refresh_interval": "7s"}})
    for n in range(4000):  # ~8,000 documents: 16 bulk requests
        (repo / "pkg" / f"n{n:05d}.py").write_text(f"def third_{n}(z):\n    return z - {n}\n")
    run = subprocess.Popen(
        [sys.executable, "-c", _RUN, *args],
        env=clean,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and run.poll() is None:
            if str(_refresh_interval(engine, index_name)) == "-1":
                break  # paused: the run is writing
            time.sleep(0.02)
        assert run.poll() is None, "the run ended before it could be stopped mid-way"
        run.send_signal(signal.SIGTERM)
    finally:
        run.wait(60)
    assert run.returncode != 0  # stopped, not finished
    assert _refresh_interval(engine, index_name) == "7s"


_RUN = "import sys; from esqlog.cli import main; sys.exit(main(prog_name='esqlog'))"
