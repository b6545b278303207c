"""The drop-in wrapper's API on real engines: signatures, response types, pass-through,
async clients, the client's own exceptions, and query text that only ever travels as data."""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import json
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from esqlog.calibration.files import save_calibration
from esqlog.errors import UsageError
from esqlog.wrapper import AsyncQlogClient, QlogClient, wrap
from tests.support.code_snippets import SNIPPETS
from tests.support.engines import ENGINE_URLS, bulk_index, call, client_errors, create_index
from tests.support.oracle import (
    Corpus,
    Recorder,
    assert_same_ranking,
    body_of,
    hits_of,
    load_query_texts,
    rel_close,
)

DFS = "dfs_query_then_fetch"
Q_LOW = 0.6
HOSTILE = [
    "\"; doc['x'].value; System.exit(0) //",
    "'); } return 1e308; /* params.q = 0 */ ctx._source.body = ''",
    'read\\" file \u0000 {{#toJson}}params{{/toJson}} ${jndi:ldap://x/a} ReadFile',
]


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return load_query_texts()[:40]


def modes_for(corpus: Corpus, *modes: str) -> list[str]:
    return [m for m in modes if m != "script" or corpus.has_painless]


def without_took(response: Any) -> dict[str, Any]:
    return {k: v for k, v in body_of(response).items() if k != "took"}


# --- signatures ----------------------------------------------------------------------------


def test_sync_signatures_give_the_same_rewritten_results(corpus: Corpus, texts: list[str]) -> None:
    bare = corpus.engine.client
    w = wrap(bare, corpus.cals(Q_LOW))
    assert isinstance(w, QlogClient)
    query = {"match": {"body": texts[3]}}
    body = {"query": query, "size": 10, "from": 5}
    reference = hits_of(w.search(index=corpus.index, body=copy.deepcopy(body)))
    native = hits_of(bare.search(index=corpus.index, body=body, search_type=DFS))
    assert len(reference) == 10
    assert not rel_close(reference[0][1], native[0][1], 1e-3)  # q < 1 really applied
    longer = hits_of(w.search(index=corpus.index, body={"query": query, "size": 15}))
    assert reference == longer[5:15]
    variants: list[Any] = []
    if corpus.flavor == "elasticsearch":
        variants.append(w.search(index=corpus.index, query=query, size=10, from_=5))
        variants.append(w.search(index=corpus.index, query=query, from_=5))  # size 10 default
    else:
        variants.append(w.search(body=copy.deepcopy(body), index=corpus.index))
        # positional search(body, index) is rejected as the client rejects it:
        # tests/engine/test_wrapper_client.py
        variants.append(
            w.search(body={"query": query}, index=corpus.index, params={"size": 10, "from": 5})
        )
    for got in variants:
        assert_same_ranking(reference, hits_of(got), 1e-6)
    # A caller's own search_type wins over the wrapper's dfs default.
    with Recorder(bare) as rec:
        w.search(index=corpus.index, body=copy.deepcopy(body), search_type="query_then_fetch")
        assert rec.calls[-1]["search_type"] == "query_then_fetch"
        w.search(index=corpus.index, body=copy.deepcopy(body))
        assert rec.calls[-1]["search_type"] == DFS


def test_calibration_from_a_file_and_bad_arguments(
    corpus: Corpus, texts: list[str], tmp_path: Path
) -> None:
    cal = corpus.cals(Q_LOW, ("body",))[0]
    path = save_calibration(cal, tmp_path / "cal.json")
    body = {"query": {"match": {"body": texts[5]}}, "size": 10}
    from_file = wrap(corpus.engine.client, str(path)).search(index=corpus.index, body=body)
    from_object = wrap(corpus.engine.client, cal).search(index=corpus.index, body=body)
    assert hits_of(from_file) == hits_of(from_object) and hits_of(from_file)
    with pytest.raises(UsageError, match="unknown mode"):
        wrap(corpus.engine.client, cal, mode="fast")
    with pytest.raises(UsageError, match="top_n"):
        wrap(corpus.engine.client, cal, top_n=0)
    with pytest.raises(TypeError):
        wrap(object(), cal)


