"""One request per shard, merged as a search response (esqlog.wrapper.fan_out): the I/O-free
parts. The engines' own answers are checked in tests/engine/test_wrapper_identifiers.py."""

from __future__ import annotations

from typing import Any

import pytest

from esqlog.engine.search_call import SearchCall
from esqlog.wrapper.fan_out import (
    aggregations_read_scores,
    fan_out_searches,
    fans_out,
    index_moved,
    merge_call,
    merge_responses,
)


def answer(
    shard: int, scores: list[float], total: int, relation: str = "eq", **extra: Any
) -> dict[str, Any]:
    hits = [{"_index": "i", "_id": f"{shard}-{k}", "_score": s} for k, s in enumerate(scores)]
    return {
        "took": 3 + shard,
        "timed_out": False,
        "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0},
        "hits": {
            "total": {"value": total, "relation": relation},
            "max_score": max(scores) if scores else None,
            "hits": hits,
        },
        **extra,
    }


def test_hits_merge_by_score_ties_by_shard_then_each_shards_order() -> None:
    shards = [answer(0, [5.0, 2.0, 2.0], 3), answer(1, [7.0, 2.0], 9), answer(2, [], 0)]
    merged = merge_responses(shards, 11, 0, 10, True)
    assert merged is not None
    assert [h["_id"] for h in merged["hits"]["hits"]] == ["1-0", "0-0", "0-1", "0-2", "1-1"]
    assert merged["hits"]["total"] == {"value": 12, "relation": "eq"}
    assert merged["hits"]["max_score"] == 7.0
    assert merged["_shards"] == {"total": 3, "successful": 3, "skipped": 0, "failed": 0}
    assert merged["took"] == 11 and merged["timed_out"] is False


def test_from_and_size_page_the_merged_hits() -> None:
    shards = [answer(0, [9.0, 6.0, 3.0], 3), answer(1, [8.0, 5.0, 2.0], 3)]
    full = merge_responses(shards, 1, 0, 6, True)
    page = merge_responses(shards, 1, 2, 2, True)
    assert full is not None and page is not None
    assert page["hits"]["hits"] == full["hits"]["hits"][2:4]


@pytest.mark.parametrize(
    ("track", "expected"),
    [
        (None, {"value": 10_000, "relation": "gte"}),
        (True, {"value": 12_000, "relation": "eq"}),
        (500, {"value": 500, "relation": "gte"}),
        (20_000, {"value": 12_000, "relation": "eq"}),
    ],
)
def test_totals_are_summed_then_capped_as_track_total_hits_caps_them(
    track: Any, expected: dict[str, Any]
) -> None:
    shards = [answer(0, [1.0], 7_000), answer(1, [1.0], 5_000)]
    merged = merge_responses(shards, 1, 0, 10, track)
    assert merged is not None and merged["hits"]["total"] == expected


def test_a_lower_bound_stays_a_lower_bound_and_no_total_stays_absent() -> None:
    merged = merge_responses([answer(0, [1.0], 10, "gte"), answer(1, [1.0], 3)], 1, 0, 10, 10)
    assert merged is not None and merged["hits"]["total"] == {"value": 10, "relation": "gte"}
    bare = [answer(0, [1.0], 1), answer(1, [], 0)]
    for one in bare:
        del one["hits"]["total"]
    merged = merge_responses(bare, 1, 0, 10, False)
    assert merged is not None and "total" not in merged["hits"]
    assert merged["hits"]["max_score"] == 1.0


def test_shard_failures_are_kept_and_an_error_answer_means_no_merge() -> None:
    failing = answer(1, [], 0)
    failing["_shards"] = {
        "total": 1,
        "successful": 0,
        "skipped": 0,
        "failed": 1,
        "failures": [{"shard": 1, "reason": {"type": "x"}}],
    }
    merged = merge_responses([answer(0, [1.0], 1), failing], 1, 0, 10, True)
    assert merged is not None and merged["_shards"]["failed"] == 1
    assert merged["_shards"]["failures"] == [{"shard": 1, "reason": {"type": "x"}}]
    error = {"error": {"type": "search_phase_execution_exception"}, "status": 400}
    assert merge_responses([answer(0, [1.0], 1), error], 1, 0, 10, True) is None


