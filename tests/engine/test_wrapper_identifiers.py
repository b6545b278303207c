"""``esqlog.wrap(client, calibration, mode="identifiers")`` on real engines, its span queries.

A 3-shard index of real Go functions on each engine, calibrated with --vocabulary
--identifiers and wrapped as an application would (sync and async clients). Scores are
checked against tests/support/split_bm25 (independent of esqlog's identifiers code), hits against
``esqlog search --mode identifiers`` (the CLI builds its query from the files directly),
and the match sets of operator=and / minimum_should_match against a test-side definition
computed from the engine's own term vectors and tokens.
"""

from __future__ import annotations

import asyncio
import json
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from esqlog.calibration.calibrate import calibrate_with_vocabulary
from esqlog.calibration.files import save_with_vocabulary
from esqlog.cli import main
from esqlog.engine.client import Engine
from esqlog.errors import UsageError
from esqlog.identifiers.calibrate import calibrate_identifiers, save_identifier_calibration
from esqlog.identifiers.query import plan_identifier_query
from esqlog.identifiers.settings import IdentifierSettings
from esqlog.wrapper import wrap
from tests.support.engines import ENGINE_URLS, bulk_index, call, create_index
from tests.support.identifiers_fixture import N_DOCS, SHARDS, UNCAPPED, Wrapped, wrapped_fixture
from tests.support.identifiers_fixture import search as _search
from tests.support.identifiers_fixture import texts as _texts
from tests.support.oracle import body_of, hits_of, load_docs, load_query_texts, total_of

#: this module checks the span queries against the split-stream oracle: asked for by name,
#: since the default ("auto") takes the esqlog-terms plugin these nodes have
SPANS = IdentifierSettings(engine_query="span")


@pytest.fixture(scope="module")
def wrapped_index(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Wrapped]:
    yield from wrapped_fixture(engine, tmp_path_factory)


@pytest.mark.parametrize("fan_out", [True, False], ids=["per shard", "dfs"])
def test_wrapped_scores_equal_split_stream_bm25(wrapped_index: Wrapped, fan_out: bool) -> None:
    """Default settings, operator or: engine scores through the wrapper equal the oracle
    within 1e-4 and the total is the oracle's match set of the listed terms. 3 shards:
    by default one request per shard, every word one saturation in the split stream with
    each shard's own length norm; ``fan_out=False``: one query with dfs_query_then_fetch,
    a word's terms grouped by shard set."""
    w = wrapped_index
    settings = IdentifierSettings(engine_query="span", fan_out=fan_out)
    client = wrap(w.engine.client, w.path, mode="identifiers", identifiers=settings)
    oracle = w.oracle
    alone = w.common_words(settings)
    checked = 0
    for text in _texts(w, 25, settings):
        words = w.plan_words(text, settings)
        q = plan_identifier_query(text, w.stats, w.vocab.df_of).q
        response = body_of(_search(client, w, {"match": {"body": text}}))
        assert response["hits"]["total"]["value"] == len(w.oracle.matching(words)), text
        assert response["_shards"]["total"] == SHARDS
        for hit in response["hits"]["hits"]:
            expected = (
                oracle.score(hit["_id"], words, q, grouped=False, alone=alone, local=True)
                if fan_out
                else oracle.score(
                    hit["_id"],
                    words,
                    q,
                    grouped=True,
                    alone=alone,
                    exact=w.exact_words(words, settings),
                )
            ) * w.scale
            assert hit["_score"] == pytest.approx(expected, rel=1e-4), (text, hit["_id"])
            checked += 1
    assert checked > 150


def test_wrapped_hits_equal_the_cli_search(wrapped_index: Wrapped) -> None:
    w = wrapped_index
    client = wrap(w.engine.client, w.path, mode="identifiers", identifiers=SPANS)
    for text in _texts(w, 4, IdentifierSettings(engine_query="span")):
        result = CliRunner().invoke(
            main,
            [
                "search",
                w.index,
                text,
                "--url",
                ENGINE_URLS[w.engine.flavor],
                "--calibration",
                str(w.path),
                "--mode",
                "identifiers",
                "--size",
                "10",
                "--json",
            ],
        )
        assert result.exit_code == 0, result.output
        cli = [(h["id"], h["score"]) for h in json.loads(result.stdout)["hits"]]
        got = hits_of(_search(client, w, {"match": {"body": text}}, size=10))
        assert [i for i, _ in got] == [i for i, _ in cli], text
        for (_, mine), (_, theirs) in zip(got, cli, strict=True):
            assert mine == pytest.approx(theirs, rel=1e-6)


