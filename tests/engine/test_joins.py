"""Identifier joins: "read file" must reach a document whose only match is ``read_file``."""

from __future__ import annotations

import pytest

from esqlog.calibration.calibrate import calibrate
from esqlog.engine.client import Engine
from esqlog.wrapper import wrap
from tests.support.code_snippets import SNIPPETS
from tests.support.engines import bulk_index, call


@pytest.mark.engine
@pytest.mark.parametrize("mode", ["boost", "rerank-engine", "rerank-client"])
def test_read_file_reaches_read_file_only_document(
    engine: Engine, fresh_index: str, mode: str
) -> None:
    docs = [{"id": i, "body": s} for i, s in enumerate(SNIPPETS)]
    docs.append({"id": "only", "body": "def helper(): return read_file(path)"})
    bulk_index(engine, fresh_index, docs)
    cal = calibrate(engine, fresh_index, "body")
    body = {"query": {"match": {"body": {"query": "read file", "operator": "or"}}}, "size": 50}
    plain = wrap(engine.client, cal, mode="boost")
    joined = wrap(engine.client, cal, mode="boost", joins=True)
    ids_plain = {h["_id"] for h in plain.search(index=fresh_index, body=body)["hits"]["hits"]}
    response = joined.search(index=fresh_index, body=body)
    ids_joined = [h["_id"] for h in response["hits"]["hits"]]
    assert "only" not in ids_plain  # its only token is read_file: no plain term matches
    assert "only" in ids_joined
    if mode.startswith("rerank"):  # rerank cannot add documents, but must score joins it finds
        reranked = wrap(
            engine.client,
            cal,
            mode="rerank",
            joins=True,
            rerank_in="engine" if mode == "rerank-engine" else "client",
        )
        got = reranked.search(index=fresh_index, body=body)["hits"]["hits"]
        assert {h["_id"] for h in got} == ids_plain
        # every document is inside the window: the rerank scores are the boost mode's
        joined_scores = {h["_id"]: h["_score"] for h in response["hits"]["hits"]}
        for hit in got:
            assert hit["_score"] == pytest.approx(joined_scores[hit["_id"]], rel=1e-4), hit
        assert [h["_score"] for h in got] == sorted((h["_score"] for h in got), reverse=True)
    # with operator=and the joins only add score: the matching set stays the native one
    strict = {"query": {"match": {"body": {"query": "read file", "operator": "and"}}}, "size": 50}
    native_and = {
        h["_id"]
        for h in call(
            engine, "POST", f"/{fresh_index}/_search", strict, search_type="dfs_query_then_fetch"
        )["hits"]["hits"]
    }
    joined_and = {h["_id"] for h in joined.search(index=fresh_index, body=strict)["hits"]["hits"]}
    assert joined_and == native_and
