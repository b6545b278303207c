"""Term statistics from the cluster equal what Lucene scores with under dfs_query_then_fetch."""

from __future__ import annotations

from typing import Any

import pytest

from esqlog.engine.client import Engine
from esqlog.errors import UsageError
from esqlog.statistics.terms import (
    field_info_plan,
    field_stats_plan,
    resolve_index_plan,
    shard_routings_plan,
    term_stats_plan,
    text_stats_plan,
)
from tests.support.code_snippets import SNIPPETS
from tests.support.engines import bulk_index, call, create_index
from tests.support.explain import explain_n_N as _explain_n_N

DELETED = ("0", "7", "13")


@pytest.fixture
def code_index(engine: Engine, fresh_index: str) -> str:
    """20 snippets x 3 copies on 3 shards, 3 documents deleted but not merged away."""
    docs = [
        {"id": f"{c}{i}" if c else str(i), "body": s}
        for c in ("", "b", "c")
        for i, s in enumerate(SNIPPETS)
    ]
    bulk_index(engine, fresh_index, docs)
    for doc_id in DELETED:
        call(engine, "DELETE", f"/{fresh_index}/_doc/{doc_id}")
    call(engine, "POST", f"/{fresh_index}/_refresh")
    return fresh_index


def test_stats_equal_dfs_explain_with_deletions(engine: Engine, code_index: str) -> None:
    info = engine.run(resolve_index_plan(code_index))
    assert info.shards == 3
    routings = engine.run(shard_routings_plan(code_index, info.shards))
    assert len(set(routings)) == 3
    fstats = engine.run(field_stats_plan(code_index, "body", routings))
    live = call(engine, "GET", f"/{code_index}/_count")["count"]
    assert live == 60 - len(DELETED)
    assert fstats.doc_count == 60  # deleted-but-unmerged documents still count, as in Lucene

    for term in ("read", "name", "func", "reader", "readfile", "def", "string", "error"):
        _, df = engine.run(term_stats_plan(code_index, "body", [term], routings))
        result = call(
            engine,
            "POST",
            f"/{code_index}/_search",
            {"query": {"term": {"body": term}}, "explain": True, "size": 1},
            search_type="dfs_query_then_fetch",
        )
        hits = result["hits"]["hits"]
        assert hits, term
        n_N = _explain_n_N(hits[0]["_explanation"])
        assert n_N == (df[term], fstats.doc_count), term


def test_avgdl_matches_explain(engine: Engine, code_index: str) -> None:
    routings = engine.run(shard_routings_plan(code_index, 3))
    fstats = engine.run(field_stats_plan(code_index, "body", routings))
    result = call(
        engine,
        "POST",
        f"/{code_index}/_search",
        {"query": {"match": {"body": "reader"}}, "explain": True, "size": 1},
        search_type="dfs_query_then_fetch",
    )

    def find(node: dict[str, Any]) -> float | None:
        if node.get("description", "").startswith("avgdl"):
            return float(node["value"])
        for child in node.get("details", []):
            got = find(child)
            if got is not None:
                return got
        return None

    assert find(result["hits"]["hits"][0]["_explanation"]) == pytest.approx(fstats.avgdl, rel=1e-6)


def test_text_stats_analyze_like_the_field(engine: Engine, code_index: str) -> None:
    routings = engine.run(shard_routings_plan(code_index, 3))
    text = "ReadFile reads the FILE, read_file!"
    stats = engine.run(text_stats_plan(code_index, "body", text, routings))
    analyzed = call(engine, "POST", f"/{code_index}/_analyze", {"field": "body", "text": text})
    assert list(stats.terms) == [t["token"] for t in analyzed["tokens"]]
    assert list(stats.positions) == sorted(stats.positions)
    _, df = engine.run(term_stats_plan(code_index, "body", stats.terms, routings))
    assert dict(stats.df) == df
    assert df["readfile"] == 3  # one copy is deleted and still counts
    assert df["reads"] == 0


def test_absent_terms_have_zero_df(engine: Engine, code_index: str) -> None:
    routings = engine.run(shard_routings_plan(code_index, 3))
    _, df = engine.run(term_stats_plan(code_index, "body", ["zzznotthere", "func"], routings))
    assert df["zzznotthere"] == 0 and df["func"] >= 3


def test_single_shard_index(engine: Engine) -> None:
    name = create_index(engine, shards=1)
    try:
        bulk_index(engine, name, [{"id": i, "body": s} for i, s in enumerate(SNIPPETS)])
        routings = engine.run(shard_routings_plan(name, 1))
        fstats = engine.run(field_stats_plan(name, "body", routings))
        assert fstats.doc_count == len(SNIPPETS)
    finally:
        call(engine, "DELETE", f"/{name}")


def test_field_checks(engine: Engine) -> None:
    name = create_index(
        engine,
        shards=1,
        mappings={
            "properties": {
                "body": {"type": "text"},
                "tag": {"type": "keyword"},
                "size": {"type": "long"},
            }
        },
    )
    try:
        info = engine.run(field_info_plan(name, "body"))
        assert info.type == "text" and not info.splits_identifiers
        for bad, why in (("tag", "keyword"), ("size", "long"), ("nope", "no field")):
            with pytest.raises(UsageError, match=why):
                engine.run(field_info_plan(name, bad))
    finally:
        call(engine, "DELETE", f"/{name}")


def test_identifier_splitting_analyzer_is_recognised(opensearch: Engine) -> None:
    name = create_index(
        opensearch,
        shards=1,
        settings={
            "analysis": {
                "filter": {"ids": {"type": "word_delimiter_graph", "split_on_case_change": True}},
                "analyzer": {
                    "code": {
                        "type": "custom",
                        "tokenizer": "whitespace",
                        "filter": ["ids", "lowercase"],
                    }
                },
            }
        },
        mappings={"properties": {"body": {"type": "text", "analyzer": "code"}}},
    )
    try:
        info = opensearch.run(field_info_plan(name, "body"))
        assert info.analyzer == "code" and info.splits_identifiers
    finally:
        call(opensearch, "DELETE", f"/{name}")


def test_wildcard_matching_several_indices_is_refused(engine: Engine) -> None:
    a, b = create_index(engine, shards=1), create_index(engine, shards=1)
    try:
        with pytest.raises(UsageError, match=r"matches \d+ indices"):
            engine.run(resolve_index_plan("esqlog-test-*"))
        with pytest.raises(UsageError, match="no index"):
            engine.run(resolve_index_plan("esqlog-no-such-index"))
    finally:
        call(engine, "DELETE", f"/{a}")
        call(engine, "DELETE", f"/{b}")
