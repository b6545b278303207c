"""The identifiers mode through every shape a client call takes, on 3 shards.

``msearch`` with the plugin's query (one plain query per body, as ``search`` sends it),
elasticsearch-py's ``from`` keyword (its alias of ``from_``) paging a fanned-out search,
and a point-in-time search, which keeps the native match set and says so once.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from esqlog.engine.client import Engine
from esqlog.identifiers.settings import IdentifierSettings
from esqlog.wrapper import wrap
from tests.support.calibrated_go import calibrated_index
from tests.support.engines import ENGINE_URLS
from tests.support.oracle import body_of, hits_of, load_query_texts, total_of

SHARDS = 3
PLUGIN = IdentifierSettings(engine_query="plugin")


@pytest.fixture(scope="module")
def calibrated(
    engine: Engine, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Engine, str, Path]]:
    with calibrated_index(engine, SHARDS, tmp_path_factory.mktemp("shapes")) as (index, path):
        yield engine, index, path


def _texts(count: int) -> list[str]:
    return [t for t in load_query_texts() if t.isascii()][:count]


def _body(text: str, size: int = 20) -> dict[str, Any]:
    return {
        "query": {"match": {"body": text}},
        "size": size,
        "track_total_hits": True,
        "_source": False,
    }


def _lines(index: str, texts: list[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for text in texts:
        out += [{"index": index}, _body(text)]
    return out


def _msearch(client: Any, flavor: str, lines: list[dict[str, Any]]) -> Any:
    return (
        client.msearch(searches=lines) if flavor == "elasticsearch" else client.msearch(body=lines)
    )


def test_plugin_msearch_answers_each_body_as_search_does(
    calibrated: tuple[Engine, str, Path],
) -> None:
    """Each body of an msearch gets the plugin's one query, as ``search`` sends it (one
    line per body, no dfs, no shard pinned): the same hits and total (it raised
    IndexError on several shards)."""
    engine, index, path = calibrated
    client = wrap(engine.client, path, mode="identifiers", identifiers=PLUGIN)
    texts = _texts(4)
    expected = [client.search(index=index, body=_body(t)) for t in texts]
    sent: list[Any] = []
    transport = engine.client.transport
    perform = transport.perform_request

    def spy(method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        sent.append((url, kwargs.get("body"), kwargs.get("params")))
        return perform(method, url, *args, **kwargs)

    transport.perform_request = spy  # type: ignore[method-assign]
    try:
        answers = body_of(_msearch(client, engine.flavor, _lines(index, texts)))["responses"]
    finally:
        transport.perform_request = perform  # type: ignore[method-assign]
    (msearch,) = [s for s in sent if "_msearch" in s[0]]
    shown = str(msearch)
    assert "dfs" not in shown and "_shards:" not in shown, shown[:500]
    assert len(answers) == len(texts)
    for got, want in zip(answers, expected, strict=True):
        assert "error" not in got, got
        assert total_of(got) == total_of(want) > 0
        assert [i for i, _ in hits_of(got)] == [i for i, _ in hits_of(want)]
        assert [s for _, s in hits_of(got)] == pytest.approx(
            [s for _, s in hits_of(want)], rel=1e-5
        )


def test_plugin_msearch_async(calibrated: tuple[Engine, str, Path]) -> None:
    pytest.importorskip("aiohttp")
    engine, index, path = calibrated
    texts = _texts(3)
    sync = wrap(engine.client, path, mode="identifiers", identifiers=PLUGIN)
    expected = [hits_of(sync.search(index=index, body=_body(t))) for t in texts]
    if engine.flavor == "elasticsearch":
        from elasticsearch import AsyncElasticsearch

        raw: Any = AsyncElasticsearch(ENGINE_URLS["elasticsearch"], request_timeout=60)
    else:
        from opensearchpy import AsyncOpenSearch

        raw = AsyncOpenSearch(hosts=[ENGINE_URLS["opensearch"]], timeout=60)

    async def run() -> Any:
        client = wrap(raw, path, mode="identifiers", identifiers=PLUGIN)
        try:
            lines = _lines(index, texts)
            if engine.flavor == "elasticsearch":
                return await client.msearch(searches=lines)
            return await client.msearch(body=lines)
        finally:
            await raw.close()

    answers = body_of(asyncio.run(run()))["responses"]
    for got, want in zip(answers, expected, strict=True):
        assert "error" not in got, got
        assert [i for i, _ in hits_of(got)] == [i for i, _ in want]


def test_the_from_keyword_pages_a_fanned_out_search(calibrated: tuple[Engine, str, Path]) -> None:
    """elasticsearch-py takes ``from`` as an alias of ``from_``: both page the search sent
    to each shard on its own (``from`` was dropped: page 1 came back)."""
    engine, index, path = calibrated
    if engine.flavor != "elasticsearch":
        pytest.skip("opensearch-py takes from_ only (from is a TypeError in the client)")
    client = wrap(
        engine.client, path, mode="identifiers", identifiers=IdentifierSettings(engine_query="span")
    )  # the fan-out's path
    text = next(
        t for t in _texts(20) if total_of(client.search(index=index, body=_body(t, 0))) >= 30
    )
    full = hits_of(client.search(index=index, body=_body(text, 30)))
    for keyword in ("from", "from_"):
        page = client.search(index=index, body=_body(text, 10), **{keyword: 10})
        assert [i for i, _ in hits_of(page)] == [i for i, _ in full[10:20]], keyword


def _open_pit(engine: Engine, index: str) -> str:
    if engine.flavor == "elasticsearch":
        return str(body_of(engine.client.open_point_in_time(index=index, keep_alive="1m"))["id"])
    return str(body_of(engine.client.create_pit(index=index, keep_alive="1m"))["pit_id"])


def _close_pit(engine: Engine, pit: str) -> None:
    if engine.flavor == "elasticsearch":
        engine.client.close_point_in_time(id=pit)
    else:
        engine.client.delete_pit(body={"pit_id": [pit]})


def test_a_point_in_time_search_says_once_that_it_keeps_the_native_match_set(
    calibrated: tuple[Engine, str, Path],
) -> None:
    engine, index, path = calibrated
    client = wrap(engine.client, path, mode="identifiers")
    text = _texts(1)[0]
    native = total_of(engine.client.search(index=index, body=_body(text, 0)))
    pit = _open_pit(engine, index)
    try:
        body = {**_body(text), "pit": {"id": pit, "keep_alive": "1m"}}
        with pytest.warns(RuntimeWarning, match="point-in-time searches") as caught:
            first = client.search(body=body)
        assert len([w for w in caught if "point-in-time" in str(w.message)]) == 1
        assert total_of(first) == native  # what the warning says: the native match set
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            client.search(body=body)  # once per client
    finally:
        _close_pit(engine, pit)
