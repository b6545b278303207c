"""Unit tests of the wrapper's I/O-free core on a scripted engine (tests/support/scripted.py): which
requests one search makes, in which order and with which bodies, for every mode and for the
index resolution's cache. Behaviour against clusters is tested on real nodes elsewhere."""

from __future__ import annotations

import math
import warnings
from typing import Any

import pytest

from esqlog.engine.search_call import SearchCall
from esqlog.engine.steps import ClientSearch, Pause
from esqlog.errors import UsageError
from esqlog.scoring.qlog import boost_weight
from esqlog.wrapper import ScriptingUnavailable, WrapOptions, WrapperCore, resolve
from esqlog.wrapper.search import search_plan
from tests.support.scripted import (
    ScriptedEngine,
    not_found,
    settings_answer,
)
from tests.support.wrapper_units import DF, HITS, SHARDS, N, Q, core, routes


def search(engine: ScriptedEngine, wrapper: WrapperCore, mode: Any = None, **kwargs: Any) -> Any:
    kwargs.setdefault("index", "code")
    return engine.run(search_plan(wrapper, (), kwargs, mode))


def sent(engine: ScriptedEngine) -> dict[str, Any]:
    """The keyword arguments of the last client search."""
    last = [s for s in engine.seen if isinstance(s, ClientSearch)][-1]
    return dict(last.kwargs)


def term_boosts(query: Any) -> dict[str, float]:
    found: dict[str, float] = {}

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "term" in node and isinstance(node["term"], dict):
                (spec,) = node["term"].values()
                found[spec["value"]] = float(spec.get("boost", 1.0))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(query)
    return found


# --- one boost search, cold then warm ----------------------------------------------------------


def test_cold_boost_search_resolves_fetches_statistics_then_searches_rewritten() -> None:
    engine, wrapper = ScriptedEngine(routes()), core()
    body = {"query": {"match": {"body": "read file"}}, "size": 5}
    assert search(engine, wrapper, body=body) == HITS
    assert engine.paths()[0] == "GET /code/_settings"
    assert engine.paths()[-2:] == ["POST /code/_mtermvectors", "SEARCH code"]
    probes = [p for p in engine.paths() if p == "GET /code/_search_shards"]
    assert 2 <= len(probes) <= 64 * SHARDS
    out = sent(engine)
    assert out["search_type"] == "dfs_query_then_fetch"  # 2 shards: global statistics
    assert body == {"query": {"match": {"body": "read file"}}, "size": 5}  # caller's untouched
    boosts = term_boosts(out["body"]["query"])
    for term in ("read", "file"):
        assert math.isclose(boosts[term], float(boost_weight(DF[term], N, Q)), rel_tol=1e-12)


def test_warm_search_with_cached_terms_sends_only_the_search() -> None:
    engine, wrapper = ScriptedEngine(routes(analyzer="standard")), core(standard=True)
    search(engine, wrapper, body={"query": {"match": {"body": "read file"}}})
    engine.seen.clear()
    search(engine, wrapper, body={"query": {"match": {"body": "file read"}}})
    assert engine.paths() == ["SEARCH code"]
    search(engine, wrapper, body={"query": {"match": {"body": "open file"}}})
    assert engine.paths() == ["SEARCH code", "POST /code/_mtermvectors", "SEARCH code"]


# --- index resolution: expiry and UUID ----------------------------------------------------------


