"""Reading ``GET /_esqlog/terms/stats`` (esqlog.engine.plugin_stats) and the report of
``esqlog plugin stats``: I/O-free, on answers of the shape the plugin writes (the engine tests
check the real nodes' answers: tests/engine/test_cluster_plugin_stats.py)."""

from __future__ import annotations

from typing import Any

import pytest

from esqlog.cli.plugin_cmd import cache_line, stats_lines
from esqlog.engine.plugin_stats import NodeCaches, cache_stats_plan, stats_of
from esqlog.engine.steps import drive
from esqlog.errors import ClusterError


def _node(name: str, hits: int, misses: int, evictions: int = 0) -> dict[str, Any]:
    caches = {
        "size_in_bytes": 2_000_000,
        "limit_in_bytes": 8_000_000,
        "entries": 1_500,
        "hits": hits,
        "misses": misses,
        "evictions": evictions,
    }
    return {"name": name, "term_state_cache": dict(caches), "word_lists": dict(caches)}


def _answer(**nodes: dict[str, Any]) -> dict[str, Any]:
    return {
        "_nodes": {
            "total": 3,
            "successful": 2,
            "failed": 1,
            "failures": [{"node_id": "c3id", "reason": "no handler for action"}],
        },
        "cluster_name": "c",
        "term_state_cache": {},
        "word_lists": {},
        "nodes": nodes,
    }


def test_each_node_is_read_with_its_counters_and_the_failures() -> None:
    found = stats_of(_answer(bid=_node("c2", 10, 0), aid=_node("c1", 90, 10)))
    assert found.per_node
    assert [(n.node_id, n.name) for n in found.nodes] == [("aid", "c1"), ("bid", "c2")]
    assert found.nodes[0].counter("term_state_cache", "hits") == 90
    assert found.nodes[0].counter("word_lists", "no_such_counter") == 0
    assert found.failures == (("c3id", "no handler for action"),)


def test_an_answer_before_1_10_is_the_receiving_node_alone() -> None:
    body = {"term_state_cache": {"hits": 3, "misses": 1}, "word_lists": {"hits": 0}}
    found = stats_of(body)
    assert not found.per_node
    assert [n.counter("term_state_cache", "hits") for n in found.nodes] == [3]
    assert "before 1.10.0" in stats_lines(found)[0]


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ([], "not an object"),
        ({"nodes": []}, "nodes is not an object"),
        ({"nodes": {"x": 1}}, "nodes.x is not an object"),
        ({"nodes": {"x": {"term_state_cache": {"hits": "3"}}}}, "nodes.x.term_state_cache.hits"),
        ({"nodes": {"x": {"word_lists": {"hits": True}}}}, "nodes.x.word_lists.hits"),
    ],
)
def test_a_malformed_answer_is_named(body: Any, named: str) -> None:
    with pytest.raises(ValueError, match=named.replace(".", r"\.")):
        stats_of(body)


def test_the_line_gives_the_share_the_hit_rate_and_the_evictions() -> None:
    node = NodeCaches("id", "c1", {"term_state_cache": _node("c1", 90, 10, 4)["term_state_cache"]})
    line = cache_line(node, "term_state_cache")
    assert line == (
        "term states: 2.0 MB of 8.0 MB (25%), 1,500 entries, 90.0% hits of 100 lookups, 4 evictions"
    )
    empty = NodeCaches("id", "c1", {})
    assert "no lookup" in cache_line(empty, "word_lists")
    assert "(" not in cache_line(empty, "word_lists").split(",")[0]  # no share of a 0 limit


def test_the_report_names_each_node_once_and_the_setting_of_a_cache_that_evicts() -> None:
    lines = stats_lines(stats_of(_answer(a=_node("c1", 9, 1, evictions=2), b=_node("c2", 5, 5))))
    assert [line.split()[0] for line in lines[:4:2]] == ["c1", "c2"]
    assert lines[1].startswith("   ") and "word lists:" in lines[1]
    assert "node c3id did not answer: no handler for action" in lines
    evicting = [line for line in lines if "evicted" in line]
    assert evicting == [
        "c1's term states cache has evicted 2 entries since the node started; if that keeps "
        "growing, raise esqlog.terms.postings_cache_size on that node (docs/plugin.md)",
        "c1's word lists cache has evicted 2 entries since the node started; if that keeps "
        "growing, raise esqlog.terms.word_lists_cache_size on that node (docs/plugin.md)",
    ]


class _Refused(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(f"HTTP {status}")
        self.status_code = status


@pytest.mark.parametrize("status", [400, 404, 405])
def test_a_cluster_without_the_plugin_is_one_clear_error(status: int) -> None:
    def perform(_: Any) -> Any:
        raise _Refused(status)

    with pytest.raises(ClusterError) as raised:
        drive(cache_stats_plan(), perform)
    assert f"HTTP {status}" in raised.value.problem
    assert raised.value.fix is not None and "esqlog-terms" in raised.value.fix


def test_another_failure_is_not_taken_for_a_missing_plugin() -> None:
    def perform(_: Any) -> Any:
        raise _Refused(500)

    with pytest.raises(_Refused):
        drive(cache_stats_plan(), perform)


def test_an_unreadable_answer_is_a_cluster_error() -> None:
    with pytest.raises(ClusterError, match="cannot read"):
        drive(cache_stats_plan(), lambda _: {"nodes": []})


def test_the_whole_word_cache_is_reported_where_a_node_has_it() -> None:
    """esqlog-terms 1.11.0 adds word_postings (select "all"); a node of an older release
    reports no such section, and its lines leave it out rather than print zeros."""
    new = _node("c1", 90, 10)
    new["word_postings"] = {**new["word_lists"], "refused": 4, "evictions": 2}
    found = stats_of(_answer(aid=new, bid=_node("c2", 10, 0)))
    assert found.nodes[0].counter("word_postings", "refused") == 4
    lines = stats_lines(found)
    whole = [line for line in lines if "whole words:" in line]
    assert len(whole) == 1 and "4 not kept" in whole[0]
    assert any("esqlog.terms.word_postings_cache_size" in line for line in lines)
    assert "word_postings" not in found.nodes[1].sections
