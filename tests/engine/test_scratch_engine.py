"""No esqlog command deletes or writes an index it did not create, whatever the name.

Real engines: a user's index is made, then ``esqlog demo`` and ``esqlog bench-beir`` are
pointed at it by exact name, by patterns that match it (OpenSearch deletes by pattern unless
``action.destructive_requires_name`` is set) and by names that would add URL segments. Each
run must fail in one line and leave the index as it was (documents, per-shard sequence
numbers, mapping), with no new index created.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from esqlog.engine.client import Engine
from esqlog.engine.scratch import delete_scratch
from esqlog.errors import UsageError
from esqlog.evaluation.corpus import create_corpus_index
from tests.support.engines import ENGINE_URLS, bulk_index, call, create_index
from tests.support.esqlog_runs import one_line_error, run_esqlog

BEIR = Path(__file__).parents[1] / "data" / "beir-java"


def _state(engine: Engine, name: str) -> dict[str, Any]:
    """Documents, per-shard max _seq_no (any write bumps it) and the mapping of an index."""
    stats = call(engine, "GET", f"/{name}/_stats", level="shards")["indices"][name]["shards"]
    seq = {
        shard: [copy["seq_no"]["max_seq_no"] for copy in copies] for shard, copies in stats.items()
    }
    return {
        "count": call(engine, "GET", f"/{name}/_count")["count"],
        "seq_no": seq,
        "mappings": call(engine, "GET", f"/{name}/_mapping")[name]["mappings"],
    }


def _indices(engine: Engine, victim: str) -> set[str]:
    """The indices a run aimed at ``victim`` could create: its prefix, and the demo's own."""
    names = {row["index"] for row in call(engine, "GET", "/_cat/indices", format="json")}
    return {n for n in names if n.startswith(victim[:-3]) or n == "esqlog-demo-go"}


@pytest.fixture
def victim(engine: Engine) -> Iterator[str]:
    name = create_index(engine, shards=1)
    bulk_index(engine, name, [{"id": 1, "body": "a user's own document"}])
    yield name
    call(engine, "DELETE", f"/{name}")


def _names_aimed_at(victim: str) -> list[str]:
    return [
        victim,
        victim[:-3] + "*",
        "*",
        f"{victim},esqlog-demo-go",
        f"{victim}/_doc/1#",
        victim.upper(),
    ]


@pytest.mark.parametrize("command", ["demo", "bench-beir"])
def test_a_command_aimed_at_someone_elses_index_refuses_and_writes_nothing(
    engine: Engine, victim: str, command: str, tmp_path: Path
) -> None:
    before, indices = _state(engine, victim), _indices(engine, victim)
    for name in _names_aimed_at(victim):
        args = [command, "--url", ENGINE_URLS[engine.flavor], "--index", name]
        if command == "bench-beir":
            args[1:1] = [str(BEIR)]
            args += ["--out-dir", str(tmp_path / "out")]
        line = one_line_error(run_esqlog(*args, timeout=300), 2)
        assert "not a usable index name" in line or "esqlog did not create it" in line, line
        assert _state(engine, victim) == before, name
        assert _indices(engine, victim) == indices, name


def test_a_scratch_index_is_replaced_only_when_esqlog_marked_it(
    engine: Engine, victim: str
) -> None:
    name = f"esqlog-scratch-test-{engine.flavor}"
    delete_scratch(engine, name)
    try:
        create_corpus_index(engine, name, command="demo")
        bulk_index(engine, name, [{"id": 1, "body": "x"}])
        with pytest.raises(UsageError, match="exists"):
            create_corpus_index(engine, name, command="demo")  # no silent mixing of runs
        create_corpus_index(engine, name, replace=True, command="demo")
        assert call(engine, "GET", f"/{name}/_count")["count"] == 0
        meta = call(engine, "GET", f"/{name}/_mapping")[name]["mappings"]["_meta"]
        assert meta == {"esqlog": {"created_by": "esqlog demo", "scratch": True}}
        with pytest.raises(UsageError, match="esqlog did not create it"):
            create_corpus_index(engine, victim, replace=True)
        with pytest.raises(UsageError, match="esqlog did not create it"):
            delete_scratch(engine, victim)
    finally:
        assert delete_scratch(engine, name)
    assert not delete_scratch(engine, name)  # gone: nothing to do, no error
