"""Issue 13 items 2 and 5 on both real engines: request bodies beyond a top-level ``query``.

knn beside a query (Elasticsearch's hybrid search), ``retriever.standard``, ``boosting``,
point-in-time pagination and ``msearch`` (sync and async). Every rewritten path keeps the
native match set (ids and hits.total, asserted against the engine itself) and scores with
q-log weights and the index-wide statistics (asserted against the wrapped plain search,
which test_wrapper.py checks against the Lucene-exact oracle).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
from collections.abc import Iterator
from typing import Any

import pytest

from esqlog.calibration.calibrate import calibrate
from esqlog.calibration.cluster_store import install_script_plan
from esqlog.calibration.record import Calibration
from esqlog.engine.client import Engine
from esqlog.wrapper import wrap
from tests.support.engines import ENGINE_URLS, bulk_index, call, client_errors, create_index
from tests.support.oracle import body_of, hits_of, load_docs, rel_close, total_of

N_DOCS = 900
SHARDS = 3
DIMS = 4
TEXTS = ["read file", "error handling of the reader", "parse json buffer", "close"]


@dataclasses.dataclass
class Bodies:
    engine: Engine
    index: str
    other: str  # a second, uncalibrated index
    calibration: Calibration
    total_docs: int

    @property
    def es(self) -> bool:
        return self.engine.flavor == "elasticsearch"

    def wrapped(self, **options: Any) -> Any:
        return wrap(self.engine.client, [self.calibration], **options)


def _vector(rng: random.Random) -> list[float]:
    return [round(rng.uniform(0.05, 1.0), 4) for _ in range(DIMS)]


@pytest.fixture(scope="module")
def bodies(engine: Engine) -> Iterator[Bodies]:
    properties: dict[str, Any] = {"body": {"type": "text"}, "key": {"type": "keyword"}}
    if engine.flavor == "elasticsearch":  # OpenSearch's knn_vector needs the k-NN plugin
        properties["vec"] = {
            "type": "dense_vector",
            "dims": DIMS,
            "index": True,
            "similarity": "cosine",
        }
    index = create_index(engine, shards=SHARDS, mappings={"properties": properties})
    other = create_index(engine, shards=2)
    try:
        rng = random.Random(7)
        docs = [
            {
                "id": d["id"],
                "body": d["body"],
                "key": f"k{i:05d}",
                **({"vec": _vector(rng)} if "vec" in properties else {}),
            }
            for i, d in enumerate(load_docs(N_DOCS))
        ]
        bulk_index(engine, index, docs)
        bulk_index(engine, other, [{"id": d["id"], "body": d["body"]} for d in docs[:200]])
        cal = dataclasses.replace(calibrate(engine, index, "body", sample=300), q=0.5)
        yield Bodies(engine, index, other, cal, len(docs))
    finally:
        call(engine, "DELETE", f"/{index}")
        call(engine, "DELETE", f"/{other}")


def _all(b: Bodies, client: Any, body: dict[str, Any], **kw: Any) -> Any:
    full = {**body, "size": b.total_docs + 10, "_source": False, "track_total_hits": True}
    return client.search(index=b.index, body=full, **kw)


def _assert_same_set(native: Any, got: Any, context: Any) -> None:
    assert total_of(got) == total_of(native), context
    assert {i for i, _ in hits_of(got)} == {i for i, _ in hits_of(native)}, context


def _assert_scores(expected: dict[str, float], got: Any, context: Any) -> None:
    hits = hits_of(got)
    assert hits, context
    for doc, score in hits:
        assert rel_close(score, expected[doc], 1e-4), (context, doc, score, expected[doc])


def _differs(native: Any, got: Any) -> bool:
    """Some document scores differently: the wrapper's rewrite reached the engine."""
    old = dict(hits_of(native))
    return any(not rel_close(score, old[doc], 1e-3) for doc, score in hits_of(got))


# --- boosting ---------------------------------------------------------------------------------


def test_boosting_rewrites_positive_and_keeps_the_match_set(bodies: Bodies) -> None:
    wrapped = bodies.wrapped()
    for text in TEXTS:
        positive = {"match": {"body": text}}
        negative = {"match": {"body": "error"}}
        body = {
            "query": {
                "boosting": {"positive": positive, "negative": negative, "negative_boost": 0.25}
            }
        }
        native = _all(bodies, bodies.engine.client, body)
        got = _all(bodies, wrapped, body)
        _assert_same_set(native, got, text)
        assert _differs(native, got), text
        # score = q-log positive x (0.25 where negative matches)
        qlog = dict(hits_of(_all(bodies, wrapped, {"query": positive})))
        demoted = {i for i, _ in hits_of(_all(bodies, bodies.engine.client, {"query": negative}))}
        _assert_scores({d: s * (0.25 if d in demoted else 1.0) for d, s in qlog.items()}, got, text)


