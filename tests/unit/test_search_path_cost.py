"""The per-search shortcuts of the wrapped search path answer as the work they skip would.

Each search through the wrapper runs on a cold CPU cache (the engine's work evicts it while
the client waits), so the path reads what is fixed for the wrapper's life instead of finding
it again: the snapshot guard's owners, the auto mode's decisions, the refusal patterns, an
idf already computed. Each test pins one shortcut to the answer of the long way."""

from __future__ import annotations

import logging
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import pytest

import esqlog.wrapper.decisions as decisions
from esqlog.identifiers.query import _idf, _remembered_idf
from esqlog.identifiers.word_facts import WordFacts
from esqlog.statistics.analysis import MAX_TOKEN_LENGTH, standard_cuts, standard_terms
from esqlog.wrapper.auto_mode import AutoModes
from esqlog.wrapper.engine_query import _node_plan_refused, _refused
from esqlog.wrapper.identifier_plan import _answered_by_other_shards
from esqlog.wrapper.snapshots import SnapshotGuard
from tests.support.wrapper_units import calibration


@pytest.mark.parametrize(
    "text",
    [
        "read the file",
        "",
        "naïve café",  # not ASCII: the standard cut is not known here
        "x" * MAX_TOKEN_LENGTH,
        "x" * (MAX_TOKEN_LENGTH + 1),  # one term too long
        "a b " * 200,  # a long text of short terms
        "ok " + "y" * 300 + " ok",  # a long text holding one term too long
    ],
)
def test_standard_cuts_is_whether_standard_terms_knows_the_terms(text: str) -> None:
    assert standard_cuts(text) == (standard_terms(text) is not None)