def test_the_readme_two_line_change_works(corpus: Corpus, texts: list[str], tmp_path: Path) -> None:
    """README: ``import esqlog`` then ``esqlog.wrap(client, FILE)``. The package attribute
    must be the function even after esqlog.wrapper (the module) was imported elsewhere."""
    import esqlog
    import esqlog.wrapper

    path = save_calibration(corpus.cals(Q_LOW, ("body",))[0], tmp_path / "code.qlog.json")
    client = esqlog.wrap(corpus.engine.client, str(path))
    body = {"query": {"match": {"body": texts[6]}}, "size": 10}
    got = client.search(index=corpus.index, body=body)
    assert hits_of(got) and hits_of(got) == hits_of(
        esqlog.wrapper.wrap(corpus.engine.client, str(path)).search(index=corpus.index, body=body)
    )
    assert esqlog.ScriptingUnavailable is esqlog.wrapper.ScriptingUnavailable
    with pytest.raises(AttributeError):
        _ = esqlog.not_a_name  # type: ignore[attr-defined]


def test_response_type_is_the_clients_own(corpus: Corpus, texts: list[str]) -> None:
    bare = corpus.engine.client
    body = {"query": {"match": {"body": texts[7]}}, "size": 5}
    bare_response = bare.search(index=corpus.index, body=body)
    for mode in modes_for(corpus, "boost", "script", "rerank", "native"):
        got = wrap(bare, corpus.cals(Q_LOW), mode=mode).search(index=corpus.index, body=body)
        assert type(got) is type(bare_response), mode
        if corpus.flavor == "elasticsearch":
            from elastic_transport import ObjectApiResponse

            assert isinstance(got, ObjectApiResponse)
            assert got.meta.status == 200
            assert got["hits"]["hits"] == got.body["hits"]["hits"]
        else:
            assert isinstance(got, dict)
        assert len(got["hits"]["hits"]) == 5


def test_other_attributes_pass_through(corpus: Corpus) -> None:
    bare = corpus.engine.client
    w = wrap(bare, corpus.cals(Q_LOW))
    assert w.indices.exists(index=corpus.index)
    assert not w.indices.exists(index="esqlog-test-no-such-index")
    assert w.count(index=corpus.index)["count"] == len(corpus.docs)
    assert w.transport is bare.transport
    doc_id = next(iter(corpus.docs))
    assert w.get(index=corpus.index, id=doc_id)["_source"]["name"] == corpus.docs[doc_id]["name"]


# --- pass-through --------------------------------------------------------------------------


def test_uncalibrated_index_and_field_pass_through_untouched(
    corpus: Corpus, texts: list[str]
) -> None:
    bare = corpus.engine.client
    engine = corpus.engine
    other = create_index(engine)
    try:
        bulk_index(engine, other, [{"id": i, "body": t} for i, t in enumerate(SNIPPETS)])
        w = wrap(bare, corpus.cals(Q_LOW, ("body",)))  # title is not calibrated here
        title = next(iter(corpus.docs.values()))["title"]
        elsewhere = wrap(
            bare,
            [dataclasses.replace(c, index="esqlog-test-elsewhere") for c in corpus.cals(Q_LOW)],
        )
        cases = [
            (w, other, {"query": {"match": {"body": "read file"}}, "size": 5}),
            (elsewhere, corpus.index, {"query": {"match": {"body": texts[1]}}, "size": 10}),
            (w, corpus.index, {"query": {"match": {"title": title}}, "size": 10}),
            (
                w,
                corpus.index,
                {"query": {"match": {"body": {"query": texts[2], "fuzziness": 1}}}, "size": 10},
            ),
            (w, corpus.index, {"query": {"match_all": {}}, "size": 3}),
        ]
        for client, index, body in cases:
            with Recorder(bare) as rec:
                got = client.search(index=index, body=copy.deepcopy(body))
            assert rec.calls == [{"index": index, "body": body}], (index, body)
            assert without_took(got) == without_took(bare.search(index=index, body=body))
            assert hits_of(got), body
        # esqlog_mode="native" on a calibrated search also sends the caller's call as is.
        body = {"query": {"match": {"body": texts[1]}}, "size": 10}
        with Recorder(bare) as rec:
            w.search(index=corpus.index, body=copy.deepcopy(body), esqlog_mode="native")
        assert rec.calls == [{"index": corpus.index, "body": body}]
        # positional arguments: refused as the client refuses them, on the pass-through path too
        with pytest.raises(TypeError):
            bare.search({"query": {"match": {"body": "read file"}}}, other)
        with pytest.raises(TypeError, match="keyword arguments only"):
            w.search({"query": {"match": {"body": "read file"}}}, other)
    finally:
        call(engine, "DELETE", f"/{other}")


