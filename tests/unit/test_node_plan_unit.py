"""The I/O-free parts of identifiers queries planned on the node: the ``esqlog_identifiers``
clause the client sends (esqlog.identifiers.node_plan), when it may send one, the word lists'
documents (esqlog.identifiers.word_lists), the calibration field that names them, and the
fall back to the client's plan when a node refuses the query (esqlog.wrapper.engine_query).
The node's side is WordPlanTest.java and tests/engine/test_node_plan.py."""

from __future__ import annotations

import base64
import logging
from collections.abc import Generator
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from esqlog.calibration.plugin import node_plan_for, plans_on_node, search_path_line
from esqlog.calibration.record import Calibration
from esqlog.errors import UsageError
from esqlog.identifiers.node_plan import QUERY_NAME, fits, node_clause
from esqlog.identifiers.query import WeighedWords
from esqlog.identifiers.selection import MULTI_SCAN
from esqlog.identifiers.settings import IdentifierSettings
from esqlog.identifiers.word_lists import lists_index_name, word_documents
from esqlog.wrapper.engine_query import EngineQueryChoice, with_span_fallback
from tests.support.wrapper_units import calibration

LISTS = "esqlog-words-0123456789abcdef"


def _weighed(settings: IdentifierSettings | None = None, cap: int | None = None) -> WeighedWords:
    every = {
        "read": np.asarray([4, 2, 9], np.int32),
        "file": np.asarray([2, 7], np.int32),
        "fs": np.asarray([5], np.int32),
        "zz": np.asarray([], np.int32),
    }
    comps = {w: ids if cap is None or w != "read" else ids[:cap] for w, ids in every.items()}
    settings = settings or IdentifierSettings(engine_query="plugin")
    return WeighedWords(
        ("read", "file", "fs", "zz"),
        {},
        {},
        {"read": 12, "file": 900, "fs": 0, "zz": 3},
        {"read": 2.5, "file": 0.75, "fs": 4.0, "zz": 1.0},
        every,
        comps,
        frozenset({"file"}),
        settings,
        (),
        0.8,
        False,
        "",
        settings.whole_words,
    )


def test_the_clause_says_what_the_node_plan_reads_of_each_word() -> None:
    clause = node_clause(_weighed(), "body", LISTS, 300)[QUERY_NAME]
    assert (clause["field"], clause["lists"], clause["budget"], clause["select"]) == (
        "body",
        LISTS,
        300,
        "all",  # the default "auto" reaches a clause only where the nodes keep whole words
    )
    words = {w["word"]: w for w in clause["words"]}
    assert list(words) == ["read", "file", "fs", "zz"]  # the query's order
    assert words["read"] == {
        "word": "read",
        "weight": 2.5,
        "first": False,
        "tier": 1.0,
        "own": True,
        "apart": False,
    }
    assert words["file"]["tier"] == 2.0 and words["file"]["apart"]  # common: after the others
    assert words["fs"]["first"] and not words["fs"]["own"]  # its first compound stands in
    assert not words["zz"]["first"]  # no compound to stand in


def test_rare_first_off_tiers_every_word_alike_and_a_cap_is_sent_as_a_limit() -> None:
    plain = IdentifierSettings(engine_query="plugin", rare_first=False, select="mass")
    clause = node_clause(_weighed(plain, cap=1), "body", LISTS, 40)[QUERY_NAME]
    assert {w["tier"] for w in clause["words"]} == {1.0} and clause["select"] == "mass"
    limits = {w["word"]: w.get("limit") for w in clause["words"]}
    assert limits == {"read": 1, "file": None, "fs": None, "zz": None}


def test_a_query_without_words_matches_nothing() -> None:
    empty = replace(_weighed(), present=())
    assert node_clause(empty, "body", LISTS, 300) == {"match_none": {}}


