"""The wrapper follows the index a search names as it changes under a running application
(issue 12, items 7 and 11), on both engines:

* an alias moved to another index: once the resolution expires the wrapper searches what
  the alias names now (native ids, totals and scores when the new index is not calibrated);
* an index deleted and recreated with another shard count: statistics come from every shard
  of the new index (a fresh wrapper at once; a running one when its resolution expires);
* a deleted or closed index: the caller gets the client's own exception, as without esqlog.
"""

from __future__ import annotations

import dataclasses
import time
import uuid
import warnings
from collections.abc import Iterator
from typing import Any

import pytest

from esqlog.calibration.calibrate import calibrate
from esqlog.calibration.record import Calibration
from esqlog.engine.client import Engine
from esqlog.wrapper import resolve, wrap
from tests.support.code_snippets import SNIPPETS
from tests.support.engines import bulk_index, call, client_errors
from tests.support.oracle import hits_of, rel_close, total_of

Q_LOW = 0.6
WORDS = [
    "read file",
    "open socket",
    "parse json",
    "write buffer",
    "return value error",
    "close stream",
    "string format",
    "list append",
]


def _filled(engine: Engine, shards: int, docs: list[str], name: str | None = None) -> str:
    """A new index (or one recreated under ``name``) holding ``docs`` in ``body``."""
    index = name or f"esqlog-test-{uuid.uuid4().hex[:10]}"
    call(
        engine,
        "PUT",
        f"/{index}",
        {
            "settings": {"number_of_shards": shards, "number_of_replicas": 0},
            "mappings": {"properties": {"body": {"type": "text"}}},
        },
    )
    bulk_index(engine, index, [{"id": i, "body": text} for i, text in enumerate(docs)])
    return index


def _low_q(engine: Engine, index: str) -> Calibration:
    return dataclasses.replace(calibrate(engine, index, "body", sample=50), q=Q_LOW)


def _search(client: Any, index: str, text: str) -> Any:
    return client.search(
        index=index, body={"query": {"match": {"body": text}}, "size": 20, "track_total_hits": True}
    )


def _same(expected: Any, got: Any, context: Any) -> None:
    assert total_of(got) == total_of(expected), context
    assert [i for i, _ in hits_of(got)] == [i for i, _ in hits_of(expected)], context
    for (_, s1), (_, s2) in zip(hits_of(expected), hits_of(got), strict=True):
        assert rel_close(s1, s2, 1e-6), context


@pytest.fixture
def later(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Call to move the wrapper's resolution clock past its TTL."""

    def forward() -> None:
        now = time.monotonic() + 3600
        monkeypatch.setattr(resolve, "clock", lambda: now)

    yield forward


def test_an_alias_moved_to_another_index_is_followed(engine: Engine, later: Any) -> None:
    first = _filled(engine, 3, SNIPPETS)
    second = _filled(engine, 2, [*SNIPPETS[::2], "def read_file(path): return open(path)"])
    alias = f"esqlog-test-alias-{uuid.uuid4().hex[:8]}"
    try:
        call(engine, "POST", "/_aliases", {"actions": [{"add": {"index": first, "alias": alias}}]})
        wrapped = wrap(engine.client, _low_q(engine, first))
        texts = [t for t in WORDS if hits_of(_search(engine.client, alias, t))]
        assert len(texts) >= 4
        moved = sum(
            hits_of(_search(wrapped, alias, t)) != hits_of(_search(engine.client, alias, t))
            for t in texts
        )
        assert moved >= 1  # esqlog really rescored the first index
        call(
            engine,
            "POST",
            "/_aliases",
            {
                "actions": [
                    {"remove": {"index": first, "alias": alias}},
                    {"add": {"index": second, "alias": alias}},
                ]
            },
        )
        later()
        for text in WORDS:  # the second index is not calibrated: native, exactly
            _same(_search(engine.client, alias, text), _search(wrapped, alias, text), text)
    finally:
        call(engine, "DELETE", f"/{first},{second}")


@pytest.mark.parametrize("shards", [1, 5])
def test_a_recreated_index_is_read_on_all_its_shards(
    engine: Engine, later: Any, shards: int
) -> None:
    """A running wrapper after its resolution expired, and a fresh wrapper given the old
    calibration (which names 3 shards), both score as a calibration of the new index does."""
    index = _filled(engine, 3, SNIPPETS)
    try:
        old = _low_q(engine, index)
        running = wrap(engine.client, old)
        for text in WORDS:
            _search(running, index, text)
        call(engine, "DELETE", f"/{index}")
        _filled(engine, shards, SNIPPETS[1::2] + SNIPPETS[::3], name=index)
        expected = wrap(engine.client, _low_q(engine, index))
        fresh = wrap(engine.client, old)
        later()
        checked = 0
        for text in WORDS:
            want = _search(expected, index, text)
            _same(want, _search(fresh, index, text), (shards, text))
            _same(want, _search(running, index, text), (shards, text))
            checked += bool(hits_of(want))
        assert checked >= 4
    finally:
        call(engine, "DELETE", f"/{index}", ignore_unavailable="true")


def test_deleted_and_closed_indices_raise_the_clients_own_errors(engine: Engine) -> None:
    """The wrapper had resolved the index (and cached some terms) before it went away;
    new terms then need esqlog's own statistics request, which the engine refuses."""
    not_found, bad_request = client_errors(engine.flavor)
    index = _filled(engine, 3, SNIPPETS)
    try:
        wrapped = wrap(engine.client, _low_q(engine, index))
        assert hits_of(_search(wrapped, index, "read file"))
        call(engine, "POST", f"/{index}/_close")
        for i, client in enumerate((engine.client, wrapped)):  # native first, then esqlog
            with pytest.raises(bad_request, match="closed"):
                _search(client, index, f"closedword{i} socket")
        call(engine, "POST", f"/{index}/_open", wait_for_active_shards="all")
        assert hits_of(_search(wrapped, index, "open name error"))
        call(engine, "DELETE", f"/{index}")
        for i, client in enumerate((engine.client, wrapped)):
            with pytest.raises(not_found):
                _search(client, index, f"deletedword{i} stream")
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # and nothing esqlog-specific on the way
            with pytest.raises(not_found):
                _search(wrapped, index, "read file")
    finally:
        call(engine, "DELETE", f"/{index}", ignore_unavailable="true")
