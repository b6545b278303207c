"""Searches esqlog used to get wrong at the edges, on both engines: paging values the engine
refuses, ``track_total_hits`` as a string, and the one-index list the DSL libraries send."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from esqlog.engine.client import Engine
from esqlog.identifiers.calibrate import calibrate_identifiers, save_identifier_calibration
from esqlog.identifiers.settings import IdentifierSettings
from esqlog.wrapper import SearchDecision, wrap
from esqlog.wrapper.options import SearchMode
from tests.support.engines import ENGINE_URLS, bulk_index, call, client_errors, create_index
from tests.support.oracle import load_docs

QUERY = {"match": {"body": "read the file and return its bytes"}}
MODES: tuple[SearchMode, ...] = ("boost", "rerank", "identifiers")


class Index:
    def __init__(self, engine: Engine, name: str, path: Path) -> None:
        self.engine, self.name, self.path = engine, name, path


@pytest.fixture(scope="module")
def calibrated(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Index]:
    """A 3-shard index of real Go functions, calibrated for every mode; always deleted."""
    name = create_index(engine, shards=3)
    try:
        bulk_index(engine, name, [{"id": d["id"], "body": d["body"]} for d in load_docs(400)])
        found = calibrate_identifiers(engine, name, "body")
        path = tmp_path_factory.mktemp("edges") / "code.qlog.json"
        save_identifier_calibration(found, path)
        yield Index(engine, name, path)
    finally:
        call(engine, "DELETE", f"/{name}")


def _client(flavor: str) -> Any:
    if flavor == "opensearch":
        import opensearchpy

        return opensearchpy.OpenSearch(hosts=[ENGINE_URLS[flavor]], timeout=60)
    import elasticsearch

    return elasticsearch.Elasticsearch(ENGINE_URLS[flavor], request_timeout=60)


def _async_client(flavor: str) -> Any:
    if flavor == "opensearch":
        import opensearchpy

        return opensearchpy.AsyncOpenSearch(hosts=[ENGINE_URLS[flavor]], timeout=60)
    import elasticsearch

    return elasticsearch.AsyncElasticsearch(ENGINE_URLS[flavor], request_timeout=60)


def _scores(response: Any) -> list[tuple[str, float]]:
    return [(h["_id"], round(h["_score"], 4)) for h in response["hits"]["hits"]]


@pytest.mark.parametrize("mode", MODES)
def test_track_total_hits_as_a_string_is_what_the_engine_makes_of_it(
    calibrated: Index, mode: SearchMode
) -> None:
    """The identifiers fan-out merged hits.total with int("true"): ValueError."""
    es = wrap(_client(calibrated.engine.flavor), calibrated.path, mode=mode)
    given = {"query": QUERY, "size": 5}
    as_bool = es.search(index=calibrated.name, body={**given, "track_total_hits": True})
    for text in ("true", "false"):
        got = es.search(index=calibrated.name, body={**given, "track_total_hits": text})
        assert _scores(got) == _scores(as_bool)
        if text == "true":
            assert got["hits"]["total"] == as_bool["hits"]["total"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("paging", [{"from": -1}, {"size": -1}])
def test_negative_paging_gets_the_engines_own_400(
    calibrated: Index, mode: SearchMode, paging: dict[str, int]
) -> None:
    """from=-1 went through the identifiers fan-out and answered 200 with no hits."""
    flavor = calibrated.engine.flavor
    _, bad_request = client_errors(flavor)
    client = _client(flavor)
    with pytest.raises(bad_request) as native:
        client.search(index=calibrated.name, body={"query": QUERY, **paging})
    with pytest.raises(bad_request) as wrapped:
        wrap(client, calibrated.path, mode=mode).search(
            index=calibrated.name, body={"query": QUERY, **paging}
        )
    assert str(wrapped.value) == str(native.value)


def _dsl(flavor: str, client: Any, index: Any, asynchronous: bool = False) -> Any:
    """The DSL library's Search on ``client``, as an application builds it."""
    if flavor == "opensearch":
        if asynchronous:
            from opensearchpy._async.helpers.search import AsyncSearch as OpenSearchAsync

            return OpenSearchAsync(using=client, index=index).query(QUERY).extra(size=10)
        from opensearchpy.helpers.search import Search as OpenSearchSearch

        return OpenSearchSearch(using=client, index=index).query(QUERY).extra(size=10)
    from elasticsearch import dsl

    kind = dsl.AsyncSearch if asynchronous else dsl.Search
    return kind(using=client, index=index).query(QUERY).extra(size=10)


