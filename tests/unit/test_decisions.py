"""Every wrapped search ends in one SearchDecision (esqlog.wrapper.decisions): on the
``esqlog`` logger at DEBUG and to ``on_decision``, with the path it took and why. Scripted
engine (tests/support/scripted.py): what the plan decides, not how a cluster behaves."""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

import pytest

from esqlog.errors import ClusterError, UsageError
from esqlog.wrapper import SearchDecision, WrapOptions, WrapperCore
from esqlog.wrapper.search import search_plan
from tests.support.scripted import ScriptedEngine, not_found, settings_answer
from tests.support.wrapper_units import HITS, calibration, routes

MATCH = {"query": {"match": {"body": "read file"}}}


class Decisions(list[SearchDecision]):
    def __call__(self, decision: SearchDecision) -> None:
        self.append(decision)


def _core(decisions: Decisions, standard: bool = False, **options: Any) -> WrapperCore:
    return WrapperCore(
        [calibration(standard=standard)],
        WrapOptions(on_decision=decisions, **options),
        "opensearch",
    )


def _one(
    engine: ScriptedEngine,
    wrapper: WrapperCore,
    decisions: Decisions,
    mode: Any = None,
    **kwargs: Any,
) -> SearchDecision:
    """The decision of exactly one search (the hook is called once, not more)."""
    kwargs.setdefault("index", "code")
    before = len(decisions)
    engine.run(search_plan(wrapper, (), kwargs, mode))
    assert len(decisions) == before + 1
    return decisions[-1]


def test_a_rewritten_search_says_so_and_where_statistics_came_from() -> None:
    decisions = Decisions()
    engine = ScriptedEngine({**routes(analyzer="standard"), ("SEARCH", "['code']"): HITS})
    wrapper = _core(decisions, standard=True)
    cold = _one(engine, wrapper, decisions, body=MATCH)
    # mode="auto", wrap()'s default: a calibration without identifiers statistics is boost
    assert cold == SearchDecision("code", "auto", "boost", True, "rewritten", "engine")
    warm = _one(engine, wrapper, decisions, body=MATCH)  # the TTL cache holds every term
    assert (warm.rewritten, warm.statistics) == (True, "cache")
    assert _one(engine, wrapper, decisions, index=["code"], body=MATCH).rewritten


@pytest.mark.parametrize(
    ("kwargs", "mode", "reason"),
    [
        ({"body": MATCH}, "native", "native mode"),
        ({"body": {"size": 0, "aggs": {}}}, None, "no query"),
        ({"body": {**MATCH, "min_score": 2.0}}, None, "min_score"),
        ({"body": {"query": {"term": {"body": "read"}}}}, None, "no calibrated match clause"),
        ({"body": {"query": {"match": {"title": "read"}}}}, None, "no calibrated match clause"),
        ({"index": "other", "body": MATCH}, None, "index not calibrated"),
        ({"index": "code,other", "body": MATCH}, None, "not one index"),
        ({"index": ["code", "other"], "body": MATCH}, None, "not one index"),
        ({"index": "co*", "body": MATCH}, None, "not one index"),
        ({"index": None, "body": MATCH}, None, "not one index"),
        ({"body": {**MATCH, "sort": ["_doc"]}}, "rerank", "rerank needs a plain page"),
    ],
)
def test_each_pass_through_names_its_reason(kwargs: dict[str, Any], mode: Any, reason: str) -> None:
    decisions = Decisions()
    index = kwargs.get("index", "code")
    engine = ScriptedEngine(
        {
            **routes(),
            ("GET", "/other/_settings"): settings_answer("other", "U9", 1),
            ("SEARCH", str(index)): HITS,
        }
    )
    decision = _one(engine, _core(decisions), decisions, mode, **kwargs)
    assert (decision.rewritten, decision.reason, decision.mode) == (False, reason, "native")
    assert decision.index == (index if isinstance(index, str) else None)


def test_an_option_esqlog_does_not_know_is_still_rewritten_and_sent_as_given() -> None:
    decisions = Decisions()
    engine = ScriptedEngine(routes())
    body = {**MATCH, "profile": True, "ext": {"anything": 1}}
    decision = _one(engine, _core(decisions), decisions, body=body)
    assert (decision.rewritten, decision.reason) == (True, "rewritten")
    sent = [s for s in engine.seen if hasattr(s, "kwargs")][-1].kwargs["body"]
    assert sent["profile"] is True and sent["ext"] == {"anything": 1}
    assert sent["query"] != MATCH["query"]


