"""Real round trips on both engines: the foundation every other engine test builds on."""

from __future__ import annotations

from typing import Any

import pytest

from esqlog.engine.client import Engine
from tests.support.code_snippets import SNIPPETS
from tests.support.engines import bulk_index, call
from tests.support.lucene_bm25 import bm25_term


def _explain_values(node: dict[str, Any], out: dict[str, float]) -> None:
    desc = node.get("description", "")
    keys = ("n, number of documents containing term", "N, total number of documents with field")
    for key in keys:
        if desc.startswith(key):
            out[key[0]] = float(node["value"])
    if desc.startswith("idf,"):
        out["idf"] = float(node["value"])
    for child in node.get("details", []):
        _explain_values(child, out)


def test_engine_identity(engine: Engine) -> None:
    assert engine.flavor in ("opensearch", "elasticsearch")
    assert engine.version[0] >= 3 if engine.flavor == "opensearch" else engine.version[0] >= 8


def test_standard_analyzer_keeps_identifiers_whole(engine: Engine, fresh_index: str) -> None:
    tokens = call(
        engine,
        "POST",
        f"/{fresh_index}/_analyze",
        {"field": "body", "text": "handleWebSocketUpgrade read_file"},
    )["tokens"]
    assert [t["token"] for t in tokens] == ["handlewebsocketupgrade", "read_file"]


def test_match_explain_equals_lucene_bm25_under_dfs(engine: Engine, fresh_index: str) -> None:
    docs = [{"id": i, "body": text} for i, text in enumerate(SNIPPETS)]
    bulk_index(engine, fresh_index, docs)
    shards = call(engine, "GET", f"/{fresh_index}/_search_shards")["shards"]
    assert len(shards) == 3
    N = len(docs)
    # Tokens from the engine's own analyzer: this test checks the scoring, not tokenization.
    token_lists = {
        str(d["id"]): [
            t["token"]
            for t in call(
                engine, "POST", f"/{fresh_index}/_analyze", {"field": "body", "text": d["body"]}
            )["tokens"]
        ]
        for d in docs
    }
    avgdl = sum(len(t) for t in token_lists.values()) / N
    checked = 0
    for query in ("read file", "reader", "error string name", "marshal data"):
        terms = query.split()
        result = call(
            engine,
            "POST",
            f"/{fresh_index}/_search",
            {"query": {"match": {"body": query}}, "explain": True, "size": 20},
            search_type="dfs_query_then_fetch",
        )
        for hit in result["hits"]["hits"]:
            tokens = token_lists[hit["_id"]]
            expected = 0.0
            for term in terms:
                tf = tokens.count(term)
                if not tf:
                    continue
                n = sum(1 for toks in token_lists.values() if term in toks)
                # Elasticsearch keeps BM25's (k1 + 1) numerator; OpenSearch 3 drops it.
                expected += bm25_term(
                    tf, len(tokens), avgdl, n, N, k1_plus_one=engine.flavor == "elasticsearch"
                )
            assert hit["_score"] == pytest.approx(expected, rel=1e-5), (query, hit["_id"])
            values: dict[str, float] = {}
            _explain_values(hit["_explanation"], values)
            assert values["N"] == N
            checked += 1
    assert checked >= 8