@pytest.mark.parametrize(
    ("flavor", "kwargs", "plain"),
    [
        ("opensearch", {"index": "i", "body": {"query": {}, "size": 5, "from": 5}}, True),
        (
            "opensearch",
            {
                "index": "i",
                "body": {"query": {}, "highlight": {"fields": {}}},
                "params": {"request_timeout": 3},
            },
            True,
        ),
        (
            "elasticsearch",
            {"index": "i", "query": {}, "size": 5, "from_": 5, "source": False},
            True,
        ),
        ("opensearch", {"index": "i", "body": {"query": {}, "aggs": {}}}, True),
        ("opensearch", {"index": "i", "body": {"query": {}}, "params": {"routing": "a"}}, True),
        ("elasticsearch", {"index": "i", "query": {}, "aggregations": {}}, True),
        ("elasticsearch", {"index": "i", "query": {}, "collapse": {"field": "x"}}, True),
        ("elasticsearch", {"index": "i", "query": {}, "rescore": {}, "profile": True}, True),
        ("elasticsearch", {"index": "i", "query": {}, "preference": "user-1"}, True),
        ("elasticsearch", {"index": "i", "query": {}, "request_cache": True}, True),
        ("opensearch", {"index": "i", "body": {"query": {}, "sort": ["_doc"]}}, False),
        ("opensearch", {"index": "i", "body": {"query": {}, "search_after": [1]}}, False),
        ("opensearch", {"index": "i", "body": {"query": {}}, "params": {"scroll": "1m"}}, False),
        ("elasticsearch", {"index": "i", "query": {}, "filter_path": "hits"}, False),
        (
            "elasticsearch",
            {"index": "i", "query": {}, "collapse": {"field": "x", "inner_hits": {"name": "n"}}},
            False,
        ),
        ("elasticsearch", {"index": "i", "query": {}, "aggs": {}, "profile": True}, False),
        ("elasticsearch", {"index": "i", "query": {}, "preference": "_shards:0"}, False),
        ("opensearch", {"index": "i", "body": {"query": {}, "size": "5"}}, False),
    ],
)
def test_only_searches_the_merge_rebuilds_exactly_fan_out(
    flavor: str, kwargs: dict[str, Any], plain: bool
) -> None:
    assert fans_out(SearchCall(flavor, (), kwargs)) is plain


def test_collapse_keeps_each_keys_best_hit_across_shards() -> None:
    shards = [answer(0, [5.0, 4.0], 2), answer(1, [6.0, 3.0], 2)]
    for shard, keys in ((0, ["a", "b"]), (1, ["b", "c"])):
        for hit, key in zip(shards[shard]["hits"]["hits"], keys, strict=True):
            hit["fields"] = {"k": [key]}
    merged = merge_responses(shards, 1, 0, 10, True, collapse="k")
    assert merged is not None
    assert [h["_id"] for h in merged["hits"]["hits"]] == ["1-0", "0-0", "1-1"]
    assert merged["hits"]["total"]["value"] == 4  # total counts documents, not groups


def test_profiles_are_listed_and_aggregations_come_from_the_whole_index_request() -> None:
    shards = [
        answer(0, [1.0], 1, profile={"shards": [{"id": "0"}]}),
        answer(1, [2.0], 1, profile={"shards": [{"id": "1"}]}),
    ]
    whole = {
        "hits": {"total": {"value": 2, "relation": "eq"}, "hits": []},
        "aggregations": {"n": {"doc_count": 2}},
    }
    call = SearchCall(
        "elasticsearch", (), {"index": "i", "query": {}, "profile": True, "aggs": {"n": {}}}
    )
    merged = merge_call(call, [*shards, whole], 5, 2)
    assert merged is not None
    assert merged["profile"] == {"shards": [{"id": "0"}, {"id": "1"}]}
    assert merged["aggregations"] == {"n": {"doc_count": 2}}
    assert merged["_shards"]["total"] == 2  # the per-shard requests' shards only
    assert merge_call(call, [*shards, {"error": {"type": "x"}}], 5, 2) is None


