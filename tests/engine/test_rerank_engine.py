"""rerank as the engine's rescore phase, and the client-side rerank's response fidelity.

``rerank_in="engine"`` sends the caller's query untouched plus a rescore (q-log BM25, query
weight 0) over each shard's top-N; a rescore the caller asked for must still run, after
esqlog's, on the q-log scores. ``collapse`` cannot be combined with a rescore, so collapsed
searches take the client path. ``rerank_in="client"`` names every term clause to read each
term's score back: the caller must get the native response's ``matched_queries`` back, in the
form asked for, and never one of esqlog's names.
"""

from __future__ import annotations

import copy
import json
import math
from typing import Any

import pytest

from esqlog.rerank import NAME_PREFIX
from esqlog.wrapper import RerankWhere, wrap
from tests.support.engines import call
from tests.support.oracle import (
    SHARDS,
    Corpus,
    Recorder,
    assert_same_ranking,
    body_of,
    hits_of,
    load_query_texts,
    qlog_match_scores,
    rel_close,
)

DFS = "dfs_query_then_fetch"
Q_LOW = 0.6
RERANK_IN = pytest.mark.parametrize("rerank_in", ["engine", "client"])


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return load_query_texts()[:60]


@pytest.fixture(scope="module")
def shard_of(corpus: Corpus) -> dict[str, int]:
    """The shard that holds each live document (asked shard by shard)."""
    out: dict[str, int] = {}
    for shard in range(SHARDS):
        found = call(
            corpus.engine,
            "POST",
            f"/{corpus.index}/_search",
            {"query": {"match_all": {}}, "size": 5000, "_source": False},
            preference=f"_shards:{shard}",
        )
        out.update({h["_id"]: shard for h in found["hits"]["hits"]})
    assert len(out) == len(corpus.docs)
    return out


def native(corpus: Corpus, body: dict[str, Any], **params: Any) -> dict[str, Any]:
    return body_of(
        corpus.engine.client.search(
            index=corpus.index, body=copy.deepcopy(body), search_type=DFS, **params
        )
    )


# --- the caller's own rescore ---------------------------------------------------------------


def _factor(seq: int) -> float:
    return math.log(2 + seq)  # field_value_factor modifier ln2p


def _their_rescore(window: int) -> dict[str, Any]:
    return {
        "window_size": window,
        "query": {
            "rescore_query": {
                "function_score": {"field_value_factor": {"field": "seq", "modifier": "ln2p"}}
            },
            "query_weight": 1.0,
            "rescore_query_weight": 1.0,
            "score_mode": "multiply",
        },
    }


def test_callers_rescore_runs_after_esqlogs(
    corpus: Corpus, texts: list[str], shard_of: dict[str, int]
) -> None:
    """esqlog's rescorer runs first (window top_n covers every match here, so every match
    gets its q-log score); the caller's rescorer then multiplies the top ``window`` q-log
    scores of each shard by ln(2 + seq), as the engine does for a chain of rescorers."""
    client = wrap(corpus.engine.client, corpus.cals(Q_LOW), mode="rerank", top_n=3000)
    window, size, checked = 5, 10, 0
    for i, text in enumerate(texts[:10]):
        oracle = qlog_match_scores(corpus, "body", text, Q_LOW)
        by_shard: dict[int, list[tuple[str, float]]] = {}
        for doc_id, score in oracle.items():
            by_shard.setdefault(shard_of[doc_id], []).append((doc_id, score))
        final: dict[str, float] = {}
        ambiguous = False
        for ranked in by_shard.values():
            ranked.sort(key=lambda pair: -pair[1])
            if len(ranked) > window:  # a tie across the window edge: either may be rescored
                ambiguous |= rel_close(ranked[window - 1][1], ranked[window][1], 1e-5)
            for rank, (doc_id, score) in enumerate(ranked):
                seq = corpus.docs[doc_id]["seq"]
                final[doc_id] = score * _factor(seq) if rank < window else score
        if ambiguous or not oracle:
            continue
        theirs: Any = _their_rescore(window) if i % 2 else [_their_rescore(window)]
        body = {"query": {"match": {"body": text}}, "size": size, "rescore": theirs}
        original = copy.deepcopy(body)
        with Recorder(corpus.engine.client) as rec:
            got = client.search(index=corpus.index, body=body)
        assert body == original  # the caller's body is not touched
        (sent,) = rec.calls
        ours, *rest = sent["body"]["rescore"]
        assert rest == [_their_rescore(window)]
        assert ours["query"]["query_weight"] == 0.0 and ours["window_size"] == 3000
        assert sent["body"]["query"] == body["query"]
        expected = sorted(final.items(), key=lambda pair: -pair[1])[:size]
        assert_same_ranking(expected, hits_of(got), 1e-4, text)
        assert any(not rel_close(s, oracle[d], 1e-3) for d, s in hits_of(got))  # multiplied
        checked += 1
    assert checked >= 7