# --- knn beside a query (item 2) -------------------------------------------------------------


def _knn(bodies: Bodies, k: int = 20) -> dict[str, Any]:
    return {"field": "vec", "query_vector": [0.3, 0.1, 0.7, 0.2], "k": k, "num_candidates": 100}


@pytest.mark.parametrize("mode", ["boost", "rerank"])
def test_knn_with_a_query_on_a_multi_shard_index_is_rewritten_with_global_statistics(
    bodies: Bodies, mode: str
) -> None:
    """The default dfs=True used to fail here with 400 'cannot set [search_type] when using
    [knn] search'. Elasticsearch runs knn searches as dfs itself: the hybrid's scores must
    be exactly the global q-log query score plus the knn score (rerank mode too: a rescore
    has no place beside knn, so such a body gets the boost rewrite)."""
    if not bodies.es:
        pytest.skip("top-level knn is Elasticsearch's (OpenSearch: see the next test)")
    wrapped = bodies.wrapped(mode=mode)
    knn_scores = dict(hits_of(_all(bodies, bodies.engine.client, {"knn": _knn(bodies)})))
    assert len(knn_scores) == 20
    for text in TEXTS:
        body = {"query": {"match": {"body": text}}, "knn": _knn(bodies)}
        native = _all(bodies, bodies.engine.client, body)
        got = _all(bodies, wrapped, body)
        _assert_same_set(native, got, text)
        assert _differs(native, got), text
        qlog = dict(hits_of(_all(bodies, wrapped, {"query": body["query"]})))
        expected = {d: qlog.get(d, 0.0) + knn_scores.get(d, 0.0) for d in {*qlog, *knn_scores}}
        _assert_scores(expected, got, text)
        # the elasticsearch-py keyword form of the same search
        keyword = wrapped.search(
            index=bodies.index,
            query=body["query"],
            knn=_knn(bodies),
            size=bodies.total_docs,
            source=False,
            track_total_hits=True,
        )
        _assert_scores(expected, keyword, text)


def test_a_top_level_knn_on_opensearch_fails_as_it_does_natively(bodies: Bodies) -> None:
    if bodies.es:
        pytest.skip("OpenSearch has no top-level knn")
    _, bad_request = client_errors("opensearch")
    body = {"query": {"match": {"body": "read file"}}, "knn": _knn(bodies)}
    with pytest.raises(bad_request) as native:
        bodies.engine.client.search(index=bodies.index, body=body)
    with pytest.raises(bad_request) as got:
        bodies.wrapped().search(index=bodies.index, body=body)
    assert str(got.value) == str(native.value)


# --- retriever.standard ----------------------------------------------------------------------


def test_a_standard_retriever_query_is_rewritten(bodies: Bodies) -> None:
    wrapped = bodies.wrapped()
    if not bodies.es:
        _, bad_request = client_errors("opensearch")
        body = {"retriever": {"standard": {"query": {"match": {"body": "read file"}}}}}
        with pytest.raises(bad_request) as native:
            bodies.engine.client.search(index=bodies.index, body=body)
        with pytest.raises(bad_request) as got:
            wrapped.search(index=bodies.index, body=body)
        assert str(got.value) == str(native.value)
        return
    for text in TEXTS:
        query = {"match": {"body": text}}
        body = {"retriever": {"standard": {"query": query, "filter": {"exists": {"field": "key"}}}}}
        native = _all(bodies, bodies.engine.client, body)
        got = _all(bodies, wrapped, body)
        _assert_same_set(native, got, text)
        assert _differs(native, got), text
        _assert_scores(dict(hits_of(_all(bodies, wrapped, {"query": query}))), got, text)