def test_resolution_expires_and_keeps_routings_of_the_same_uuid(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    engine, wrapper = ScriptedEngine(routes(analyzer="standard")), core(standard=True)
    search(engine, wrapper, body={"query": {"match": {"body": "read"}}})
    engine.seen.clear()
    now = resolve.clock() + 61  # past the default 60 s
    monkeypatch.setattr(resolve, "clock", lambda: now)
    search(engine, wrapper, body={"query": {"match": {"body": "read"}}})
    # the name again, then the field's search analyzer (mapping and analysis settings): a
    # search_analyzer can be changed on a live index; routings are kept for the same UUID
    assert engine.paths() == [
        "GET /code/_settings",
        "GET /code/_mapping/field/body",
        "GET /code/_settings",
        "SEARCH code",
    ]


def test_a_new_uuid_gets_new_routings_and_fresh_statistics(monkeypatch: pytest.MonkeyPatch) -> None:
    engine, wrapper = ScriptedEngine(routes(analyzer="standard")), core(standard=True)
    search(engine, wrapper, body={"query": {"match": {"body": "read"}}})
    engine.routes.update(routes(uuid="U2", shards=3, analyzer="standard"))
    engine.seen.clear()
    now = resolve.clock() + 61
    monkeypatch.setattr(resolve, "clock", lambda: now)
    search(engine, wrapper, body={"query": {"match": {"body": "read"}}})
    paths = engine.paths()
    assert paths[0] == "GET /code/_settings" and "GET /code/_search_shards" in paths
    assert paths[-2:] == ["POST /code/_mtermvectors", "SEARCH code"]  # df not reused
    (stats_request,) = [s for s in engine.seen if getattr(s, "path", "").endswith("vectors")]
    assert len({d["routing"] for d in stats_request.body["docs"]}) == 3


def test_a_failed_statistics_request_re_resolves_then_lets_the_engine_answer() -> None:
    """The index went away: esqlog's request fails (per-document errors), the name no
    longer resolves, and the caller's search is sent as given: its 404 is the client's."""
    engine, wrapper = ScriptedEngine(routes()), core()
    search(engine, wrapper, body={"query": {"match": {"body": "read"}}})
    engine.routes[("POST", "/code/_mtermvectors")] = {
        "docs": [
            {"_index": "code", "error": {"type": "index_not_found_exception", "reason": "gone"}}
        ]
    }
    engine.routes[("GET", "/code/_settings")] = not_found("code")
    engine.routes[("SEARCH", "code")] = not_found("code")
    engine.seen.clear()
    body = {"query": {"match": {"body": "open"}}}
    with pytest.raises(type(not_found("code"))):
        search(engine, wrapper, body=body)
    assert engine.paths() == ["POST /code/_mtermvectors", "GET /code/_settings", "SEARCH code"]
    assert sent(engine) == {"index": "code", "body": body}


# --- pass-through ---------------------------------------------------------------------------------


@pytest.mark.parametrize("index", ["other", "code,other", "co*", None])
def test_uncalibrated_targets_pass_through_untouched(index: Any) -> None:
    engine = ScriptedEngine(
        {
            ("GET", "/other/_settings"): settings_answer("other", "U9", 1),
            ("SEARCH", str(index)): HITS,
        }
    )
    body = {"query": {"match": {"body": "read"}}}
    assert engine.run(search_plan(core(), (), {"index": index, "body": body}, None)) == HITS
    assert sent(engine) == {"index": index, "body": body}
    assert "GET /code/_settings" not in engine.paths()


def test_native_mode_and_queryless_searches_make_no_request() -> None:
    engine = ScriptedEngine(routes())
    search(engine, core(), "native", body={"query": {"match": {"body": "read"}}})
    search(engine, core(), None, body={"size": 0, "aggs": {}})
    assert engine.paths() == ["SEARCH code", "SEARCH code"]


def test_positional_opensearch_arguments_are_passed_on_by_name() -> None:
    engine = ScriptedEngine(routes())
    body = {"query": {"match": {"body": "read"}}}
    engine.run(search_plan(core(), (body, "code"), {}, "native"))
    assert sent(engine) == {"body": body, "index": "code"}


# --- script mode: probe, forced, auto -------------------------------------------------------------


def test_forced_script_mode_without_the_stored_script_raises() -> None:
    engine = ScriptedEngine({**routes(), ("GET", "/_scripts/esqlog-qlog-term"): not_found("s")})
    with pytest.raises(ScriptingUnavailable, match="stored script esqlog-qlog-term not found"):
        search(engine, core(mode="script"), body={"query": {"match": {"body": "read"}}})
    assert "SEARCH code" not in engine.paths()


def test_auto_mode_on_a_calibration_without_identifiers_is_boost_and_never_asks_for_scripts() -> (
    None
):
    engine = ScriptedEngine({**routes(), ("GET", "/_scripts/esqlog-qlog-term"): not_found("s")})
    wrapper = core(mode="auto")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing to warn about: boost is what auto chose
        search(engine, wrapper, body={"query": {"match": {"body": "open read"}}})
    assert "script_score" not in str(sent(engine)["body"]["query"])
    assert "GET /_scripts/esqlog-qlog-term" not in engine.paths()
    assert wrapper.effective_mode(None, "code") == "boost"
    assert wrapper.modes is not None and wrapper.modes.why["code"][0] == "boost"


def test_script_mode_scripts_rare_terms_only() -> None:
    engine = ScriptedEngine({**routes(), ("GET", "/_scripts/esqlog-qlog-term"): {"found": True}})
    search(engine, core(mode="script"), body={"query": {"match": {"body": "open file"}}})
    query = str(sent(engine)["body"]["query"])
    assert "script_score" in query  # open: df 6 <= 1% of 1000
    assert set(term_boosts(sent(engine)["body"]["query"])) >= {"file"}


# --- rerank: the chooser ------------------------------------------------------------------------


def test_engine_rerank_adds_a_rescore_and_keeps_the_query() -> None:
    engine = ScriptedEngine(routes())
    body = {"query": {"match": {"body": "read file"}}, "size": 5}
    search(engine, core(mode="rerank", top_n=50), body=body)
    out = sent(engine)["body"]
    assert out["query"] == body["query"]
    assert out["rescore"]["window_size"] == 50
    assert out["rescore"]["query"]["query_weight"] == 0.0


@pytest.mark.parametrize(
    ("version", "expected"),
    [("3.6.0", "include_named_queries_score"), ("2.11.0", "POST /_mtermvectors")],
)
def test_client_rerank_uses_named_scores_where_the_engine_has_them(
    version: str, expected: str
) -> None:
    vectors = {
        "docs": [
            {
                "_index": "code",
                "_id": i,
                "term_vectors": {"body": {"terms": {"read": {"term_freq": 1}}}},
            }
            for i in "ab"
        ]
    }
    engine = ScriptedEngine(
        {
            **routes(),
            ("POST", "/_mtermvectors"): vectors,
            ("GET", "/_nodes/_local"): {"nodes": {"n": {"version": version}}},
        }
    )
    body = {"query": {"match": {"body": "read file"}}, "from": 1, "size": 1}
    got = search(engine, core(mode="rerank", rerank_in="client", top_n=30), body=body)
    out = sent(engine)
    assert out["body"]["from"] == 0 and out["body"]["size"] == 30
    assert expected in str(out) or expected in engine.paths()
    assert len(got["hits"]["hits"]) == 1  # the page asked for


# --- the call, normalised -------------------------------------------------------------------------


def test_search_call_reads_and_sets_options_where_each_client_takes_them() -> None:
    es = SearchCall("elasticsearch", (), {"index": "i", "query": {"match_all": {}}, "from_": 3})
    assert es.get("from") == 3 and es.query == {"match_all": {}}
    es.set("from", 0)
    es.set("search_type", "dfs_query_then_fetch")
    assert es.final_kwargs() == {
        "index": "i",
        "query": {"match_all": {}},
        "from_": 0,
        "search_type": "dfs_query_then_fetch",
    }
    body = {"query": {"match_all": {}}, "size": 3}
    os_call = SearchCall("opensearch", (body, "i", {"size": 9}), {})
    assert os_call.get("size") == 3  # the body wins over params
    os_call.set("size", 30)
    assert os_call.final_kwargs()["body"]["size"] == 30 and body["size"] == 3
    os_call.set("search_type", "dfs_query_then_fetch")
    assert os_call.final_kwargs()["search_type"] == "dfs_query_then_fetch"
    with pytest.raises(TypeError, match="keyword arguments only"):
        SearchCall("elasticsearch", ({"query": {}},), {})


def _finish(engine: ScriptedEngine, plan: Any, step: Any) -> Any:
    """Drive a plan that already yielded ``step`` to its end."""
    try:
        while True:
            step = plan.send(engine.perform(step))
    except StopIteration as done:
        return done.value


def test_a_burst_on_a_cold_index_resolves_once() -> None:
    """Two searches interleaved: the second pauses while the first resolves the index."""
    engine, wrapper = ScriptedEngine(routes(analyzer="standard")), core(standard=True)
    body = {"query": {"match": {"body": "read"}}}
    first = search_plan(wrapper, (), {"index": "code", "body": body}, None)
    second = search_plan(wrapper, (), {"index": "code", "body": body}, None)
    claimed = first.send(None)
    assert claimed.path == "/code/_settings"
    waiting = second.send(None)
    assert isinstance(waiting, Pause)
    assert _finish(engine, first, claimed) == HITS
    assert _finish(engine, second, waiting) == HITS
    assert engine.paths().count("GET /code/_mapping/field/body") == 1  # one resolution:
    assert engine.paths().count("GET /code/_settings") == 2  # the name and its analysis
    assert engine.paths()[-2:] == ["PAUSE", "SEARCH code"]  # cached df: the search alone


# --- options ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        {"mode": "fast"},
        {"stats": "disk"},
        {"rerank_in": "gpu"},
        {"top_n": 0},
        {"top_n": 1.5},
        {"script_df_fraction": 1.5},
        {"script_df_fraction": math.nan},
        {"join_weight": 0},
        {"join_weight": -1.0},
        {"stats_ttl": -1},
        {"resolve_ttl": math.inf},
        {"identifiers": {"budget": 10}},
        {"mode": "identifiers", "stats": "live"},
    ],
)
def test_every_bad_option_is_one_usage_error(options: dict[str, Any]) -> None:
    name = next(iter(options))
    with pytest.raises(UsageError, match=name.split("_")[0]):
        WrapOptions(**options)
