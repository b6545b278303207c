"""``calibrate --vocabulary --identifiers`` within a small memory limit, on real engines.

A limit that writes every page's postings to disk and reads them back a few hundred at a
time must write the same calibration files as the default: the same vocabulary snapshot
and the same identifiers statistics, through the worker processes (one per shard) and
through the one-process scan. Compared after loading (the .npz zip entries carry the
time of writing, the metadata the calibration's created_at).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from esqlog.engine.client import Engine
from esqlog.engine.connection import ConnectionSettings
from esqlog.identifiers.calibrate import calibrate_identifiers, save_identifier_calibration
from esqlog.identifiers.memory import MemoryLimit
from tests.support.engines import ENGINE_URLS, bulk_index, call, create_index
from tests.support.oracle import load_docs

SHARDS = 3
VOLATILE = ("created_at", "sha256", "vocabulary_sha256")


@pytest.fixture(scope="module")
def index(engine: Engine) -> Iterator[str]:
    name = create_index(engine, shards=SHARDS)
    bulk_index(engine, name, [{"id": d["id"], "body": d["body"]} for d in load_docs(1200)])
    yield name
    call(engine, "DELETE", f"/{name}")


def _members(path: Path) -> dict[str, Any]:
    with np.load(path) as data:
        out: dict[str, Any] = {k: data[k] for k in data.files}
    meta = json.loads(bytes(out.pop("meta")).decode("utf-8"))
    out["meta"] = {k: v for k, v in meta.items() if k not in VOLATILE}
    return out


def _calibrate(
    engine: Engine, index: str, out: Path, memory: MemoryLimit | None, spill: Path, parallel: int
) -> dict[str, dict[str, Any]]:
    connection = ConnectionSettings(ENGINE_URLS[engine.flavor], timeout=60)
    found = calibrate_identifiers(
        engine,
        index,
        "body",
        connection=connection,
        parallel=parallel,
        memory=memory,
        spill_dir=spill,
    )
    out.mkdir()
    save_identifier_calibration(found, out / "cal.json")
    files = {p.name.split(".")[1]: p for p in out.glob("cal.*.npz")}
    assert files.keys() == {"vocab", "idents"}
    return {kind: _members(p) for kind, p in files.items()}


def _same(a: dict[str, dict[str, Any]], b: dict[str, dict[str, Any]]) -> None:
    for kind in ("vocab", "idents"):
        assert a[kind].keys() == b[kind].keys(), kind
        for key, value in a[kind].items():
            if key == "meta":
                assert value == b[kind][key], kind
            else:
                assert value.dtype == b[kind][key].dtype, (kind, key)
                assert np.array_equal(value, b[kind][key]), (kind, key)


@pytest.mark.parametrize("parallel", [SHARDS, 1])
def test_small_memory_limit_writes_the_default_files(
    engine: Engine, index: str, tmp_path: Path, parallel: int
) -> None:
    spill = tmp_path / "spill"
    spill.mkdir()
    default = _calibrate(engine, index, tmp_path / "default", None, spill, parallel)
    small = _calibrate(engine, index, tmp_path / "small", MemoryLimit(4096), spill, parallel)
    assert len(default["idents"]["df_split"]) > 1000  # real statistics, not an empty pair
    _same(small, default)
    assert not list(spill.iterdir())  # the postings written past the limit are deleted