def test_a_standard_retriever_with_min_score_stays_native(bodies: Bodies) -> None:
    if not bodies.es:
        pytest.skip("retrievers are Elasticsearch's")
    query = {"match": {"body": "read file error"}}
    scores = sorted(
        (s for _, s in hits_of(_all(bodies, bodies.engine.client, {"query": query}))), reverse=True
    )
    body = {"retriever": {"standard": {"query": query, "min_score": scores[len(scores) // 3]}}}
    native = _all(bodies, bodies.engine.client, body)
    got = _all(bodies, bodies.wrapped(), body)
    _assert_same_set(native, got, "min_score")
    _assert_scores(dict(hits_of(native)), got, "min_score")


def test_a_knn_retriever_beside_nothing_is_left_alone(bodies: Bodies) -> None:
    if not bodies.es:
        pytest.skip("retrievers are Elasticsearch's")
    body = {"retriever": {"knn": _knn(bodies)}}
    native = _all(bodies, bodies.engine.client, body)
    got = _all(bodies, bodies.wrapped(), body)
    _assert_same_set(native, got, "knn retriever")
    _assert_scores(dict(hits_of(native)), got, "knn retriever")


# --- point in time (item 5) -----------------------------------------------------------------


def _open_pit(bodies: Bodies) -> str:
    client = bodies.engine.client
    if bodies.es:
        return str(body_of(client.open_point_in_time(index=bodies.index, keep_alive="2m"))["id"])
    return str(body_of(client.create_pit(index=bodies.index, keep_alive="2m"))["pit_id"])


def _close_pit(bodies: Bodies, pit: str) -> None:
    client = bodies.engine.client
    if bodies.es:
        client.close_point_in_time(id=pit)
    else:
        client.delete_pit(body={"pit_id": [pit]})


@pytest.mark.parametrize("size", [15, 40])
def test_pit_pages_are_ranked_by_qlog_like_an_indexed_search(bodies: Bodies, size: int) -> None:
    """Page 1 and page 2 of a PIT search rank as the same search with index= does."""
    wrapped = bodies.wrapped()
    sort = [{"_score": "desc"}, {"key": "asc"}]
    query = {"match": {"body": "read file error"}}
    reference = body_of(
        wrapped.search(
            index=bodies.index,
            body={
                "query": query,
                "sort": sort,
                "size": 2 * size,
                "track_total_hits": True,
                "_source": False,
            },
        )
    )
    native_total = total_of(
        bodies.engine.client.search(
            index=bodies.index, body={"query": query, "track_total_hits": True, "size": 0}
        )
    )
    pit = _open_pit(bodies)
    try:
        pages: list[dict[str, Any]] = []
        after: list[Any] | None = None
        for _ in range(2):
            body: dict[str, Any] = {
                "query": query,
                "sort": sort,
                "size": size,
                "track_total_hits": True,
                "_source": False,
                "pit": {"id": pit, "keep_alive": "2m"},
            }
            if after is not None:
                body["search_after"] = after
            page = body_of(wrapped.search(body=body))
            pit = page.get("pit_id", pit)
            pages.append(page)
            after = page["hits"]["hits"][-1]["sort"]
            assert page["hits"]["total"]["value"] == native_total
    finally:
        _close_pit(bodies, pit)
    got = [(h["_id"], h["_score"]) for p in pages for h in p["hits"]["hits"]]
    want = [(h["_id"], h["_score"]) for h in reference["hits"]["hits"]]
    assert [i for i, _ in got] == [i for i, _ in want]
    for (_, s1), (_, s2) in zip(got, want, strict=True):
        assert rel_close(s1, s2, 1e-4)


def test_a_pit_over_an_uncalibrated_index_stays_native(bodies: Bodies) -> None:
    client = bodies.engine.client
    pit = (
        str(body_of(client.open_point_in_time(index=bodies.other, keep_alive="1m"))["id"])
        if bodies.es
        else str(body_of(client.create_pit(index=bodies.other, keep_alive="1m"))["pit_id"])
    )
    try:
        body = {
            "query": {"match": {"body": "error string"}},
            "size": 50,
            "pit": {"id": pit},
            "track_total_hits": True,
        }
        native = client.search(body=body)
        got = bodies.wrapped().search(body=body)
        _assert_same_set(native, got, "other")
        _assert_scores(dict(hits_of(native)), got, "other")
    finally:
        if bodies.es:
            client.close_point_in_time(id=pit)
        else:
            client.delete_pit(body={"pit_id": [pit]})


# --- msearch (item 5) -----------------------------------------------------------------------


def _batch(bodies: Bodies) -> list[dict[str, Any]]:
    full = {"size": bodies.total_docs, "_source": False, "track_total_hits": True}
    query = {"match": {"body": "read file"}}
    return [
        {"index": bodies.index},
        {**full, "query": query},
        {},
        {**full, "query": {"match": {"body": "error handling"}}},  # the call's index
        {"index": bodies.other},
        {**full, "query": {"match": {"body": "error"}}},  # no calibration
        {"index": bodies.index},
        {**full, "query": query, "min_score": 1.0},
    ]


def _check_msearch(bodies: Bodies, responses: list[Any]) -> None:
    wrapped, native = bodies.wrapped(), bodies.engine.client
    batch = _batch(bodies)
    got = body_of(responses[0])["responses"]
    raw = body_of(responses[1])["responses"]
    assert len(got) == len(raw) == 4
    for n, (header, body) in enumerate(zip(batch[::2], batch[1::2], strict=True)):
        index = header.get("index", bodies.index)
        _assert_same_set(raw[n], got[n], n)
        if index == bodies.index and "min_score" not in body:
            expected = wrapped.search(index=index, body=body)
            assert _differs(raw[n], got[n]), n
        else:
            expected = native.search(index=index, body=body)
        _assert_scores(dict(hits_of(expected)), got[n], n)


@pytest.mark.parametrize("mode", ["boost", "script", "rerank"])
def test_msearch_rewrites_each_calibrated_search(bodies: Bodies, mode: str) -> None:
    if mode == "script":
        if bodies.es:
            pytest.skip("script mode needs Painless (not in the Elasticsearch test node)")
        bodies.engine.run(install_script_plan())
    wrapped, native = bodies.wrapped(mode=mode), bodies.engine.client
    if bodies.es:
        responses = [
            c.msearch(index=bodies.index, searches=_batch(bodies)) for c in (wrapped, native)
        ]
    else:
        responses = [c.msearch(index=bodies.index, body=_batch(bodies)) for c in (wrapped, native)]
    _check_msearch(bodies, responses)


def _async_client(flavor: str) -> Any:
    if flavor == "elasticsearch":
        from elasticsearch import AsyncElasticsearch

        return AsyncElasticsearch(ENGINE_URLS[flavor], request_timeout=60)
    from opensearchpy import AsyncOpenSearch

    return AsyncOpenSearch(hosts=[ENGINE_URLS[flavor]], timeout=60)


def test_async_msearch_rewrites_each_calibrated_search(bodies: Bodies) -> None:
    async def run() -> list[Any]:
        client = _async_client(bodies.engine.flavor)
        try:
            wrapped = wrap(client, [bodies.calibration])
            key = "searches" if bodies.es else "body"
            got = await wrapped.msearch(index=bodies.index, **{key: _batch(bodies)})
            raw = await client.msearch(index=bodies.index, **{key: _batch(bodies)})
            return [got, raw]
        finally:
            await client.close()

    _check_msearch(bodies, asyncio.run(run()))


def test_an_ndjson_msearch_goes_to_the_engine_as_given(bodies: Bodies) -> None:
    lines = "".join(json.dumps(part) + "\n" for part in _batch(bodies)[:2])
    key = "searches" if bodies.es else "body"
    got = bodies.wrapped().msearch(index=bodies.index, **{key: lines})
    raw = bodies.engine.client.msearch(index=bodies.index, **{key: lines})
    first, native = body_of(got)["responses"][0], body_of(raw)["responses"][0]
    _assert_same_set(native, first, "ndjson")
    _assert_scores(dict(hits_of(native)), first, "ndjson")


# --- Haystack's BM25 retrievers: multi_match, no fields, fuzziness (item 5) ------------------


def _haystack_body(text: str, fuzziness: str) -> dict[str, Any]:
    """The body haystack-core-integrations' Elasticsearch and OpenSearch BM25 retrievers
    send (document_store._bm25_retrieval), with the retriever's fuzziness."""
    return {
        "size": 10,
        "query": {
            "bool": {
                "must": [
                    {
                        "multi_match": {
                            "query": text,
                            "fuzziness": fuzziness,
                            "type": "most_fields",
                            "operator": "OR",
                        }
                    }
                ]
            }
        },
    }


@pytest.fixture(scope="module")
def haystack(engine: Engine) -> Iterator[tuple[Engine, str, str, Calibration]]:
    """A Haystack-shaped index (content text, meta keywords) twice: with the default
    index.query.default_field (*) and with default_field [content]."""
    mappings = {"properties": {"content": {"type": "text"}, "meta": {"type": "keyword"}}}
    star = create_index(engine, shards=2, mappings=mappings)
    listed = create_index(
        engine, shards=2, mappings=mappings, settings={"index.query.default_field": ["content"]}
    )
    try:
        docs = [{"id": d["id"], "content": d["body"], "meta": d["pkg"]} for d in load_docs(600)]
        for index in (star, listed):
            bulk_index(engine, index, docs)
        cals = [
            dataclasses.replace(calibrate(engine, i, "content", sample=300), q=0.5)
            for i in (star, listed)
        ]
        yield engine, star, listed, cals  # type: ignore[misc]
    finally:
        call(engine, "DELETE", f"/{star}")
        call(engine, "DELETE", f"/{listed}")


def _search_all(client: Any, index: str, body: dict[str, Any]) -> Any:
    return client.search(
        index=index, body={**body, "size": 700, "track_total_hits": True, "_source": False}
    )


def test_haystack_bm25_body_with_fuzziness_0_and_listed_default_fields_is_rewritten(
    haystack: Any,
) -> None:
    engine, _, listed, cals = haystack
    wrapped = wrap(engine.client, cals)
    for text in ("error string", "parse the buffer", "Close"):
        body = _haystack_body(text, "0")
        native = _search_all(engine.client, listed, body)
        got = _search_all(wrapped, listed, body)
        _assert_same_set(native, got, text)
        assert _differs(native, got), text
        plain = {"query": {"match": {"content": text}}}
        _assert_scores(dict(hits_of(_search_all(wrapped, listed, plain))), got, text)


@pytest.mark.parametrize(
    "which,fuzziness", [("star", "0"), ("star", "AUTO"), ("listed", "AUTO"), ("listed", "1")]
)
def test_haystack_bm25_body_that_cannot_be_exact_stays_native(
    haystack: Any, which: str, fuzziness: str
) -> None:
    """Fuzzy expansion changes terms (and blends their df); default_field * searches every
    field leniently: both are the engine's to resolve, so the body goes as given."""
    engine, star, listed, cals = haystack
    index = star if which == "star" else listed
    body = _haystack_body("error strng", fuzziness)
    native = _search_all(engine.client, index, body)
    got = _search_all(wrap(engine.client, cals), index, body)
    _assert_same_set(native, got, (which, fuzziness))
    _assert_scores(dict(hits_of(native)), got, (which, fuzziness))


def test_match_with_fuzziness_0_is_rewritten_exactly(bodies: Bodies) -> None:
    wrapped = bodies.wrapped()
    for text in TEXTS:
        for fuzziness in (0, "0"):
            body = {"query": {"match": {"body": {"query": text, "fuzziness": fuzziness}}}}
            native = _all(bodies, bodies.engine.client, body)
            got = _all(bodies, wrapped, body)
            _assert_same_set(native, got, (text, fuzziness))
            assert _differs(native, got), text
            plain = {"query": {"match": {"body": text}}}
            _assert_scores(dict(hits_of(_all(bodies, wrapped, plain))), got, text)


def test_the_async_wrapper_takes_the_same_decisions_for_pit_and_knn(bodies: Bodies) -> None:
    query = {"match": {"body": "read file error"}}
    sort = [{"_score": "desc"}, {"key": "asc"}]
    pit = _open_pit(bodies)
    extra: dict[str, Any] = {"knn": _knn(bodies)} if bodies.es else {}
    try:
        pit_body = {"query": query, "sort": sort, "size": 30, "_source": False, "pit": {"id": pit}}

        async def run() -> list[Any]:
            client = _async_client(bodies.engine.flavor)
            try:
                wrapped = wrap(client, [bodies.calibration])
                out = [await wrapped.search(body=pit_body)]
                if extra:
                    out.append(
                        await wrapped.search(
                            index=bodies.index,
                            body={"query": query, **extra, "size": 30, "_source": False},
                        )
                    )
                return out
            finally:
                await client.close()

        got = asyncio.run(run())
        sync = bodies.wrapped()
        want = [sync.search(body=pit_body)]
        if extra:
            want.append(
                sync.search(
                    index=bodies.index, body={"query": query, **extra, "size": 30, "_source": False}
                )
            )
    finally:
        _close_pit(bodies, pit)
    native = bodies.engine.client.search(
        index=bodies.index, body={"query": query, "sort": sort, "size": 30, "_source": False}
    )
    assert _differs(native, got[0])
    for a, b in zip(got, want, strict=True):
        assert [i for i, _ in hits_of(a)] == [i for i, _ in hits_of(b)]
        _assert_scores(dict(hits_of(b)), a, "async")
