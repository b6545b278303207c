"""One request per shard, merged as a search response (esqlog.wrapper.fan_out): the I/O-free
parts. The engines' own answers are checked in tests/engine/test_wrapper_identifiers.py."""

from __future__ import annotations

from typing import Any

import pytest

from esqlog.engine.search_call import SearchCall
from esqlog.wrapper.fan_out import fans_out, merge_responses


def answer(shard: int, scores: list[float], total: int, relation: str = "eq",
           **extra: Any) -> dict[str, Any]:
    hits = [{"_index": "i", "_id": f"{shard}-{k}", "_score": s} for k, s in enumerate(scores)]
    return {"took": 3 + shard, "timed_out": False,
            "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0},
            "hits": {"total": {"value": total, "relation": relation},
                     "max_score": max(scores) if scores else None, "hits": hits}, **extra}


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


@pytest.mark.parametrize(("track", "expected"), [
    (None, {"value": 10_000, "relation": "gte"}), (True, {"value": 12_000, "relation": "eq"}),
    (500, {"value": 500, "relation": "gte"}), (20_000, {"value": 12_000, "relation": "eq"})])
def test_totals_are_summed_then_capped_as_track_total_hits_caps_them(
        track: Any, expected: dict[str, Any]) -> None:
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
    failing["_shards"] = {"total": 1, "successful": 0, "skipped": 0, "failed": 1,
                          "failures": [{"shard": 1, "reason": {"type": "x"}}]}
    merged = merge_responses([answer(0, [1.0], 1), failing], 1, 0, 10, True)
    assert merged is not None and merged["_shards"]["failed"] == 1
    assert merged["_shards"]["failures"] == [{"shard": 1, "reason": {"type": "x"}}]
    error = {"error": {"type": "search_phase_execution_exception"}, "status": 400}
    assert merge_responses([answer(0, [1.0], 1), error], 1, 0, 10, True) is None


@pytest.mark.parametrize(("flavor", "kwargs", "plain"), [
    ("opensearch", {"index": "i", "body": {"query": {}, "size": 5, "from": 5}}, True),
    ("opensearch", {"index": "i", "body": {"query": {}, "highlight": {"fields": {}}},
                    "params": {"request_timeout": 3}}, True),
    ("elasticsearch", {"index": "i", "query": {}, "size": 5, "from_": 5, "source": False},
     True),
    ("opensearch", {"index": "i", "body": {"query": {}, "aggs": {}}}, False),
    ("opensearch", {"index": "i", "body": {"query": {}, "sort": ["_doc"]}}, False),
    ("opensearch", {"index": "i", "body": {"query": {}, "search_after": [1]}}, False),
    ("opensearch", {"index": "i", "body": {"query": {}}, "params": {"routing": "a"}}, False),
    ("opensearch", {"index": "i", "body": {"query": {}}, "params": {"scroll": "1m"}}, False),
    ("elasticsearch", {"index": "i", "query": {}, "aggregations": {}}, False),
    ("elasticsearch", {"index": "i", "query": {}, "filter_path": "hits"}, False),
    ("elasticsearch", {"index": "i", "query": {}, "collapse": {"field": "x"}}, False),
    ("opensearch", {"index": "i", "body": {"query": {}, "size": "5"}}, False),
])
def test_only_plain_searches_fan_out(flavor: str, kwargs: dict[str, Any], plain: bool) -> None:
    assert fans_out(SearchCall(flavor, (), kwargs)) is plain