@pytest.mark.parametrize(
    "match",
    [{"operator": "and"}, {"minimum_should_match": 2}, {"minimum_should_match": "60%"}],
    ids=str,
)
def test_operator_and_msm_match_their_documented_set(
    wrapped_index: Wrapped, match: dict[str, Any]
) -> None:
    """Every listed compound (uncapped): a query token is satisfied by a document holding
    the token or one of its sub-words, as a term or inside a term's split; operator=and
    needs every token, minimum_should_match counts satisfied tokens. Scores are those of
    operator=or (the filter does not score)."""
    w = wrapped_index
    client = wrap(w.engine.client, w.path, mode="identifiers", identifiers=UNCAPPED)
    texts = [t for t in _texts(w, 40) if len(w.token_words(t)) >= 3][:12]
    assert len(texts) >= 8
    narrowed = 0
    for text in texts:
        tokens = w.token_words(text)
        need = {"and": len(tokens), 2: 2, "60%": int(len(tokens) * 0.6)}[
            match.get("operator") or match["minimum_should_match"]
        ]
        expected = {
            d for d in w.oracle.vectors if sum(w.satisfied(d, words) for words in tokens) >= need
        }
        response = _search(client, w, {"match": {"body": {"query": text, **match}}}, size=N_DOCS)
        assert total_of(response) == len(expected), text
        assert {i for i, _ in hits_of(response)} == expected, text
        words = w.plan_words(text, UNCAPPED)
        q = plan_identifier_query(text, w.stats, w.vocab.df_of, UNCAPPED).q
        for doc, score in hits_of(response)[:20]:  # one request per shard (the default)
            expected_score = w.oracle.score(doc, words, q, grouped=False, local=True) * w.scale
            assert score == pytest.approx(expected_score, rel=1e-4)
        narrowed += len(expected) < len(w.oracle.matching(words))
    assert narrowed >= len(texts) // 2  # the filters do narrow the or set


def test_async_client_gives_the_same_hits(wrapped_index: Wrapped) -> None:
    pytest.importorskip("aiohttp")
    w = wrapped_index
    texts = _texts(w, 5, IdentifierSettings(engine_query="span"))
    sync = wrap(w.engine.client, w.path, mode="identifiers", identifiers=SPANS)
    expected = [hits_of(_search(sync, w, {"match": {"body": t}})) for t in texts]
    if w.engine.flavor == "elasticsearch":
        from elasticsearch import AsyncElasticsearch

        raw: Any = AsyncElasticsearch(ENGINE_URLS["elasticsearch"], request_timeout=60)
    else:
        from opensearchpy import AsyncOpenSearch

        raw = AsyncOpenSearch(hosts=[ENGINE_URLS["opensearch"]], timeout=60)

    async def run() -> list[list[tuple[str, float]]]:
        client = wrap(raw, w.path, mode="identifiers", identifiers=SPANS)
        try:
            return [
                hits_of(
                    await client.search(
                        index=w.index,
                        body={
                            "query": {"match": {"body": t}},
                            "size": 20,
                            "track_total_hits": True,
                            "_source": False,
                        },
                    )
                )
                for t in texts
            ]
        finally:
            await raw.close()

    got = asyncio.run(run())
    for mine, theirs in zip(got, expected, strict=True):
        assert [i for i, _ in mine] == [i for i, _ in theirs]
        assert [s for _, s in mine] == pytest.approx([s for _, s in theirs], rel=1e-6)


def test_boost_name_and_the_rest_of_the_query_are_kept(wrapped_index: Wrapped) -> None:
    w = wrapped_index
    client = wrap(w.engine.client, w.path, mode="identifiers", identifiers=SPANS)
    text = _texts(w, 1, IdentifierSettings(engine_query="span"))[0]
    plain = hits_of(_search(client, w, {"match": {"body": text}}))
    boosted = body_of(
        _search(
            client,
            w,
            {
                "bool": {
                    "should": [{"match": {"body": {"query": text, "boost": 2.0, "_name": "m"}}}],
                    "filter": [{"match": {"body": "err"}}],
                }
            },
        )
    )
    native_filter = {
        h["_id"]
        for h in body_of(
            w.engine.client.search(
                index=w.index,
                body={"query": {"match": {"body": "err"}}, "size": N_DOCS, "_source": False},
            )
        )["hits"]["hits"]
    }
    hits = boosted["hits"]["hits"]
    assert hits and all(h["_id"] in native_filter for h in hits)  # the filter stays native
    assert all(h.get("matched_queries") == ["m"] for h in hits)
    scores = dict(plain)
    for hit in hits:
        if hit["_id"] in scores:
            assert hit["_score"] == pytest.approx(2.0 * scores[hit["_id"]], rel=1e-5)