@RERANK_IN
def test_collapse_reranks_on_the_client(
    corpus: Corpus, texts: list[str], rerank_in: RerankWhere
) -> None:
    """collapse and rescore do not mix in the engines, so a collapsed rerank fetches the
    native collapsed top-N (the best document of each package) and reorders it by q-log
    BM25: one hit per package, each with its own q-log score and collapse fields."""
    top_n, size = 40, 10
    client = wrap(
        corpus.engine.client, corpus.cals(Q_LOW), mode="rerank", top_n=top_n, rerank_in=rerank_in
    )
    checked = 0
    for text in texts[10:20]:
        body = {"query": {"match": {"body": text}}, "size": size, "collapse": {"field": "pkg"}}
        with Recorder(corpus.engine.client) as rec:
            got = body_of(client.search(index=corpus.index, body=copy.deepcopy(body)))
        assert all("rescore" not in c["body"] for c in rec.calls)
        assert rec.calls[-1]["body"]["collapse"] == {"field": "pkg"}
        candidates = native(corpus, {**body, "size": top_n})["hits"]["hits"]
        if not candidates:
            continue
        oracle = qlog_match_scores(corpus, "body", text, Q_LOW)
        expected = sorted(
            ((h["_id"], oracle[h["_id"]]) for h in candidates), key=lambda pair: -pair[1]
        )[:size]
        assert_same_ranking(expected, hits_of(got), 1e-4, text)
        pkgs = [h["fields"]["pkg"] for h in got["hits"]["hits"]]
        assert len({p[0] for p in pkgs}) == len(pkgs)
        assert all(
            p == [corpus.docs[h["_id"]]["pkg"]]
            for p, h in zip(pkgs, got["hits"]["hits"], strict=True)
        )
        checked += 1
    assert checked >= 8


# --- the caller's query names ------------------------------------------------------------------


def _named_queries(texts: list[str], pkg: str) -> list[dict[str, Any]]:
    one_word = next(w for t in texts for w in t.split() if w.isalpha() and len(w) > 5)
    return [
        {
            "bool": {
                "should": [
                    {"match": {"body": {"query": texts[20], "_name": "mine"}}},
                    {"term": {"pkg": {"value": pkg, "_name": "pkg"}}},
                ]
            }
        },
        {"match": {"body": {"query": one_word, "_name": "solo"}}},  # a lone term clause
        {"multi_match": {"query": texts[21], "fields": ["body", "title^2"], "_name": "mm"}},
        {
            "bool": {
                "must": [{"match": {"body": {"query": texts[22], "_name": "a"}}}],
                "should": [{"match": {"title": {"query": texts[22], "_name": "b"}}}],
            }
        },
        {"match": {"body": texts[23]}},  # no name of the caller's: no matched_queries
    ]


@RERANK_IN
@pytest.mark.parametrize("with_scores", [False, True])
def test_matched_queries_are_the_native_ones(
    corpus: Corpus, texts: list[str], rerank_in: RerankWhere, with_scores: bool
) -> None:
    """The client rerank sends its own names on every term clause and asks for named scores;
    the hits must come back with exactly the caller's names, as a list unless the caller
    asked for include_named_queries_score (then with the same scores as natively)."""
    pkg = corpus.docs[next(iter(corpus.docs))]["pkg"]
    client = wrap(
        corpus.engine.client, corpus.cals(1.0), mode="rerank", top_n=50, rerank_in=rerank_in
    )
    params = {"include_named_queries_score": True} if with_scores else {}
    named_hits = 0
    for query in _named_queries(texts, pkg):
        body = {"query": query, "size": 20}
        got = body_of(client.search(index=corpus.index, body=copy.deepcopy(body), **params))
        assert NAME_PREFIX not in json.dumps(got)
        expected = native(corpus, {**body, "size": 50}, **params)
        want = {h["_id"]: h for h in expected["hits"]["hits"]}
        # q = 1: the native order and scores, so every hit is among the native top 50
        assert_same_ranking(hits_of(expected)[:20], hits_of(got), 1e-4, query)
        for hit in got["hits"]["hits"]:
            mine = hit.get("matched_queries")
            theirs = want[hit["_id"]].get("matched_queries")
            if with_scores and theirs is not None:
                assert isinstance(mine, dict) and mine.keys() == theirs.keys(), (hit, theirs)
                for name, score in theirs.items():
                    assert rel_close(mine[name], score, 1e-4), (name, mine, theirs)
            else:
                assert mine == theirs, (query, mine, theirs)
                assert theirs is None or isinstance(theirs, list)
            named_hits += theirs is not None
        if "_name" not in json.dumps(query):
            assert all("matched_queries" not in h for h in got["hits"]["hits"])
    assert named_hits >= 60
