"""Boost mode on several shards without dfs, on both engines: one request per shard
(esqlog.wrapper.boost_fan_out) and one request with boosts weighted by the shards' own
statistics (the default, esqlog.wrapper.shard_stats).

What must hold: the match set is the native match's (ids and hits.total), and every score
is the oracle's, computed here by the Lucene-exact BM25 from the documents' term vectors
(not from esqlog's statistics). Per shard: the global q-log BM25 weight times each shard's
own tf-norm (idf_q from the global df and N, the length norm from the shard's own average
length). Weighted: that, times the shard's idf of the term over its shards' idfs averaged
by their df of it. On one shard nothing fans out or is weighted and the first oracle holds
with the index's average.
"""

from __future__ import annotations

import asyncio
import math
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from esqlog.calibration.files import load_calibration
from esqlog.engine.client import Engine, bm25_scale
from esqlog.identifiers.calibrate import calibrate_identifiers, save_identifier_calibration
from esqlog.wrapper import wrap
from esqlog.wrapper.decisions import SearchDecision
from tests.support.engines import ENGINE_URLS, bulk_index, call, create_index
from tests.support.lucene_bm25 import bm25_term
from tests.support.oracle import body_of, hits_of, load_docs, load_query_texts
from tests.support.split_bm25 import engine_vectors

N_DOCS = 1000


@dataclass
class Fixture:
    engine: Engine
    index: str
    shards: int
    path: Path
    q: float
    vectors: dict[str, dict[str, int]]  # doc -> term -> tf, from the engine's term vectors
    shard_of: dict[str, int]
    scale: float

    def avgdl(self, shard: int) -> float:
        """The shard's own average field length (the whole index's on one shard)."""
        lengths = [sum(tf.values()) for d, tf in self.vectors.items() if self.shard_of[d] == shard]
        return sum(lengths) / len(lengths)

    def tokens(self, text: str) -> list[str]:
        return [
            t["token"]
            for t in call(
                self.engine, "POST", f"/{self.index}/_analyze", {"field": "body", "text": text}
            )["tokens"]
        ]

    def score(self, doc: str, text: str) -> float:
        """Global q-log idf x the shard's tf-norm, summed over the query's tokens."""
        df = Counter(t for tf in self.vectors.values() for t in tf)
        tf = self.vectors[doc]
        avgdl = self.avgdl(self.shard_of[doc])
        return self.scale * sum(
            bm25_term(tf[t], sum(tf.values()), avgdl, df[t], len(self.vectors), self.q)
            for t in self.tokens(text)
            if t in tf
        )

    def weighted_score(self, doc: str, text: str) -> float:
        """:meth:`score` with each term's idf on the document's shard over its shards' idfs
        averaged by df (the shards' documents and df counted from the term vectors)."""
        shards = range(self.shards)
        docs = [sum(self.shard_of[d] == k for d in self.vectors) for k in shards]
        tf = self.vectors[doc]
        avgdl = self.avgdl(self.shard_of[doc])
        total = 0.0
        for t in self.tokens(text):
            if t not in tf:
                continue
            held = [
                sum(t in v for d, v in self.vectors.items() if self.shard_of[d] == k)
                for k in shards
            ]
            df = sum(held)
            if sum(h > 0 for h in held) == 1:  # on one shard: which one is not recorded
                seen = sum(_idf(df, n) for n in docs) / self.shards
            else:
                seen = sum(h * _idf(h, n) for h, n in zip(held, docs, strict=True)) / df
            mine = self.shard_of[doc]
            total += (
                bm25_term(tf[t], sum(tf.values()), avgdl, df, len(self.vectors), self.q)
                * _idf(held[mine], docs[mine])
                / seen
            )
        return self.scale * total


def _idf(n: int, big_n: int) -> float:
    return math.log1p((big_n - n + 0.5) / (n + 0.5))