# --- async ---------------------------------------------------------------------------------


def _async_client(flavor: str) -> Any:
    if flavor == "elasticsearch":
        from elasticsearch import AsyncElasticsearch

        return AsyncElasticsearch(ENGINE_URLS[flavor], request_timeout=60)
    from opensearchpy import AsyncOpenSearch

    return AsyncOpenSearch(hosts=[ENGINE_URLS[flavor]], timeout=60)


def test_async_wrapper_gives_the_same_hits_as_the_sync_one(
    corpus: Corpus, texts: list[str]
) -> None:
    pytest.importorskip("aiohttp")
    modes = modes_for(corpus, "boost", "script", "rerank", "auto")
    queries = [{"match": {"body": t}} for t in texts[10:14]]
    queries.append({"multi_match": {"query": texts[14], "fields": ["body", "title^2"]}})
    sync = {
        mode: wrap(corpus.engine.client, corpus.cals(Q_LOW), mode=mode, top_n=30) for mode in modes
    }
    not_found, _ = client_errors(corpus.flavor)

    async def main() -> tuple[dict[tuple[str, int], Any], type]:
        client = _async_client(corpus.flavor)
        try:
            out: dict[tuple[str, int], Any] = {}
            for mode in modes:
                w = wrap(client, corpus.cals(Q_LOW), mode=mode, top_n=30)
                assert isinstance(w, AsyncQlogClient)
                results = await asyncio.gather(
                    *(w.search(index=corpus.index, body={"query": q, "size": 10}) for q in queries)
                )
                out.update({(mode, i): r for i, r in enumerate(results)})
            missing = wrap(client, corpus.cals(Q_LOW))
            with pytest.raises(not_found):
                await missing.search(index="esqlog-test-missing-index", body={"query": queries[0]})
            assert await missing.indices.exists(index=corpus.index)
            return out, type(out[(modes[0], 0)])
        finally:
            await client.close()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # auto's fallback on Elasticsearch
        found, response_type = asyncio.run(main())
        expected = {
            (mode, i): sync[mode].search(index=corpus.index, body={"query": q, "size": 10})
            for mode in modes
            for i, q in enumerate(queries)
        }
    assert response_type is type(expected[(modes[0], 0)])
    for key, got in found.items():
        assert hits_of(expected[key]), key
        assert_same_ranking(hits_of(expected[key]), hits_of(got), 1e-6, key)


def test_concurrent_sync_searches_are_consistent(corpus: Corpus, texts: list[str]) -> None:
    w = wrap(corpus.engine.client, corpus.cals(Q_LOW), mode="rerank", top_n=30)
    bodies = [{"query": {"match": {"body": t}}, "size": 10} for t in texts[15:23]]
    serial = [hits_of(w.search(index=corpus.index, body=b)) for b in bodies]
    with ThreadPoolExecutor(max_workers=8) as pool:
        parallel = list(pool.map(lambda b: hits_of(w.search(index=corpus.index, body=b)), bodies))
    assert parallel == serial and all(serial)


# --- errors --------------------------------------------------------------------------------


def test_the_clients_own_exceptions_surface(corpus: Corpus, texts: list[str]) -> None:
    not_found, bad_request = client_errors(corpus.flavor)
    body = {"query": {"match": {"body": texts[0]}}, "size": 10}
    for mode in modes_for(corpus, "boost", "script", "rerank", "auto"):
        w = wrap(corpus.engine.client, corpus.cals(Q_LOW), mode=mode)
        with pytest.raises(not_found):
            w.search(index="esqlog-test-missing-index", body=body)
        # A request the engine refuses after the rewrite: its own 400 comes back.
        for bad in (
            {**body, "size": -5},
            {**body, "from": -1},
            {**body, "aggs": {"x": {"terms": {"field": "no_such_field", "size": -1}}}},
        ):
            with pytest.raises(bad_request):
                w.search(index=corpus.index, body=bad)


