"""The wrapped client behaves as the client itself in the idioms applications and frameworks
use: ``options()`` (which langchain, llama-index and ``helpers.scan`` call) keeps the
calibration, ``isinstance`` sees the client's class, ``with`` / ``async with`` work, and
positional arguments are rejected or accepted exactly as the client does. Real engines."""

from __future__ import annotations

import asyncio
import copy
import itertools
from typing import Any

import pytest

from esqlog.wrapper import AsyncQlogClient, QlogClient, wrap
from tests.support.engines import ENGINE_URLS
from tests.support.oracle import Corpus, assert_same_ranking, hits_of, load_query_texts, rel_close

DFS = "dfs_query_then_fetch"
Q_LOW = 0.6


def _query(corpus: Corpus) -> dict[str, Any]:
    """A query whose q-log ranking differs from the native one on this corpus."""
    w = wrap(corpus.engine.client, corpus.cals(Q_LOW))
    for text in load_query_texts()[:60]:
        query = {"match": {"body": text}}
        ranked = _ids(w.search(index=corpus.index, body={"query": query, "size": 10}))
        native = _ids(
            corpus.engine.client.search(
                index=corpus.index, search_type=DFS, body={"query": query, "size": 10}
            )
        )
        if len(ranked) == 10 and ranked != native:
            return query
    raise AssertionError("no query ranks differently at q=0.6 on this corpus")


def _ids(response: Any) -> list[str]:
    return [h for h, _ in hits_of(response)]


@pytest.mark.engine
def test_isinstance_and_options_keep_the_calibration(corpus: Corpus) -> None:
    bare = corpus.engine.client
    w = wrap(bare, corpus.cals(Q_LOW))
    assert isinstance(w, type(bare)) and isinstance(w, QlogClient)
    query = _query(corpus)
    body = {"query": query, "size": 10}
    reference = hits_of(w.search(index=corpus.index, body=copy.deepcopy(body)))
    native = hits_of(bare.search(index=corpus.index, body=body, search_type=DFS))
    assert not rel_close(reference[0][1], native[0][1], 1e-3)
    if corpus.flavor == "opensearch":  # opensearch-py has no options(): neither has the wrapper
        assert not hasattr(bare, "options")
        with pytest.raises(AttributeError):
            _ = w.options
        return
    derived = w.options(request_timeout=30, headers={"user-agent": "esqlog-test"})
    assert isinstance(derived, QlogClient) and isinstance(derived, type(bare))
    assert derived.esqlog_core is w.esqlog_core
    chained = derived.options(opaque_id="x").options(ignore_status=404)
    for client in (derived, chained):
        assert_same_ranking(reference, hits_of(client.search(index=corpus.index, **body)), 1e-6)


@pytest.mark.engine
def test_helpers_scan_yields_the_qlog_order(corpus: Corpus) -> None:
    """``helpers.scan`` (elasticsearch: through ``options()``) pages through q-log scores."""
    if corpus.flavor == "elasticsearch":
        from elasticsearch.helpers import scan
    else:
        from opensearchpy.helpers import scan
    bare = corpus.engine.client
    w = wrap(bare, corpus.cals(Q_LOW))
    query = _query(corpus)
    reference = hits_of(w.search(index=corpus.index, body={"query": query, "size": 20}))
    native = hits_of(
        bare.search(index=corpus.index, body={"query": query, "size": 20}, search_type=DFS)
    )
    scanned = [
        (h["_id"], float(h["_score"]))
        for h in itertools.islice(
            scan(w, index=corpus.index, query={"query": query}, preserve_order=True, size=7), 20
        )
    ]
    assert_same_ranking(reference, scanned, 1e-6)
    assert [h for h, _ in scanned] != [h for h, _ in native]


def _async_client(flavor: str) -> Any:
    if flavor == "elasticsearch":
        from elasticsearch import AsyncElasticsearch

        return AsyncElasticsearch(ENGINE_URLS[flavor], request_timeout=60)
    from opensearchpy import AsyncOpenSearch

    return AsyncOpenSearch(hosts=[ENGINE_URLS[flavor]], timeout=60)


@pytest.mark.engine
def test_async_with_async_scan_and_async_options(corpus: Corpus) -> None:
    pytest.importorskip("aiohttp")
    query = _query(corpus)
    reference = hits_of(
        wrap(corpus.engine.client, corpus.cals(Q_LOW)).search(
            index=corpus.index, body={"query": query, "size": 12}
        )
    )

    async def main() -> tuple[Any, ...]:
        async with wrap(_async_client(corpus.flavor), corpus.cals(Q_LOW)) as es:
            assert isinstance(es, AsyncQlogClient)
            direct = await es.search(index=corpus.index, body={"query": query, "size": 12})
            if corpus.flavor != "elasticsearch":
                return direct, direct, []
            from elasticsearch.helpers import async_scan

            derived = await es.options(request_timeout=30).search(
                index=corpus.index, query=query, size=12
            )
            scanned = []
            async for hit in async_scan(
                es, index=corpus.index, query={"query": query}, preserve_order=True, size=5
            ):
                scanned.append((hit["_id"], float(hit["_score"])))
                if len(scanned) == 12:
                    break
        return direct, derived, scanned

    direct, derived, scanned = asyncio.run(main())
    assert_same_ranking(reference, hits_of(direct), 1e-6)
    assert_same_ranking(reference, hits_of(derived), 1e-6)
    if corpus.flavor == "elasticsearch":
        assert_same_ranking(reference, scanned, 1e-6)


@pytest.mark.engine
def test_with_statement_and_positional_arguments_as_the_client(corpus: Corpus) -> None:
    bare_class = type(corpus.engine.client)
    query = _query(corpus)
    reference = hits_of(
        wrap(corpus.engine.client, corpus.cals(Q_LOW)).search(
            index=corpus.index, body={"query": query, "size": 10}
        )
    )
    client = (
        bare_class(ENGINE_URLS[corpus.flavor])
        if corpus.flavor == "elasticsearch"
        else bare_class(hosts=[ENGINE_URLS[corpus.flavor]])
    )
    with wrap(client, corpus.cals(Q_LOW)) as es:
        assert isinstance(es, QlogClient)
        assert_same_ranking(
            reference,
            hits_of(es.search(index=corpus.index, body={"query": query, "size": 10})),
            1e-6,
        )
        body = {"query": query}
        with pytest.raises(TypeError) as native_error:
            client.search(body, corpus.index)  # the client's own rejection, no request sent
        with pytest.raises(TypeError, match="keyword arguments only"):
            es.search(body, corpus.index)
        assert native_error.type is TypeError