def test_the_node_plans_within_its_lists_and_the_clause_limit() -> None:
    assert fits(300, 12, 1024)
    assert not fits(MULTI_SCAN, 12, 100_000)  # past the compounds the lists keep
    assert fits(MULTI_SCAN - 1, 12, 100_000)
    assert not fits(300, 12, 299)  # up to the budget's terms may come back
    assert not fits(10, 40, 39) and fits(10, 40, 40)  # each word sends one at least


def test_the_word_documents_hold_each_words_head_most_frequent_first() -> None:
    words = ["read", "file", "readfile", "filepath", "fs"]
    # read -> readfile; file -> filepath, readfile; fs -> none
    stats = SimpleNamespace(
        words=words,
        comp_ptr=np.asarray([0, 1, 3, 3, 3, 3], np.int64),
        comp_idx=np.asarray([2, 3, 2], np.int32),
        df_engine=np.asarray([10, 20, 7, 9, 0], np.uint32),
    )
    docs = dict(word_documents(stats))  # type: ignore[arg-type]
    assert list(docs) == ["read", "file"]
    ids = np.frombuffer(base64.b64decode(docs["file"]["ids"]), "<i4")
    df = np.frombuffer(base64.b64decode(docs["file"]["df"]), "<i4")
    assert ids.tolist() == [3, 2] and df.tolist() == [9, 7]
    assert docs["file"]["terms"] == "filepath\nreadfile"


def test_the_lists_index_is_named_by_the_snapshot_and_checked_in_the_record() -> None:
    assert lists_index_name("ab" * 32) == "esqlog-words-" + "ab" * 8
    record = calibration()
    data = {**record.to_json(), "h_tok_high": 0.95, "word_lists": LISTS, "terms_plugin": "1.9.0"}
    assert Calibration.from_json(data).word_lists == LISTS
    for bad in ("esqlog-words-XYZ", "my-index", "esqlog-words-0123456789abcdef/_doc"):
        with pytest.raises(UsageError, match="word_lists"):
            Calibration.from_json({**data, "word_lists": bad})


def test_the_nodes_plan_only_with_lists_and_a_plugin_that_reads_them() -> None:
    record = replace(calibration(), word_lists=LISTS, terms_plugin="1.9.0")
    assert node_plan_for(record) and plans_on_node("1.10.0") and plans_on_node("2.0.0")
    assert not node_plan_for(replace(record, terms_plugin="1.8.0"))
    assert not node_plan_for(replace(record, terms_plugin=""))
    assert not node_plan_for(replace(record, word_lists=None))
    assert LISTS in search_path_line(record)
    assert "planned on the node" not in search_path_line(replace(record, word_lists=None))


def test_select_auto_is_all_only_where_every_data_node_keeps_whole_words() -> None:
    record = replace(calibration(), word_lists=LISTS, terms_plugin="1.11.1")

    def chosen(*records: Calibration, **given: Any) -> str:
        settings = IdentifierSettings(**given)
        return EngineQueryChoice(settings, list(records)).settings.select

    assert IdentifierSettings().select == "auto"
    assert chosen(record) == "auto"  # sent to the nodes as "all"
    assert chosen(replace(record, terms_plugin="1.12.3")) == "auto"
    assert chosen(replace(record, terms_plugin="1.10.0")) == "cover"  # plans, keeps no word
    # keeps whole words, but failed a query past its bound outside the cache
    assert chosen(replace(record, terms_plugin="1.11.0")) == "cover"
    assert chosen(replace(record, terms_plugin="")) == "cover"  # spans
    assert chosen(replace(record, word_lists=None)) == "cover"  # planned on the client
    assert chosen(record, replace(record, terms_plugin="1.10.0")) == "cover"  # every one
    assert chosen(record, engine_query="span") == "cover"
    assert chosen(record, select="cover") == "cover" and chosen(record, select="all") == "all"
    assert chosen(replace(record, terms_plugin="1.10.0"), select="all") == "all"  # as asked
    assert "select all" in search_path_line(record)
    assert "select all" not in search_path_line(replace(record, terms_plugin="1.10.0"))