@pytest.fixture(scope="module", params=[3, 1], ids=["3 shards", "1 shard"])
def indexed(
    engine: Engine, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Fixture]:
    shards = int(request.param)
    index = create_index(engine, shards=shards)
    try:
        docs = [{"id": d["id"], "body": d["body"]} for d in load_docs(N_DOCS)]
        bulk_index(engine, index, docs)
        found = calibrate_identifiers(engine, index, "body")
        path = tmp_path_factory.mktemp("boostshards") / "code.qlog.json"
        save_identifier_calibration(found, path)
        ids = [d["id"] for d in docs]
        vectors, shard_of = engine_vectors(engine, index, ids, shards)
        yield Fixture(
            engine,
            index,
            shards,
            path,
            load_calibration(path).q,
            vectors,
            shard_of,
            bm25_scale(engine.flavor, engine.version),
        )
    finally:
        call(engine, "DELETE", f"/{index}")


def _texts(count: int) -> list[str]:
    return [t for t in load_query_texts() if t.isascii()][:count]


def _body(query: dict[str, Any]) -> dict[str, Any]:
    return {"query": query, "size": N_DOCS, "track_total_hits": True, "_source": False}


QUERIES = [
    lambda text: {"match": {"body": text}},
    lambda text: {"match": {"body": {"query": text, "operator": "and"}}},
    lambda text: {"match": {"body": {"query": text, "minimum_should_match": "60%"}}},
    lambda text: {
        "bool": {"should": [{"match": {"body": text}}], "filter": [{"exists": {"field": "body"}}]}
    },
]


def _native_match_set_and_oracle(
    f: Fixture, client: Any, oracle: Callable[[str, str], float]
) -> int:
    """Every query shape's ids and hits.total equal to the native match's, every shard
    answering; the plain match's first 30 scores equal to ``oracle`` within 1e-4. Returns
    how many scores were checked."""
    checked = 0
    for text in _texts(20):
        for build in QUERIES:
            native = body_of(f.engine.client.search(index=f.index, body=_body(build(text))))
            got = body_of(client.search(index=f.index, body=_body(build(text))))
            assert got["hits"]["total"] == native["hits"]["total"], text
            assert {h["_id"] for h in got["hits"]["hits"]} == {
                h["_id"] for h in native["hits"]["hits"]
            }, text
            assert got["_shards"]["total"] == f.shards
            if build is QUERIES[0]:
                for hit in got["hits"]["hits"][:30]:
                    assert hit["_score"] == pytest.approx(oracle(hit["_id"], text), rel=1e-4), (
                        text,
                        hit["_id"],
                    )
                    checked += 1
    return checked


def test_the_match_set_is_the_native_one_and_scores_equal_the_oracle(indexed: Fixture) -> None:
    """ids and hits.total equal to the native match's; scores to the oracle's within 1e-4;
    on 3 shards every search went one request per shard, on one shard none did."""
    f = indexed
    decisions: list[SearchDecision] = []
    client = wrap(
        f.engine.client, f.path, mode="boost", boost_shards="fan_out", on_decision=decisions.append
    )
    checked = _native_match_set_and_oracle(f, client, f.score)
    assert checked > 200
    assert decisions and all(d.mode == "boost" for d in decisions)
    assert all(d.fan_out == (f.shards > 1) for d in decisions)


def test_the_dfs_way_scores_with_the_index_average(indexed: Fixture) -> None:
    """boost_shards="dfs" sends the one dfs search: same match set, and its scores use the
    whole index's average length (which the fan-out's do not)."""
    f = indexed
    decisions: list[SearchDecision] = []
    dfs = wrap(
        f.engine.client, f.path, mode="boost", boost_shards="dfs", on_decision=decisions.append
    )
    fanned = wrap(f.engine.client, f.path, mode="boost", boost_shards="fan_out")
    differ = 0
    for text in _texts(10):
        a = body_of(dfs.search(index=f.index, body=_body({"match": {"body": text}})))
        b = body_of(fanned.search(index=f.index, body=_body({"match": {"body": text}})))
        assert a["hits"]["total"] == b["hits"]["total"]
        scores = {h["_id"]: h["_score"] for h in b["hits"]["hits"]}
        assert set(scores) == {h["_id"] for h in a["hits"]["hits"]}
        differ += sum(
            h["_score"] != pytest.approx(scores[h["_id"]], rel=1e-6) for h in a["hits"]["hits"]
        )
    assert not any(d.fan_out or d.shard_weighted for d in decisions)
    assert (differ > 0) == (f.shards > 1)


