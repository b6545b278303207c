"""esqlog's own state indices (calibrations kept in the cluster, similarity backups) are
written only when esqlog made and marked them: an index of that name made by someone
else, or an alias of that name, is refused before any write and left as it was."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from esqlog.calibration.cluster_store import store_in_cluster_plan
from esqlog.calibration.record import Calibration
from esqlog.engine.client import Engine
from esqlog.errors import UsageError
from esqlog.scoring.similarity_backup import ensure_backup_index_plan
from tests.support.adversarial import RECORD
from tests.support.engines import call, create_index

RECORD_CAL = Calibration.from_json(RECORD)


def _store(engine: Engine, name: str) -> None:
    engine.run(store_in_cluster_plan(RECORD_CAL, index=name))


def _backup(engine: Engine, name: str) -> None:
    engine.run(ensure_backup_index_plan(name))


WRITERS: dict[str, Callable[[Engine, str], None]] = {
    "calibrations": _store,
    "similarity backups": _backup,
}


@pytest.fixture
def name(engine: Engine) -> Iterator[str]:
    """A state index name of this test's own (the fixed names are shared by every run)."""
    state = f"esqlog-test-state-{uuid.uuid4().hex[:10]}"
    yield state
    call(engine, "DELETE", f"/{state}", ignore_unavailable="true")


def _docs(engine: Engine, index: str) -> list[Any]:
    call(engine, "POST", f"/{index}/_refresh")
    found = call(engine, "POST", f"/{index}/_search", {"size": 100})
    return sorted((h["_id"], h["_source"]) for h in found["hits"]["hits"])


@pytest.mark.parametrize("state", list(WRITERS))
def test_a_foreign_index_of_that_name_is_refused_and_left_alone(
    engine: Engine, name: str, state: str
) -> None:
    call(engine, "PUT", f"/{name}", {"mappings": {"properties": {"note": {"type": "text"}}}})
    call(engine, "PUT", f"/{name}/_doc/mine", {"note": "someone else's"}, refresh="true")
    before = _docs(engine, name)
    with pytest.raises(UsageError, match="esqlog did not create it"):
        WRITERS[state](engine, name)
    assert _docs(engine, name) == before
    mapping = call(engine, "GET", f"/{name}/_mapping")[name]["mappings"]
    assert "_meta" not in mapping


@pytest.mark.parametrize("state", list(WRITERS))
def test_an_alias_of_that_name_is_refused_and_its_index_left_alone(
    engine: Engine, name: str, state: str
) -> None:
    victim = create_index(engine, shards=1)
    try:
        call(engine, "POST", "/_aliases", {"actions": [{"add": {"index": victim, "alias": name}}]})
        with pytest.raises(UsageError, match="alias"):
            WRITERS[state](engine, name)
        assert _docs(engine, victim) == []
    finally:
        call(engine, "DELETE", f"/{victim}")


@pytest.mark.parametrize("state", list(WRITERS))
def test_esqlog_creates_marks_and_reuses_its_own(engine: Engine, name: str, state: str) -> None:
    WRITERS[state](engine, name)
    WRITERS[state](engine, name)  # its own, marked: used again
    meta = call(engine, "GET", f"/{name}/_mapping")[name]["mappings"]["_meta"]
    assert meta["esqlog"]["state"] == state
    if state == "calibrations":
        assert [i for i, _ in _docs(engine, name)] == ["code:body"]


def test_a_calibrations_index_an_earlier_esqlog_made_is_marked_and_used(
    engine: Engine, name: str
) -> None:
    """Earlier versions let the first record's PUT create the index (dynamic mapping)."""
    call(engine, "PUT", f"/{name}/_doc/old:body", RECORD_CAL.to_json(), refresh="true")
    _store(engine, name)
    assert {i for i, _ in _docs(engine, name)} == {"old:body", "code:body"}
    meta = call(engine, "GET", f"/{name}/_mapping")[name]["mappings"]["_meta"]
    assert meta["esqlog"]["state"] == "calibrations"


def test_an_index_shaped_like_an_earlier_backup_index_but_marked_by_another_is_refused(
    engine: Engine, name: str
) -> None:
    """Only an unmarked index is taken for an earlier esqlog's: one with its own _meta is
    another's, whatever its mapping."""
    call(
        engine,
        "PUT",
        f"/{name}",
        {
            "mappings": {
                "dynamic": False,
                "_meta": {"owner": "someone"},
                "properties": {
                    "index": {"type": "keyword"},
                    "index_uuid": {"type": "keyword"},
                    "saved_at": {"type": "date"},
                },
            }
        },
    )
    with pytest.raises(UsageError, match="esqlog did not create it"):
        _backup(engine, name)
    meta = call(engine, "GET", f"/{name}/_mapping")[name]["mappings"]["_meta"]
    assert meta == {"owner": "someone"}