class ClientError(Exception):
    def __init__(self, info: Any) -> None:
        super().__init__("BadRequestError(400)")
        self.info = info


NODE_REFUSAL = {"error": {"type": "parsing_exception", "reason": "unknown query [%s]"}}
LISTS_GONE = {
    "error": {
        "type": "illegal_argument_exception",
        "reason": "[esqlog_identifiers] cannot read the word lists in [x]: no such index",
    }
}


def _drive(gen: Generator[Any, Any, Any]) -> Any:
    try:
        while True:
            next(gen)
    except StopIteration as done:
        return done.value


def _ladder(errors: list[Any]) -> tuple[list[tuple[str, bool]], Any, list[IdentifierSettings]]:
    """Runs a search through with_span_fallback whose attempts fail with ``errors`` in
    turn (then succeed); what each attempt was sent as, the answer, the settings changes."""
    record = replace(calibration(), word_lists=LISTS, terms_plugin="1.9.0")
    choice = EngineQueryChoice(IdentifierSettings(), [record])
    attempts: list[tuple[str, bool]] = []
    changes: list[IdentifierSettings] = []

    def plan() -> Generator[Any, Any, str]:
        attempts.append((choice.settings.engine_query, choice.settings.node_plan))
        if False:
            yield
        if errors:
            raise ClientError(errors.pop(0))
        return "answer"

    return attempts, _drive(with_span_fallback(choice, changes.append, plan, lambda: None)), changes


def test_a_node_refusing_the_words_query_plans_on_the_client_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    for refusal in (
        {"error": {"reason": NODE_REFUSAL["error"]["reason"] % QUERY_NAME}},
        LISTS_GONE,
    ):
        with caplog.at_level(logging.WARNING, logger="esqlog"):
            attempts, answer, changes = _ladder([refusal])
        assert answer == "answer"
        assert attempts == [("plugin", True), ("plugin", False)]
        assert [s.node_plan for s in changes] == [False]
    assert sum(QUERY_NAME in r.getMessage() for r in caplog.records) == 2  # one a wrapper


def test_a_node_without_the_plugin_goes_from_the_node_plan_to_spans() -> None:
    refusal = {"error": {"reason": "unknown query [%s]"}}
    attempts, answer, _ = _ladder(
        [
            {"error": {"reason": refusal["error"]["reason"] % QUERY_NAME}},
            {"error": {"reason": refusal["error"]["reason"] % "esqlog_terms"}},
        ]
    )
    assert answer == "answer"
    assert attempts == [("plugin", True), ("plugin", False), ("span", False)]


def test_other_errors_are_the_callers() -> None:
    with pytest.raises(ClientError):
        _ladder([{"error": {"reason": "search_phase_execution_exception: timeout"}}])


def test_the_refusal_names_the_query_as_it_is_called_now(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plugin query's name is read when a refusal is checked (the engine tests stand in
    a node without the plugin by renaming it), not when the module was imported."""
    from esqlog.identifiers import synonym
    from esqlog.wrapper.engine_query import plugin_refused

    monkeypatch.setattr(synonym, "QUERY_NAME", "esqlog_terms_absent")
    assert plugin_refused(ClientError({"error": "unknown query [esqlog_terms_absent]"}))


def test_select_all_sends_at_most_two_clauses_a_word_whatever_the_budget() -> None:
    assert fits(300, 12, 24, every=True) and not fits(300, 12, 23, every=True)
    assert not fits(300, 12, 24)  # the budget's plan may send up to 300 terms
    assert not fits(MULTI_SCAN, 12, 100_000, every=True)


def test_select_all_is_a_setting_and_the_clause_says_it() -> None:
    settings = IdentifierSettings(engine_query="plugin", select="all")
    clause = node_clause(_weighed(settings), "body", LISTS, 300)[QUERY_NAME]
    assert clause["select"] == "all"
    with pytest.raises(UsageError, match="'all'"):
        IdentifierSettings(select="every")  # type: ignore[arg-type]