def test_weighted_boosts_keep_the_match_set_and_score_as_their_oracle(indexed: Fixture) -> None:
    """The default: ids and hits.total of the native match for every query shape, one
    request without dfs on 3 shards (the decision says so), scores the weighted oracle's
    within 1e-4; on one shard the exact oracle's."""
    f = indexed
    decisions: list[SearchDecision] = []
    client = wrap(f.engine.client, f.path, mode="boost", on_decision=decisions.append)
    checked = _native_match_set_and_oracle(f, client, f.weighted_score if f.shards > 1 else f.score)
    assert checked > 200
    assert decisions and all(d.mode == "boost" and not d.fan_out for d in decisions)
    assert all(d.shard_weighted == (f.shards > 1) for d in decisions)


def test_weighted_msearch_bodies_score_as_their_searches(indexed: Fixture) -> None:
    """msearch bodies get the same weighted boosts as their own searches (no dfs)."""
    f = indexed
    client = wrap(f.engine.client, f.path, mode="boost")
    bodies = [_body({"match": {"body": t}}) for t in _texts(6)]
    answers = body_of(_msearch(client, f.engine.flavor, f.index, bodies))["responses"]
    for body, got in zip(bodies, answers, strict=True):
        alone = body_of(client.search(index=f.index, body=body))
        mine, theirs = hits_of(got)[:50], hits_of(alone)[:50]
        assert [i for i, _ in mine] == [i for i, _ in theirs]
        assert [s for _, s in mine] == pytest.approx([s for _, s in theirs], rel=1e-6)
        assert got["hits"]["total"] == alone["hits"]["total"]


def _msearch(client: Any, flavor: str, index: str, bodies: list[dict[str, Any]]) -> Any:
    lines = [x for b in bodies for x in ({"index": index}, b)]
    key = "searches" if flavor == "elasticsearch" else "body"
    return client.msearch(**{key: lines})


def test_msearch_bodies_answer_as_their_searches(indexed: Fixture) -> None:
    """Each msearch body (beside one the fan-out cannot serve: a sort) answers with the
    ids, totals and scores its own search gives; the scores are the oracle's."""
    f = indexed
    client = wrap(f.engine.client, f.path, mode="boost", boost_shards="fan_out")
    texts = _texts(8)
    bodies = [_body({"match": {"body": t}}) for t in texts]
    bodies.append({**_body({"match": {"body": texts[0]}}), "sort": [{"_doc": "asc"}]})
    answers = body_of(_msearch(client, f.engine.flavor, f.index, bodies))["responses"]
    native = body_of(_msearch(f.engine.client, f.engine.flavor, f.index, bodies))["responses"]
    assert len(answers) == len(bodies)
    for body, got, plain in zip(bodies, answers, native, strict=True):
        assert got["hits"]["total"] == plain["hits"]["total"]
        assert {h["_id"] for h in got["hits"]["hits"]} == {h["_id"] for h in plain["hits"]["hits"]}
        if "sort" in body:
            continue
        alone = body_of(client.search(index=f.index, body=body))
        assert [h["_id"] for h in got["hits"]["hits"][:50]] == [
            h["_id"] for h in alone["hits"]["hits"][:50]
        ]
        text = body["query"]["match"]["body"]
        for hit in got["hits"]["hits"][:10]:
            assert hit["_score"] == pytest.approx(f.score(hit["_id"], text), rel=1e-4)