def test_each_request_reads_its_shard_with_the_callers_options() -> None:
    call = SearchCall(
        "opensearch",
        (),
        {
            "index": "i",
            "body": {"query": {}, "aggs": {"a": {}}, "size": 3, "from": 2},
            "params": {"routing": "r", "preference": "user"},
        },
    )
    lines = fan_out_searches("opensearch", call, [{"q": 0}, {"q": 1}], {"one": 1})
    assert lines[0] == {"index": "i", "preference": "_shards:0", "routing": "r"}
    assert lines[1] == {"query": {"q": 0}, "size": 5, "from": 0}
    assert lines[4] == {
        "index": "i",
        "routing": "r",
        "preference": "user",
        "search_type": "dfs_query_then_fetch",
    }
    assert lines[5] == {"aggs": {"a": {}}, "query": {"one": 1}, "size": 0}
    es = SearchCall("elasticsearch", (), {"index": "i", "query": {}, "preference": "user"})
    assert fan_out_searches("elasticsearch", es, [{}])[0]["preference"] == "_shards:0|user"
    local = SearchCall(
        "opensearch", (), {"index": "i", "body": {"query": {}}, "params": {"preference": "_local"}}
    )
    assert fan_out_searches("opensearch", local, [{}])[0]["preference"] == "_shards:0|_local"


def test_an_answer_from_no_shard_or_a_missing_index_means_the_index_moved() -> None:
    gone = {"error": {"type": "index_not_found_exception"}, "status": 404}
    empty = answer(1, [], 0)
    empty["_shards"] = {"total": 0, "successful": 0, "skipped": 0, "failed": 0}
    assert index_moved([answer(0, [1.0], 1), gone], routed=False)
    assert index_moved([answer(0, [1.0], 1), empty], routed=False)
    assert not index_moved([answer(0, [1.0], 1), empty], routed=True)
    assert not index_moved([answer(0, [1.0], 1), answer(1, [], 0)], routed=False)


@pytest.mark.parametrize(
    ("body", "aggs_scored", "unscored"),
    [
        ({"aggs": {"p": {"terms": {"field": "pkg"}}}}, False, False),
        (
            {"aggs": {"p": {"terms": {"field": "pkg"}, "aggs": {"b": {"top_hits": {}}}}}},
            True,
            False,
        ),
        ({"aggs": {"s": {"sampler": {}}}}, True, False),
        ({"sort": [{"key": "asc"}]}, False, True),
        ({"sort": [{"key": "asc"}, "_score"]}, False, False),
        ({"sort": [{"key": "asc"}], "track_scores": True}, False, False),
        ({"sort": [{"key": "asc"}], "aggs": {"b": {"top_hits": {}}}}, True, False),
        ({}, False, False),  # ranked by score: the scored query
    ],
)
def test_which_searches_read_scores(
    body: dict[str, Any], aggs_scored: bool, unscored: bool
) -> None:
    """Aggregations that read no score, and searches sorted by fields, need only the match
    set (the constant-score filter); the rest get the scored query."""
    from esqlog.wrapper.identifier_plan import scores_unread

    call = SearchCall("opensearch", (), {"index": "i", "body": {"query": {}, **body}})
    assert aggregations_read_scores(call) is aggs_scored
    assert scores_unread(call) is unscored