# --- hostile text --------------------------------------------------------------------------


def _scripts(node: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "script" and isinstance(value, dict):
                found.append(value)
            found.extend(_scripts(value))
    elif isinstance(node, list):
        for item in node:
            found.extend(_scripts(item))
    return found


def _keys(node: Any) -> set[str]:
    if isinstance(node, dict):
        return set(node).union(*(_keys(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_keys(v) for v in node))
    return set()


def _term_values(node: Any) -> list[str]:
    found: list[str] = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "term" and isinstance(value, dict):
                (spec,) = value.values()
                found.append(spec["value"] if isinstance(spec, dict) else spec)
            else:
                found.extend(_term_values(value))
    elif isinstance(node, list):
        for item in node:
            found.extend(_term_values(item))
    return found


def test_hostile_query_text_reaches_the_engine_only_as_data(corpus: Corpus) -> None:
    """Hostile text must travel only as analyzed tokens in term values, on every path that
    builds a query: boost, script (all terms scripted, and the default hybrid that boosts
    frequent terms), and both rerank paths (the engine's rescore query, the client's one
    named search)."""
    bare = corpus.engine.client
    variants: list[tuple[str, dict[str, Any]]] = [
        ("boost", {}),
        ("script", {"script_df_fraction": 1.0}),
        ("script", {}),
        ("rerank", {"rerank_in": "engine"}),
        ("rerank", {"rerank_in": "client"}),
    ]
    scripted_some = False
    for mode, options in variants:
        if mode == "script" and not corpus.has_painless:
            continue
        w = wrap(bare, corpus.cals(1.0), mode=mode, top_n=20, **options)
        for text in HOSTILE:
            body = {"query": {"match": {"body": text}}, "size": 10}
            with Recorder(bare) as rec:
                got = w.search(index=corpus.index, body=copy.deepcopy(body))
            expected = bare.search(index=corpus.index, body=body, search_type=DFS)
            assert "error" not in body_of(got) and hits_of(got), (mode, options, text)
            assert_same_ranking(hits_of(expected), hits_of(got), 1e-4, (mode, options, text))
            (sent,) = rec.calls
            query = sent["body"]["query"]
            if options.get("rerank_in") == "engine":
                assert query == body["query"]  # the text travels in a match query, as given
                query = sent["body"]["rescore"]["query"]["rescore_query"]  # and as tokens
            tokens = [
                t["token"]
                for t in call(
                    corpus.engine,
                    "POST",
                    f"/{corpus.index}/_analyze",
                    {"field": "body", "text": text},
                )["tokens"]
            ]
            # Only analyzed tokens, each as the value of a term query.
            assert _term_values(query) == tokens, (mode, options, text)
            scripts = _scripts(query)
            if mode == "script":
                n_docs, _, df = corpus.global_stats("body", tokens)
                fraction = options.get("script_df_fraction", 0.01)
                rare = [t for t in tokens if df[t] <= fraction * n_docs]
                assert [s["params"]["n"] for s in scripts] == [df[t] for t in rare]
                scripted_some |= 0 < len(rare) < len(tokens)
            else:
                assert scripts == []
            for script in scripts:
                assert set(script) == {"id", "params"} and script["id"] == "esqlog-qlog-term"
                params = script["params"]
                assert set(params) == {"q", "n", "N", "form"}
                assert params["form"] == "lucene"
                assert all(isinstance(params[k], int | float) for k in ("q", "n", "N"))
            dumped = json.dumps(query)
            assert text not in dumped and json.dumps(text)[1:-1] not in dumped
            assert "source" not in _keys(query) and "inline" not in _keys(query)
    # the default hybrid really mixed scripts and boosts on some hostile text
    assert scripted_some or not corpus.has_painless