def _dsl_scores(response: Any) -> list[tuple[str, float]]:
    return [(h.meta.id, round(h.meta.score, 4)) for h in response]


@pytest.mark.parametrize("mode", MODES)
def test_dsl_searches_get_the_q_log_scores_of_the_string_form(
    calibrated: Index, mode: SearchMode
) -> None:
    """elasticsearch.dsl and opensearch-py's Search send index=["code"]: it passed through
    natively, with no warning."""
    flavor = calibrated.engine.flavor
    client = _client(flavor)
    es = wrap(client, calibrated.path, mode=mode)
    string = _scores(es.search(index=calibrated.name, body={"query": QUERY, "size": 10}))
    native = _scores(client.search(index=calibrated.name, body={"query": QUERY, "size": 10}))
    assert string and string != native  # q-log moves the scores: the check below can fail
    assert _dsl_scores(_dsl(flavor, es, calibrated.name).execute()) == string
    for given in ([calibrated.name], (calibrated.name,)):
        assert _scores(es.search(index=given, body={"query": QUERY, "size": 10})) == string

    async def run() -> list[tuple[str, float]]:
        aclient = _async_client(flavor)
        try:
            return _dsl_scores(
                await _dsl(
                    flavor,
                    wrap(aclient, calibrated.path, mode=mode),
                    calibrated.name,
                    asynchronous=True,
                ).execute()
            )
        finally:
            await aclient.close()

    assert asyncio.run(run()) == string


def test_each_search_reports_its_decision(calibrated: Index) -> None:
    """On the real engine, one decision per search, naming the path it took."""
    flavor = calibrated.engine.flavor
    client = _client(flavor)
    seen: list[SearchDecision] = []
    other = create_index(calibrated.engine, shards=1)
    try:
        boost = wrap(client, calibrated.path, mode="boost", on_decision=seen.append)
        idents = wrap(
            client,
            calibrated.path,
            mode="identifiers",
            on_decision=seen.append,
            identifiers=IdentifierSettings(engine_query="span"),
        )  # fans out
        searches: list[tuple[Any, dict[str, Any], tuple[Any, ...]]] = [
            (boost, {"query": QUERY}, (True, "rewritten", "boost", "snapshot", False)),
            (idents, {"query": QUERY}, (True, "rewritten", "identifiers", "snapshot", True)),
            (
                idents,
                {"query": QUERY, "terminate_after": 100_000},
                (True, "rewritten", "identifiers", "snapshot", False),
            ),  # not for the fan-out
            (
                boost,
                {"query": {"term": {"body": "read"}}},
                (False, "no calibrated match clause", "native", None, False),
            ),
            (
                boost,
                {"query": QUERY, "min_score": 1.0},
                (False, "min_score", "native", None, False),
            ),
        ]
        for wrapped, body, expected in searches:
            wrapped.search(index=calibrated.name, body=body)
            d = seen[-1]
            assert (d.rewritten, d.reason, d.mode, d.statistics, d.fan_out) == expected, body
        boost.search(index=other, body={"query": QUERY})
        assert (seen[-1].index, seen[-1].reason) == (other, "index not calibrated")
        boost.search(index=[calibrated.name, other], body={"query": QUERY})
        assert (seen[-1].index, seen[-1].reason) == (None, "not one index")
        _dsl(flavor, boost, calibrated.name).execute()
        assert (seen[-1].index, seen[-1].rewritten) == (calibrated.name, True)
        assert len(seen) == len(searches) + 3
    finally:
        call(calibrated.engine, "DELETE", f"/{other}")