def test_fallbacks_are_named() -> None:
    decisions = Decisions()
    engine = ScriptedEngine({**routes(), ("GET", "/_scripts/esqlog-qlog-term"): not_found("s")})
    wrapper = _core(decisions, mode="script")
    with pytest.raises(UsageError, match="stored script"):
        _one(engine, wrapper, decisions, body=MATCH)
    wrapper = _core(decisions, mode="auto")  # auto never asks for the script: nothing to name
    first = _one(engine, wrapper, decisions, body=MATCH)
    assert (first.requested, first.mode, first.rewritten, first.fallback) == (
        "auto",
        "boost",
        True,
        None,
    )
    # esqlog's own request fails twice: the search goes as given, and where the engine
    # answers it esqlog's failure stands (esqlog.wrapper.search._prepare_plan)
    engine.routes[("POST", "/code/_mtermvectors")] = {
        "docs": [
            {"_index": "code", "error": {"type": "index_not_found_exception", "reason": "gone"}}
        ]
    }
    with pytest.raises(ClusterError, match="term vectors failed"):
        engine.run(
            search_plan(
                wrapper, (), {"index": "code", "body": {"query": {"match": {"body": "open"}}}}, None
            )
        )
    failed = decisions[-1]
    assert (failed.rewritten, failed.reason) == (False, "esqlog request failed")
    assert failed.fallback is not None and failed.fallback.endswith("the search went as given")
    # ... or once, and the index is gone when resolved again: the engine's 404 stands
    failing = engine.routes[("POST", "/code/_mtermvectors")]
    engine.routes[("POST", "/code/_mtermvectors")] = routes()[("POST", "/code/_mtermvectors")]
    assert _one(engine, wrapper, decisions, body=MATCH).rewritten  # resolved and cached
    engine.routes[("POST", "/code/_mtermvectors")] = failing
    engine.routes[("GET", "/code/_settings")] = not_found("code")
    engine.routes[("SEARCH", "code")] = not_found("code")
    with pytest.raises(type(not_found("code"))):
        engine.run(
            search_plan(
                wrapper,
                (),
                {"index": "code", "body": {"query": {"match": {"body": "close"}}}},
                None,
            )
        )
    gone = decisions[-1]
    assert (gone.rewritten, gone.reason) == (False, "index not calibrated")
    assert gone.fallback is not None and "resolved again" in gone.fallback


def test_the_rerank_decision() -> None:
    decisions = Decisions()
    decision = _one(
        ScriptedEngine(routes()), _core(decisions, mode="rerank"), decisions, body=MATCH
    )
    assert (decision.mode, decision.rewritten, decision.statistics) == ("rerank", True, "engine")


def test_one_debug_line_per_search(caplog: pytest.LogCaptureFixture) -> None:
    engine = ScriptedEngine(
        {
            **routes(),
            ("GET", "/other/_settings"): settings_answer("other", "U9", 1),
            ("SEARCH", "other"): HITS,
        }
    )
    wrapper = WrapperCore([calibration()], WrapOptions(), "opensearch")  # no hook: only logs
    with caplog.at_level(logging.DEBUG, logger="esqlog"):
        engine.run(search_plan(wrapper, (), {"index": "code", "body": MATCH}, None))
        engine.run(search_plan(wrapper, (), {"index": "other", "body": MATCH}, None))
    lines = [r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG]
    assert lines == [
        "search code: rewritten (boost); mode auto; statistics engine",
        "search other: passed through (index not calibrated); mode auto",
    ]


def test_a_failing_hook_does_not_fail_the_search(caplog: pytest.LogCaptureFixture) -> None:
    def broken(decision: SearchDecision) -> None:
        raise RuntimeError("metrics backend down")

    wrapper = WrapperCore([calibration()], WrapOptions(on_decision=broken), "opensearch")
    assert (
        ScriptedEngine(routes()).run(
            search_plan(wrapper, (), {"index": "code", "body": MATCH}, None)
        )
        == HITS
    )
    assert "on_decision raised" in caplog.text


def test_a_usage_error_is_no_decision_and_a_bad_hook_is_one_usage_error() -> None:
    decisions = Decisions()
    with pytest.raises(UsageError):
        ScriptedEngine(routes()).run(
            search_plan(_core(decisions), (), {"index": "code", "body": MATCH}, "identifiers")
        )
    assert decisions == []
    with pytest.raises(UsageError, match="on_decision must be callable"):
        WrapOptions(on_decision="metrics")  # type: ignore[arg-type]
    assert dataclasses.is_dataclass(SearchDecision)
    with pytest.raises(dataclasses.FrozenInstanceError):
        SearchDecision("code", "boost", "boost", True, "rewritten").mode = "x"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("flavor", "rewritten", "reason"),
    [
        ("opensearch", False, "knn on opensearch"),  # OpenSearch rejects a top-level knn itself
        ("elasticsearch", True, "rewritten"),  # Elasticsearch runs it beside the rewritten query
    ],
)
def test_a_top_level_knn_passes_only_on_opensearch(
    flavor: str, rewritten: bool, reason: str
) -> None:
    decisions = Decisions()
    knn = {"field": "vector", "query_vector": [1.0, 0.0], "k": 3, "num_candidates": 9}
    engine = ScriptedEngine({**routes(), ("SEARCH", "code"): HITS})
    core = WrapperCore([calibration()], WrapOptions(on_decision=decisions), flavor)
    decision = _one(engine, core, decisions, body={**MATCH, "knn": knn})
    assert (decision.rewritten, decision.reason) == (rewritten, reason)
