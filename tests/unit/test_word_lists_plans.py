"""The word-lists indices' plans, without a cluster: which requests they send and how they
read the answers (the shapes both engines answer ``_mapping`` and ``_stats`` with). What the
engines do with them is tested on real nodes (tests/engine/test_word_lists_lifecycle.py)."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from esqlog.engine.state_index import MARKER_KEY
from esqlog.engine.steps import Request
from esqlog.errors import UsageError
from esqlog.identifiers.word_lists import (
    STATE,
    lists_indices_plan,
    remove_lists_plan,
    remove_superseded,
)

A, B, C = ("esqlog-words-" + h * 16 for h in "abc")


def _replay(plan: Generator[Request, Any, Any], answers: list[Any]) -> tuple[list[Request], Any]:
    """The requests ``plan`` sends, answered in turn by ``answers``, and what it returns."""
    sent: list[Request] = []
    try:
        request = next(plan)
        for answer in answers:
            sent.append(request)
            request = plan.send(answer)
        sent.append(request)
        raise AssertionError(f"the plan sent more requests than answered: {request}")
    except StopIteration as done:
        return sent, done.value


def _mapping(meta: dict[str, Any] | None) -> dict[str, Any]:
    return {"mappings": {"dynamic": False, **({"_meta": meta} if meta is not None else {})}}


def _marked(**more: Any) -> dict[str, Any]:
    return {MARKER_KEY: {"created_by": "esqlog calibrate", "state": STATE, **more}}


def test_the_listing_reads_marked_lists_and_names_the_others() -> None:
    mappings = {
        B: _mapping(_marked()),  # being written: no complete mark yet
        A: _mapping(_marked(complete=True, words=12)),
        C: _mapping(None),  # a user's index of that name
    }
    stats = {
        "indices": {
            A: {"primaries": {"docs": {"count": 12}, "store": {"size_in_bytes": 4096}}},
            B: {"primaries": {"docs": {"count": 3}, "store": {"size_in_bytes": 512}}},
        }
    }
    sent, (own, other) = _replay(lists_indices_plan(), [mappings, stats])
    assert [(r.method, r.path) for r in sent] == [
        ("GET", "/esqlog-words-*/_mapping"),
        ("GET", "/esqlog-words-*/_stats/docs,store"),
    ]
    assert [(o.name, o.words, o.complete, o.size_bytes) for o in own] == [
        (A, 12, True, 4096),
        (B, 3, False, 512),
    ]
    assert other == [C]


def test_no_lists_index_lists_nothing() -> None:
    _, (own, other) = _replay(lists_indices_plan(), [{}, {"indices": {}}])
    assert own == [] and other == []


def test_removal_deletes_only_a_marked_index_of_a_lists_name() -> None:
    sent, removed = _replay(remove_lists_plan(A), [{A: _mapping(_marked(complete=True))}, {}])
    assert removed is True and (sent[-1].method, sent[-1].path) == ("DELETE", f"/{A}")
    sent, removed = _replay(remove_lists_plan(A), [{}])
    assert removed is False and all(r.method == "GET" for r in sent)
    with pytest.raises(UsageError, match="did not create"):
        _replay(remove_lists_plan(A), [{A: _mapping({"other": 1})}])
    with pytest.raises(UsageError, match="not a word-lists index"):
        _replay(remove_lists_plan("code-myrepo"), [])


def test_nothing_is_superseded_without_a_previous_name_or_by_the_same_one() -> None:
    class NoCluster:
        def run(self, plan: Any) -> Any:
            raise AssertionError("no request may be sent")

    assert remove_superseded(NoCluster(), None, A) is None  # type: ignore[arg-type]
    assert remove_superseded(NoCluster(), A, A) is None  # type: ignore[arg-type]


class _Refusing:
    """An engine whose every plan fails with ``exc``."""

    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    def run(self, plan: Any) -> Any:
        raise self.exc


class _Forbidden(Exception):
    status_code = 403

    def __str__(self) -> str:
        return "no right to create the index"


def test_a_refused_write_or_delete_is_a_line_and_no_answer_is_raised() -> None:
    from dataclasses import replace
    from types import SimpleNamespace

    import numpy as np

    from esqlog.identifiers.word_lists import write_for_record
    from tests.support.wrapper_units import calibration

    record = replace(calibration(), terms_plugin="1.9.0", vocabulary_sha256="a" * 64)
    stats = SimpleNamespace(comp_ptr=np.array([0, 2, 2, 3]))
    kept, line = write_for_record(_Refusing(_Forbidden()), stats, record)  # type: ignore[arg-type]
    assert kept is record and line is not None
    assert "not written (HTTP 403" in line and "planned on the client" in line
    _, line = write_for_record(
        _Refusing(UsageError("index taken", "rename it")),  # type: ignore[arg-type]
        stats,  # type: ignore[arg-type]
        record,
    )
    assert line is not None and "not written (index taken)" in line
    line = remove_superseded(_Refusing(_Forbidden()), A, B)  # type: ignore[arg-type]
    assert line is not None and f"{A} was not removed (HTTP 403" in line
    with pytest.raises(ConnectionError):
        write_for_record(_Refusing(ConnectionError("down")), stats, record)  # type: ignore[arg-type]
    with pytest.raises(ConnectionError):
        remove_superseded(_Refusing(ConnectionError("down")), A, B)  # type: ignore[arg-type]