@pytest.mark.parametrize(("start", "size"), [(0, 10), (10, 10), (20, 5), (0, 1), (7, 0)])
def test_each_shard_is_asked_for_from_plus_size_hits(start: int, size: int) -> None:
    """A page from ``from`` needs every shard's best from + size hits: any of them may be
    the merged list's last one. Asking each for ``size`` only happens to work when the
    shards' hits interleave (from=10, size=10 on 3 shards fills 30 >= 20)."""
    from esqlog.engine.steps import ClientSearch
    from esqlog.wrapper.fan_out import fan_out_plan

    call = SearchCall(
        "opensearch",
        (),
        {"index": "i", "body": {"query": {"match_all": {}}, "from": start, "size": size}},
    )
    plan = fan_out_plan("opensearch", call, [{"term": {"body": f"s{k}"}} for k in range(3)])
    request = next(plan)
    assert isinstance(request, ClientSearch) and request.method == "msearch"
    bodies = request.kwargs["body"][1::2]
    assert [b["size"] for b in bodies] == [start + size] * 3
    assert all(b["from"] == 0 for b in bodies)
    # the shards answer, all of shard 0 scoring above shard 1 above shard 2 (no interleaving)
    window = start + size
    answers = [
        answer(k, [100.0 - 10 * k - j / 100 for j in range(window)], window) for k in range(3)
    ]
    try:
        plan.send({"responses": answers, "took": 1})
    except StopIteration as done:
        merged = done.value.response
    else:
        raise AssertionError("the plan asked for more than one request")
    expected = [f"0-{j}" for j in range(window)] + [f"1-{j}" for j in range(window)]
    assert [h["_id"] for h in merged["hits"]["hits"]] == expected[start : start + size]


@pytest.mark.parametrize(
    ("track", "summed", "expected"),
    [
        (500, 500, {"value": 500, "relation": "eq"}),  # exactly the cap: still exact
        (500, 501, {"value": 500, "relation": "gte"}),
        (None, 10_000, {"value": 10_000, "relation": "eq"}),
        (None, 10_001, {"value": 10_000, "relation": "gte"}),
    ],
)
def test_a_total_equal_to_the_cap_stays_exact(
    track: Any, summed: int, expected: dict[str, Any]
) -> None:
    """The engines cap a total only when it is above track_total_hits (value > up_to)."""
    shards = [answer(0, [1.0], summed - 1), answer(1, [1.0], 1)]
    merged = merge_responses(shards, 1, 0, 10, track)
    assert merged is not None and merged["hits"]["total"] == expected


@pytest.mark.parametrize(
    ("flags", "expected"),
    [((False, False, False), False), ((False, True, False), True), ((True, True, True), True)],
)
def test_the_merged_search_timed_out_when_any_shard_did(
    flags: tuple[bool, ...], expected: bool
) -> None:
    """One shard that timed out returned partial hits: the whole answer is partial."""
    shards = [answer(k, [1.0], 1) for k in range(3)]
    for shard, flag in zip(shards, flags, strict=True):
        shard["timed_out"] = flag
    merged = merge_responses(shards, 1, 0, 10, True)
    assert merged is not None and merged["timed_out"] is expected


@pytest.mark.parametrize(
    ("extra", "plain"),
    [
        ({"from": -1}, False),
        ({"size": -1}, False),
        ({"from": True}, False),
        ({"size": 2.0}, False),
        ({"track_total_hits": -1}, False),
        ({"track_total_hits": "100"}, False),
        ({"track_total_hits": 1.5}, False),
        ({"from": 0, "size": 0}, True),
        ({"track_total_hits": 100}, True),
        ({"track_total_hits": False}, True),
    ],
)
def test_paging_the_merge_would_answer_otherwise_does_not_fan_out(
    extra: dict[str, Any], plain: bool
) -> None:
    """The same answer for search and each msearch body: both ask fans_out alone."""
    body = {"query": {}, **extra}
    keywords = {("from_" if k == "from" else k): v for k, v in body.items()}  # as 8.x takes them
    assert fans_out(SearchCall("opensearch", (), {"index": "i", "body": body})) is plain
    assert fans_out(SearchCall("elasticsearch", (), {"index": "i", **keywords})) is plain


@pytest.mark.parametrize("text", ["true", "false", "TRUE"])
def test_track_total_hits_as_a_string_fans_out_as_the_boolean(text: str) -> None:
    """The merge caps hits.total by a boolean or a number: int("true") raised ValueError."""
    call = SearchCall(
        "opensearch", (), {"index": "i", "body": {"query": {}, "track_total_hits": text}}
    )
    assert fans_out(call)
    assert call.get("track_total_hits") is (text.lower() == "true")
