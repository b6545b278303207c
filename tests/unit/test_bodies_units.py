"""I/O-free parts of the body handling: retriever trees, default fields, fuzziness 0, PITs.

rrf and linear retrievers need Elasticsearch's rank-rrf module, which the integ-test node
lacks: their rewrite is checked here only (unverified against an engine)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from esqlog.scoring.matchspec import parse_match, parse_multi_match, with_default_fields
from esqlog.wrapper.bodies import (
    dfs_allowed,
    has_top_level_knn,
    map_retriever,
    retriever_queries,
)
from esqlog.wrapper.pits import PitIndexes, PitSource, pit_id

Q1 = {"match": {"body": "read file"}}
Q2 = {"match": {"body": "error"}}
KNN = {"knn": {"field": "vec", "query_vector": [0.1], "k": 3, "num_candidates": 9}}


def _mark(query: Any) -> Any:
    return {"marked": query}


def test_standard_retriever_queries_are_mapped_and_the_rest_kept() -> None:
    tree = {"standard": {"query": Q1, "filter": Q2, "sort": ["_score"]}}
    assert map_retriever(tree, _mark) == {
        "standard": {"query": {"marked": Q1}, "filter": Q2, "sort": ["_score"]}
    }


def test_rrf_and_linear_children_are_mapped_knn_left_alone() -> None:
    rrf = {"rrf": {"retrievers": [{"standard": {"query": Q1}}, KNN], "rank_constant": 20}}
    assert map_retriever(rrf, _mark) == {
        "rrf": {"retrievers": [{"standard": {"query": {"marked": Q1}}}, KNN], "rank_constant": 20}
    }
    linear = {
        "linear": {
            "retrievers": [
                {"retriever": {"standard": {"query": Q2}}, "weight": 2, "normalizer": "minmax"},
                {"retriever": KNN, "weight": 1},
            ]
        }
    }
    mapped = map_retriever(linear, _mark)["linear"]["retrievers"]
    assert mapped[0] == {
        "retriever": {"standard": {"query": {"marked": Q2}}},
        "weight": 2,
        "normalizer": "minmax",
    }
    assert mapped[1] == {"retriever": KNN, "weight": 1}
    assert retriever_queries(rrf) == [Q1] and retriever_queries(linear) == [Q2]


def test_a_standard_retriever_with_min_score_or_no_query_is_not_mapped() -> None:
    for tree in (
        {"standard": {"query": Q1, "min_score": 2.0}},
        {"standard": {"filter": Q1}},
        {"standard": {"query": {"function_score": {"query": Q1, "min_score": 1}}}},
    ):
        assert map_retriever(tree, _mark) == tree
        assert retriever_queries(tree) == []


def test_wrapping_retrievers_are_entered() -> None:
    tree = {
        "text_similarity_reranker": {
            "retriever": {"standard": {"query": Q1}},
            "field": "body",
            "inference_text": "x",
        }
    }
    assert retriever_queries(tree) == [Q1]


def test_top_level_knn_in_the_body_or_as_a_keyword() -> None:
    assert has_top_level_knn({"knn": KNN["knn"]}, {})
    assert has_top_level_knn(None, {"knn": KNN["knn"]})
    assert not has_top_level_knn({"query": {"bool": {"should": [KNN]}}}, {})


def test_fuzziness_zero_is_reproducible_any_other_is_not() -> None:
    for fuzziness in (0, "0"):
        assert parse_match({"body": {"query": "a b", "fuzziness": fuzziness}}) is not None
        assert (
            parse_multi_match({"query": "a", "fields": ["body"], "fuzziness": fuzziness})
            is not None
        )
    for fuzziness in ("AUTO", 1, "1", "AUTO:3,6", False, 0.0, None):
        assert parse_match({"body": {"query": "a b", "fuzziness": fuzziness}}) is None


def test_default_fields_fill_fieldless_multi_match_unless_a_wildcard() -> None:
    query = {
        "bool": {
            "must": [{"multi_match": {"query": "a", "type": "most_fields"}}],
            "filter": [{"multi_match": {"query": "b"}}],
        }
    }
    filled = with_default_fields(query, ("content", "title^2"))
    assert filled["bool"]["must"][0]["multi_match"]["fields"] == ["content", "title^2"]
    assert filled["bool"]["filter"] == query["bool"]["filter"]  # never rewritten: kept
    assert with_default_fields(query, ("*",)) is query
    assert with_default_fields(query, ("content", "meta.*")) is query
    named = {"multi_match": {"query": "a", "fields": ["x"]}}
    assert with_default_fields(named, ("content",)) == named


def _finish(plan: Any, answer: Any) -> Any:
    with pytest.raises(StopIteration) as stop:
        plan.send(answer)
    return stop.value.value


def test_pit_sources_are_learnt_from_a_probe_and_from_responses() -> None:
    pits = PitIndexes()
    plan = pits.source_plan({"id": "p1", "keep_alive": "1m"})
    request = next(plan)
    assert request.body["pit"] == {"id": "p1"} and request.body["size"] == 1
    found = {"_shards": {"total": 3}, "hits": {"hits": [{"_index": "code"}]}}
    assert _finish(plan, found) == PitSource("code", 3)
    pits.remember({"pit_id": "p2"}, PitSource("code", 3))
    with pytest.raises(StopIteration) as known:  # no probe for a PIT id seen in a response
        next(pits.source_plan({"id": "p2"}))
    assert known.value.value == PitSource("code", 3)
    assert pit_id({"id": ""}) is None and pit_id("p1") is None


def test_a_pit_probe_without_hits_gives_no_source() -> None:
    plan = PitIndexes().source_plan({"id": "p"})
    next(plan)
    assert _finish(plan, {"_shards": {"total": 1}, "hits": {"hits": []}}) is None


def test_dfs_only_where_the_engine_is_known_to_take_it() -> None:
    assert dfs_allowed(False, None)
    assert dfs_allowed(False, {"standard": {"query": Q1}})
    assert not dfs_allowed(True, None)  # Elasticsearch refuses search_type beside knn
    assert not dfs_allowed(False, {"rrf": {"retrievers": [{"standard": {"query": Q1}}]}})


def _msearch(engine: Any, kwargs: dict[str, Any], args: tuple[Any, ...] = ()) -> Any:
    from esqlog.engine.steps import ClientSearch
    from esqlog.wrapper.multi import msearch_plan
    from tests.support.wrapper_units import core

    engine.run(msearch_plan(core(), args, kwargs, None))
    last = [s for s in engine.seen if isinstance(s, ClientSearch)][-1]
    assert last.method == "msearch"
    return last


def test_msearch_rewrites_each_calibrated_body_and_sets_dfs_in_its_own_header() -> None:
    from tests.support.scripted import ScriptedEngine
    from tests.support.wrapper_units import HITS, routes

    engine = ScriptedEngine({**routes(), ("SEARCH", "None"): HITS})
    searches = [
        {"index": "code"},
        {"query": {"match": {"body": "read file"}}},
        {"index": "code", "search_type": "query_then_fetch"},
        {"query": {"match": {"body": "open"}}},
        {"index": "elsewhere"},
        {"query": {"match": {"body": "read"}}},
        {},
        {"query": {"match": {"body": "read"}}, "min_score": 1},
    ]
    sent = _msearch(engine, {"index": "code", "body": searches}).kwargs["body"]
    assert sent[0] == {"index": "code", "search_type": "dfs_query_then_fetch"}
    assert "term" in json.dumps(sent[1]) and "match" not in json.dumps(sent[1])
    assert sent[2] == searches[2] and "match" not in json.dumps(sent[3])  # theirs kept
    assert sent[4:] == searches[4:]  # not calibrated; min_score
    assert searches[1] == {"query": {"match": {"body": "read file"}}}  # input untouched


def test_msearch_with_positional_arguments_or_ndjson_goes_as_given() -> None:
    from tests.support.scripted import ScriptedEngine
    from tests.support.wrapper_units import HITS

    engine = ScriptedEngine({("SEARCH", "None"): HITS, ("SEARCH", "code"): HITS})
    pairs = [{"index": "code"}, {"query": {"match": {"body": "read"}}}]
    assert _msearch(engine, {}, (pairs,)).args == (pairs,)
    ndjson = '{"index": "code"}\n{"query": {"match": {"body": "read"}}}\n'
    assert _msearch(engine, {"index": "code", "body": ndjson}).kwargs["body"] == ndjson
    assert [s for s in engine.seen if not hasattr(s, "method") or s.method != "msearch"] == []