def test_min_score_and_multi_match_are_sent_untouched(wrapped_index: Wrapped) -> None:
    w = wrapped_index
    client = wrap(w.engine.client, w.path, mode="identifiers", identifiers=SPANS)
    text = _texts(w, 1, IdentifierSettings(engine_query="span"))[0]
    native_top = hits_of(
        w.engine.client.search(index=w.index, body={"query": {"match": {"body": text}}, "size": 30})
    )
    threshold = native_top[-1][1]
    for body in (
        {"query": {"match": {"body": text}}, "min_score": threshold},
        {"query": {"multi_match": {"query": text, "fields": ["body"]}}},
    ):
        full = {**body, "size": N_DOCS, "track_total_hits": True, "_source": False}
        native = w.engine.client.search(index=w.index, body=full)
        got = client.search(index=w.index, body=full)
        assert total_of(got) == total_of(native)
        assert [i for i, _ in hits_of(got)] == [i for i, _ in hits_of(native)]
        assert [s for _, s in hits_of(got)] == pytest.approx([s for _, s in hits_of(native)])


def test_a_pit_search_keeps_the_native_match_set_with_boost_scores(wrapped_index: Wrapped) -> None:
    """A point-in-time search in identifiers mode gets the boost rewrite: the native ids
    and total (pages of one PIT keep one meaning), the boost mode's scores."""
    w = wrapped_index
    client = w.engine.client
    es = w.engine.flavor == "elasticsearch"
    text = _texts(w, 1, IdentifierSettings(engine_query="span"))[0]
    pit = (
        str(body_of(client.open_point_in_time(index=w.index, keep_alive="1m"))["id"])
        if es
        else str(body_of(client.create_pit(index=w.index, keep_alive="1m"))["pit_id"])
    )
    try:
        body = {
            "query": {"match": {"body": text}},
            "size": N_DOCS,
            "_source": False,
            "track_total_hits": True,
            "pit": {"id": pit},
        }
        native = client.search(body=body)
        got = wrap(client, w.path, mode="identifiers", identifiers=SPANS).search(body=body)
        boost = wrap(client, w.path, mode="boost").search(body=body)
    finally:
        if es:
            client.close_point_in_time(id=pit)
        else:
            client.delete_pit(body={"pit_id": [pit]})
    assert total_of(got) == total_of(native) > 0
    assert {i for i, _ in hits_of(got)} == {i for i, _ in hits_of(native)}
    assert hits_of(got) == [(i, pytest.approx(s)) for i, s in hits_of(boost)]


def test_the_clause_limit_is_respected(wrapped_index: Wrapped) -> None:
    """A long query with every compound asked for would list thousands of terms: the
    wrapper lowers the budget until the whole query fits the engine's limit."""
    w = wrapped_index
    client = wrap(w.engine.client, w.path, mode="identifiers", identifiers=UNCAPPED)
    text = " ".join(load_query_texts()[:40])
    uncapped = w.plan_words(text, UNCAPPED)
    assert sum(len(t) for _, _, t in uncapped) > 2000
    for match in ({}, {"operator": "and"}):
        response = _search(client, w, {"match": {"body": {"query": text, **match}}})
        assert total_of(response) >= 0
    assert total_of(_search(client, w, {"match": {"body": text}})) > 0


def test_wrap_refuses_a_calibration_without_identifier_statistics(
    engine: Engine, wrapped_index: Wrapped, tmp_path: Path
) -> None:
    w = wrapped_index
    record, vocab = calibrate_with_vocabulary(engine, w.index, "body")
    save_with_vocabulary(record, vocab, tmp_path / "plain.json")
    with pytest.raises(UsageError) as raised:
        wrap(engine.client, tmp_path / "plain.json", mode="identifiers", identifiers=SPANS)
    assert "esqlog calibrate --vocabulary --identifiers" in str(raised.value)
    assert "\n" not in str(raised.value)
    with pytest.raises(UsageError, match="stats='auto'"):
        wrap(engine.client, w.path, mode="identifiers", stats="live")
    boost = wrap(engine.client, w.path, mode="boost")
    with pytest.raises(UsageError, match="mode='identifiers'"):
        boost.search(
            index=w.index, query={"match": {"body": "read file"}}, esqlog_mode="identifiers"
        )


def test_a_stale_snapshot_falls_back_to_boost_mode(engine: Engine, tmp_path: Path) -> None:
    """The identifier statistics are trusted as long as their snapshot: once the index has
    drifted from it, searches run in boost mode with live statistics (one warning)."""
    index = create_index(engine, shards=2)
    try:
        docs = [{"id": d["id"], "body": d["body"]} for d in load_docs(400)]
        bulk_index(engine, index, docs[:200])
        save_identifier_calibration(
            calibrate_identifiers(engine, index, "body"), tmp_path / "c.json"
        )
        bulk_index(engine, index, docs[200:])
        client = wrap(engine.client, tmp_path / "c.json", mode="identifiers", identifiers=SPANS)
        boost = wrap(engine.client, tmp_path / "c.json", stats="live")
        body = {"query": {"match": {"body": "read the file"}}, "size": 20, "track_total_hits": True}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = client.search(index=index, body=body)
        assert any("--identifiers" in str(c.message) for c in caught)
        expected = boost.search(index=index, body=body)
        assert (
            total_of(got)
            == total_of(expected)
            == total_of(engine.client.search(index=index, body=body))
        )
        assert [i for i, _ in hits_of(got)] == [i for i, _ in hits_of(expected)]
    finally:
        call(engine, "DELETE", f"/{index}")