def test_aggregations_and_paging_keep_the_native_answer(indexed: Fixture) -> None:
    """A page (from/size) is the page of the full ranking, and an aggregation beside the
    fan-out counts the native match set."""
    f = indexed
    client = wrap(f.engine.client, f.path, mode="boost", boost_shards="fan_out")
    text = _texts(1)[0]
    full = body_of(client.search(index=f.index, body=_body({"match": {"body": text}})))
    page = body_of(
        client.search(
            index=f.index,
            body={"query": {"match": {"body": text}}, "from": 5, "size": 7, "_source": False},
        )
    )
    assert [h["_id"] for h in page["hits"]["hits"]] == [
        h["_id"] for h in full["hits"]["hits"][5:12]
    ]
    aggs = (
        {"n": {"value_count": {"field": "_id"}}}
        if f.engine.flavor == "opensearch"
        else {"n": {"filter": {"match_all": {}}}}
    )
    body = {"query": {"match": {"body": text}}, "size": 0, "aggs": aggs, "track_total_hits": True}
    got = body_of(client.search(index=f.index, body=body))
    native = body_of(f.engine.client.search(index=f.index, body=body))
    assert got["aggregations"] == native["aggregations"]
    assert got["hits"]["total"] == native["hits"]["total"]


def test_the_async_client_fans_out_alike(indexed: Fixture) -> None:
    """The async client gives the sync client's hits and scores."""
    pytest.importorskip("aiohttp")
    f = indexed
    texts = _texts(5)
    sync = wrap(f.engine.client, f.path, mode="boost", boost_shards="fan_out")
    expected = [
        hits_of(sync.search(index=f.index, body=_body({"match": {"body": t}}))) for t in texts
    ]
    if f.engine.flavor == "elasticsearch":
        from elasticsearch import AsyncElasticsearch

        raw: Any = AsyncElasticsearch(ENGINE_URLS["elasticsearch"], request_timeout=60)
    else:
        from opensearchpy import AsyncOpenSearch

        raw = AsyncOpenSearch(hosts=[ENGINE_URLS["opensearch"]], timeout=60)

    async def run() -> list[list[tuple[str, float]]]:
        client = wrap(raw, f.path, mode="boost", boost_shards="fan_out")
        try:
            return [
                hits_of(await client.search(index=f.index, body=_body({"match": {"body": t}})))
                for t in texts
            ]
        finally:
            await raw.close()

    got = asyncio.run(run())
    for mine, theirs in zip(got, expected, strict=True):
        assert [i for i, _ in mine] == [i for i, _ in theirs]
        assert [s for _, s in mine] == pytest.approx([s for _, s in theirs], rel=1e-6)


def test_joins_keep_the_dfs_match_set(indexed: Fixture) -> None:
    """With identifier joins the per-shard requests hold the dfs search's clauses: the
    same ids and hits.total (joins add documents to the native set, the same ones)."""
    f = indexed
    decisions: list[SearchDecision] = []
    fanned = wrap(
        f.engine.client,
        f.path,
        mode="boost",
        boost_shards="fan_out",
        joins=True,
        on_decision=decisions.append,
    )
    dfs = wrap(f.engine.client, f.path, mode="boost", boost_shards="dfs", joins=True)
    widened = 0
    for text in _texts(40):
        body = _body({"match": {"body": text}})
        a = body_of(dfs.search(index=f.index, body=body))
        b = body_of(fanned.search(index=f.index, body=body))
        assert a["hits"]["total"] == b["hits"]["total"], text
        assert {h["_id"] for h in a["hits"]["hits"]} == {h["_id"] for h in b["hits"]["hits"]}
        native = body_of(f.engine.client.search(index=f.index, body=body))
        widened += b["hits"]["total"]["value"] > native["hits"]["total"]["value"]
    assert widened > 0  # some query did get a join that matched more
    assert all(d.fan_out == (f.shards > 1) for d in decisions)
