"""An index of real Go functions calibrated with --vocabulary --identifiers, for the engine
tests of the identifiers mode (tests/engine/test_identifiers_*.py), which each wrap it.

Why here: the match-set and plugin tests build the same fixture (the same documents, the
same calibration written to a file), and no test module imports another."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from esqlog.engine.client import Engine
from esqlog.identifiers.calibrate import calibrate_identifiers, save_identifier_calibration
from tests.support.engines import bulk_index, call, create_index
from tests.support.oracle import load_docs

N_DOCS = 1000
#: keyword fields a test may ask for, and each document's value of them
KEYWORDS = {"key": lambda d: str(d["id"]), "pkg": lambda d: str(d.get("pkg") or "none")}


def mappings(keywords: tuple[str, ...] = ("key",)) -> dict[str, Any]:
    """The text field ``body`` and the asked keyword fields."""
    return {"properties": {"body": {"type": "text"}, **{k: {"type": "keyword"} for k in keywords}}}


@contextmanager
def calibrated_index(
    engine: Engine, shards: int, folder: Path, keywords: tuple[str, ...] = ("key",)
) -> Iterator[tuple[str, Path]]:
    """(index, calibration file) of the first N_DOCS Go functions on ``shards`` shards; the
    index is deleted afterwards."""
    index = create_index(engine, shards=shards, mappings=mappings(keywords))
    try:
        docs = [
            {"id": d["id"], "body": d["body"], **{k: KEYWORDS[k](d) for k in keywords}}
            for d in load_docs(N_DOCS)
        ]
        bulk_index(engine, index, docs)
        path = folder / "code.qlog.json"
        save_identifier_calibration(calibrate_identifiers(engine, index, "body"), path)
        yield index, path
    finally:
        call(engine, "DELETE", f"/{index}")