def test_the_refusal_patterns_are_compiled_once_and_name_the_query_as_called_now(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from esqlog.identifiers import synonym

    assert _refused() is _refused() and _node_plan_refused() is _node_plan_refused()
    monkeypatch.setattr(synonym, "QUERY_NAME", "esqlog_terms_renamed")
    assert _refused().search("unknown query [esqlog_terms_renamed]")
    assert not _refused().search("unknown query [esqlog_terms]")


def test_a_decision_nobody_reads_is_not_built(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    trace = decisions.Trace("code", "auto")
    trace.rewritten("identifiers")
    built: list[Any] = []
    real = decisions.SearchDecision

    def counting(*args: Any) -> Any:
        built.append(args)
        return real(*args)

    monkeypatch.setattr(decisions, "SearchDecision", counting)
    caplog.set_level(logging.INFO, logger="esqlog")
    trace.emit(None)
    assert built == []
    seen: list[Any] = []
    trace.emit(seen.append)  # a hook reads it
    assert len(built) == 1 and seen[0].mode == "identifiers"
    caplog.set_level(logging.DEBUG, logger="esqlog")
    trace.emit(None)  # so does the DEBUG line
    assert len(built) == 2 and "rewritten (identifiers)" in caplog.text


def _asks(guard: SnapshotGuard, index: str, uuid: str | None) -> bool:
    """Whether the check asks the engine now (its request answered by a failure, which
    the guard shrugs off until the next minute)."""
    plan = guard.check_plan(index, uuid)
    try:
        next(plan)
    except StopIteration:
        return False
    with pytest.raises(StopIteration):
        plan.throw(RuntimeError("no engine here"))
    return True


def test_the_snapshot_guard_checks_at_once_when_an_owner_is_of_another_index() -> None:
    body = calibration("code")
    title = replace(body, field="title", index_uuid="U2")
    snapshots: Any = {("code", "body"): object(), ("code", "title"): object()}
    one = SnapshotGuard({("code", "body"): snapshots[("code", "body")]}, {"code": [body]})
    assert _asks(one, "code", "U1") and not _asks(one, "code", "U1")  # then once a minute
    assert _asks(one, "code", "U9")  # the name is another index now: at once
    both = SnapshotGuard(snapshots, {"code": [body, title]})
    assert _asks(both, "code", "U1") and _asks(both, "code", "U1")  # title is of U2
    assert not _asks(SnapshotGuard({}, {"code": [body]}), "code", "U1")  # none in use
    assert not _asks(one, "other", "U1")


def test_auto_mode_reads_its_decision_by_name_and_sends_an_alias_the_identifiers_way() -> None:
    modes = AutoModes.__new__(AutoModes)
    modes.why = {"code": ("identifiers", "code"), "docs": ("boost", "prose")}
    calibrated = {"code": [], "docs": []}
    assert modes.code("code", calibrated) and not modes.code("docs", calibrated)
    assert modes.code("code-alias", calibrated)  # resolved by the identifiers flow
    assert not modes.code("a,b", calibrated) and not modes.code(None, calibrated)
    modes.why = {"docs": ("boost", "prose")}
    assert not modes.code("docs-alias", calibrated)  # no code index at all


class _Call:
    """A call whose options are read only when a test allows it."""

    def __init__(self, options: dict[str, Any] | None) -> None:
        self.options = options

    def get(self, key: str) -> Any:
        assert self.options is not None, "the call's options were read"
        return self.options.get(key)


def test_an_answer_from_the_resolved_shards_reads_no_option() -> None:
    target: Any = SimpleNamespace(shards=3)
    answer = {"_shards": {"total": 3}}
    assert not _answered_by_other_shards(answer, target, _Call(None))  # type: ignore[arg-type]
    assert not _answered_by_other_shards({}, target, _Call(None))  # type: ignore[arg-type]
    other = {"_shards": {"total": 2}}
    assert _answered_by_other_shards(other, target, _Call({}))  # type: ignore[arg-type]
    for options in ({"routing": "7"}, {"preference": "_shards:0"}):
        assert not _answered_by_other_shards(other, target, _Call(options))  # type: ignore[arg-type]


class _Stats:
    def __init__(self) -> None:
        self.asked: list[str] = []

    def parts_of(self, term: str) -> tuple[str, ...]:
        return ()

    def compound_ids(self, subword: str) -> Any:
        self.asked.append(subword)
        return (subword, "ids")

    def split_df(self, word: str) -> int | None:
        return None if word in ("none", "absent") else len(word)


def test_word_facts_words_answers_each_word_as_word_does_once() -> None:
    stats = _Stats()
    facts = WordFacts(stats)
    first = facts.words(["read", "file", "none"])
    assert list(first) == ["read", "file", "none"]
    assert first == {w: facts.word(w) for w in first}
    assert first["none"][1] == 0 and first["read"][1] == 4
    assert facts.words(["file", "read"]) == {"file": first["file"], "read": first["read"]}
    assert stats.asked == ["read", "file", "none"]  # each looked up once


def test_a_remembered_idf_is_the_computed_one() -> None:
    for n, big_n, q in ((1, 153_101, 0.708), (900, 153_101, 1.0), (5, 10, 0.8)):
        assert _remembered_idf(n, big_n, q) == _idf(n, big_n, q)
        assert _remembered_idf(n, big_n, q) == _idf(n, big_n, q)  # from memory now


def test_a_word_that_is_no_sub_word_is_weighed_by_its_own_df() -> None:
    from esqlog.identifiers.query import weigh_words
    from esqlog.identifiers.settings import IdentifierSettings

    stats: Any = SimpleNamespace(
        facts=WordFacts(_Stats()), q=0.8, split_docs=1000, family_excess=lambda df: 0.0
    )
    weighed = weigh_words("read none absent", stats, lambda ws: {"none": 7}, IdentifierSettings())
    assert weighed.present == ("read", "none")  # "absent": no df either way
    assert weighed.split_df == {"read": 4, "none": 7, "absent": 0}
    assert weighed.weight["none"] == _idf(7, 1000, 0.8)