def test_per_shard_search_pages_keeps_the_match_set_and_falls_back_where_it_must(
    wrapped_index: Wrapped,
) -> None:
    """One request per shard (the default on 3 shards): from/size page the merged hits;
    with every compound listed the match set (ids, total) is the one dfs query's; a body
    with aggregations keeps the per-shard hits and gets the aggregations of that same
    match set (one more request in the msearch); the response is the client's own type."""
    w = wrapped_index
    fan = wrap(w.engine.client, w.path, mode="identifiers", identifiers=UNCAPPED)
    one = wrap(
        w.engine.client,
        w.path,
        mode="identifiers",
        identifiers=IdentifierSettings(
            engine_query="span", budget=100_000, span_max_df=1.0, fan_out=False
        ),
    )
    text = _texts(w, 3)[2]
    query = {"match": {"body": text}}
    full = hits_of(_search(fan, w, query, size=30))
    page = fan.search(
        index=w.index, body={"query": query, "from": 10, "size": 10, "_source": False}
    )
    assert hits_of(page) == full[10:20]
    assert type(page) is type(w.engine.client.search(index=w.index, body={"size": 0}))
    everything = _search(fan, w, query, size=N_DOCS)
    single = _search(one, w, query, size=N_DOCS)
    assert total_of(everything) == total_of(single) > 30
    assert {i for i, _ in hits_of(everything)} == {i for i, _ in hits_of(single)}
    aggs = {"query": query, "size": 5, "aggs": {"n": {"filter": {"term": {"body": "err"}}}}}
    got = body_of(fan.search(index=w.index, body=aggs))
    expected = body_of(one.search(index=w.index, body=aggs))
    assert got["aggregations"] == expected["aggregations"]
    assert [h["_id"] for h in got["hits"]["hits"]] == [i for i, _ in full[:5]]


PAGES = [(0, 5), (5, 5), (10, 10), (20, 5), (3, 17), (25, 30), (40, 1)]


def test_paging_through_the_per_shard_search_follows_the_oracle_order(
    wrapped_index: Wrapped,
) -> None:
    """Every page of the fan-out (3 shards, one request each) holds the hits the oracle
    ranks there: scores of page (from, size) equal the oracle's ranks from .. from + size,
    and its ids are that slice of the one full answer. A shard asked for ``size`` hits
    instead of ``from + size`` returns too few for a late page (from=20, size=5: at most
    15 hits merged)."""
    w = wrapped_index
    settings = IdentifierSettings(engine_query="span", budget=100_000, span_max_df=1.0)
    client = wrap(w.engine.client, w.path, mode="identifiers", identifiers=settings)
    alone = w.common_words(settings)
    checked = 0
    for text in _texts(w, 12, settings):
        words = w.plan_words(text, settings)
        matching = w.oracle.matching(words)
        if len(matching) < 60:
            continue
        q = plan_identifier_query(text, w.stats, w.vocab.df_of).q
        ranked = sorted(
            (
                w.oracle.score(d, words, q, grouped=False, alone=alone, local=True) * w.scale
                for d in matching
            ),
            reverse=True,
        )
        query = {"match": {"body": text}}
        full = hits_of(_search(client, w, query, size=80))
        for start, size in PAGES:
            page = hits_of(
                client.search(
                    index=w.index,
                    body={"query": query, "from": start, "size": size, "_source": False},
                )
            )
            assert [i for i, _ in page] == [i for i, _ in full[start : start + size]], (
                text,
                start,
                size,
            )
            assert [s for _, s in page] == pytest.approx(ranked[start : start + size], rel=1e-4), (
                text,
                start,
                size,
            )
        checked += 1
        if checked == 3:
            break
    assert checked == 3


def test_a_failing_per_shard_search_fails_as_the_engine_fails_it(wrapped_index: Wrapped) -> None:
    """A request the engine refuses (a malformed timeout) fails on every shard: the search
    is sent once more as the one query, and the caller gets the client's own exception."""
    w = wrapped_index
    client = wrap(w.engine.client, w.path, mode="identifiers", identifiers=SPANS)
    body = {"query": {"match": {"body": "read file"}}, "timeout": "soon"}
    with pytest.raises(Exception) as native:
        w.engine.client.search(index=w.index, body=body)
    with pytest.raises(Exception) as wrapped:
        client.search(index=w.index, body=body)
    assert type(wrapped.value) is type(native.value)
