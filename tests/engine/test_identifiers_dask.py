"""``calibrate --vocabulary --identifiers`` through a Dask cluster writes the local run's files.

A local cluster of two worker processes (``distributed.LocalCluster``) runs each shard's scan
as a task; the parent receives every shard's postings in the task's result and merges the
shards in shard order, as the local worker processes' scan does. Given the same created_at,
the vocabulary snapshot, the identifiers statistics and the calibration record must be the
same bytes (the snapshot's checksum is in both files' names, so the names match too).
The memory limit is small enough that both the workers and the parent write postings to
disk; none is left behind.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from esqlog.engine.client import Engine
from esqlog.engine.connection import ConnectionSettings
from esqlog.identifiers.calibrate import calibrate_identifiers, save_identifier_calibration
from esqlog.identifiers.memory import MemoryLimit
from tests.support.engines import ENGINE_URLS, bulk_index, call, create_index
from tests.support.oracle import load_docs

SHARDS = 3
DOCS = 1200
CREATED_AT = "2026-01-02T03:04:05+00:00"


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    """A two-worker Dask cluster, one thread each, for this module; its scheduler address."""
    import distributed

    with distributed.LocalCluster(
        n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
    ) as cluster:
        yield cluster.scheduler_address


@pytest.fixture(scope="module")
def index(engine: Engine) -> Iterator[str]:
    name = create_index(engine, shards=SHARDS)
    bulk_index(engine, name, [{"id": d["id"], "body": d["body"]} for d in load_docs(DOCS)])
    yield name
    call(engine, "DELETE", f"/{name}")


def _written(
    engine: Engine, index: str, out: Path, spill: Path, dask: str | None, progress: list[int]
) -> tuple[dict[str, bytes], float]:
    """Calibrate, save under ``out``; every file's bytes by name, and the seconds taken."""
    connection = ConnectionSettings(ENGINE_URLS[engine.flavor], timeout=60)
    started = time.perf_counter()
    found = calibrate_identifiers(
        engine,
        index,
        "body",
        connection=connection,
        parallel=SHARDS,
        memory=MemoryLimit(64 << 10),
        spill_dir=spill,
        dask=dask,
        created_at=CREATED_AT,
        progress_factory=lambda _label, _total: progress.append,
    )
    seconds = time.perf_counter() - started
    out.mkdir()
    save_identifier_calibration(found, out / "cal.json")
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}, seconds


def test_dask_writes_the_local_files_byte_for_byte(
    engine: Engine, index: str, scheduler: str, tmp_path: Path
) -> None:
    spill = tmp_path / "spill"
    spill.mkdir()
    local_progress: list[int] = []
    dask_progress: list[int] = []
    local, local_s = _written(engine, index, tmp_path / "local", spill, None, local_progress)
    dask, dask_s = _written(engine, index, tmp_path / "dask", spill, scheduler, dask_progress)
    kinds = sorted(name.split(".")[1] for name in local)
    assert kinds == ["idents", "json", "vocab"], sorted(local)
    assert sorted(dask) == sorted(local)  # the same names: the same snapshot checksum
    for name, data in local.items():
        assert dask[name] == data, name
    record = json.loads(local["cal.json"])
    assert record["created_at"] == CREATED_AT and record["doc_count"] == DOCS
    idents = next(data for name, data in local.items() if ".idents." in name)
    assert len(idents) > 100_000  # real statistics, not an empty pair
    assert sum(dask_progress) == sum(local_progress) == DOCS  # a shard at a time on Dask
    assert len(dask_progress) == SHARDS
    assert not list(spill.iterdir())  # the postings the parent wrote are deleted
    print(
        f"\nidentifiers scan of {DOCS} docs in {SHARDS} shards on {engine.flavor}: "
        f"local processes {local_s:.2f} s, Dask (2 workers) {dask_s:.2f} s"
    )


def test_the_command_runs_the_scan_on_dask(
    engine: Engine, index: str, scheduler: str, tmp_path: Path
) -> None:
    """``esqlog calibrate --dask``: the same report, no traceback, the files written."""
    from tests.support.esqlog_runs import calibrate_run

    out = tmp_path / "cal.json"
    run = calibrate_run(
        ENGINE_URLS[engine.flavor],
        index,
        "--vocabulary",
        "--identifiers",
        "--out",
        str(out),
        "--dask",
        scheduler,
        "--memory-limit",
        "64K",
    )
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    assert "with no mode: identifiers" in run.stdout, run.stdout
    assert sorted(p.name.split(".")[1] for p in tmp_path.iterdir()) == ["idents", "json", "vocab"]


def test_a_failed_task_cancels_the_others_and_leaves_no_postings(
    engine: Engine, index: str, scheduler: str, tmp_path: Path
) -> None:
    """The tasks read an index that does not exist: the first failure stops the scan with
    the engine's own error, the other tasks are cancelled and no postings are left."""
    import distributed

    from esqlog.identifiers.dask_scan import scan_on_dask
    from esqlog.identifiers.scan import SplitCollector

    spill = tmp_path / "spill"
    spill.mkdir()
    collector = SplitCollector("body", MemoryLimit(64 << 10), 2, spill)
    connection = ConnectionSettings(ENGINE_URLS[engine.flavor], timeout=60)
    with distributed.Client(scheduler, set_as_default=False) as client:
        with pytest.raises(Exception) as failed:
            scan_on_dask(
                client, connection, engine.flavor, f"{index}-missing", "body", SHARDS, collector
            )
        assert "missing" in str(failed.value), failed.value
        assert not list(spill.iterdir())
        deadline = time.monotonic() + 30  # the others are cancelled or done: none still runs
        while client.processing() and any(client.processing().values()):
            assert time.monotonic() < deadline, client.processing()
            time.sleep(0.2)
