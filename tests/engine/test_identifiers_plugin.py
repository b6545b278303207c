"""The esqlog-terms engine plugin (plugins/esqlog-terms) and the identifiers mode through it.

Both test nodes start with the plugin (scripts/engines/engine.sh builds it). Its query,
``esqlog_terms``, is a Lucene SynonymQuery: one BM25 saturation of the listed terms' summed
tf with the idf of their largest df, and with ``"idf": false`` no idf at all (boost times
the saturation, the field's own BM25 and length norm). The identifiers mode sends every
group that way, boosted by its word's weight, as ONE plain query: it must score every
document exactly as the span query does, sent to each shard on its own with boosts from
that shard's statistics. Here the whole match set of each query (ids, hits.total and
scores) is compared between the two through ``esqlog.wrap``, on 1 and 3 shards. Bad input
gets the engine's 400.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from esqlog.engine.client import Engine
from esqlog.engine.failures import error_status
from esqlog.identifiers.calibrate import calibrate_identifiers, save_identifier_calibration
from esqlog.identifiers.settings import IdentifierSettings
from esqlog.wrapper import wrap
from tests.support.calibrated_go import N_DOCS, calibrated_index, mappings
from tests.support.engines import bulk_index, call, create_index
from tests.support.oracle import body_of, hits_of, load_docs, load_query_texts, total_of

QUERIES = 20
MAPPINGS = mappings()
PLUGIN = IdentifierSettings(engine_query="plugin")
#: spans asked for by name: the default, "auto", takes the plugin these nodes have
SPANS = IdentifierSettings(engine_query="span")


@dataclass
class Calibrated:
    engine: Engine
    index: str
    shards: int
    path: Path


@pytest.fixture(scope="module", params=[1, 3], ids=lambda s: f"{s}-shards")
def calibrated(
    engine: Engine, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Calibrated]:
    shards = int(request.param)
    with calibrated_index(engine, shards, tmp_path_factory.mktemp("plugin")) as (index, path):
        yield Calibrated(engine, index, shards, path)


def _texts() -> list[str]:
    return [t for t in load_query_texts() if t.isascii()][:QUERIES]


def _body(text: str, **extra: Any) -> dict[str, Any]:
    return {
        "query": {"match": {"body": text}},
        "size": N_DOCS,
        "track_total_hits": True,
        "_source": False,
        **extra,
    }


def _query(engine: Engine, index: str, query: dict[str, Any], **params: Any) -> Any:
    return call(
        engine, "POST", f"/{index}/_search", {"query": query, "explain": True, "size": 5}, **params
    )


def test_the_plugin_is_installed_and_registered(engine: Engine) -> None:
    plugins = call(engine, "GET", "/_cat/plugins", format="json")
    assert "esqlog-terms" in {p["component"] for p in plugins}
    index = create_index(engine, shards=1, mappings=MAPPINGS)
    try:
        bulk_index(
            engine,
            index,
            [
                {"id": 1, "body": "read readFile readFile x"},
                {"id": 2, "body": "read y z"},
                {"id": 3, "body": "w"},
            ],
        )
        found = _query(
            engine,
            index,
            {"esqlog_terms": {"field": "body", "terms": ["read", "readfile"], "boost": 2.0}},
        )["hits"]
        assert found["total"]["value"] == 2
        # one saturation of the summed tf (3 in doc 1), the idf of the LARGEST df (2 of 3)
        text = str(found["hits"][0]["_explanation"])
        assert "Synonym(body:read body:readfile)" in text and "freq=3.0" in text
        assert "'value': 2, 'description': 'n, number of documents containing term'" in text
    finally:
        call(engine, "DELETE", f"/{index}")


def test_under_dfs_the_largest_df_is_the_index_wide_one(engine: Engine) -> None:
    """Over the terms the scoring shard holds, SynonymQuery takes the dfs statistics: a
    term held on another shard only does not count (as a span's idf sum leaves it out)."""
    index = create_index(engine, shards=2, mappings=MAPPINGS)
    try:
        docs = [
            {"id": k, "body": "alpha beta" if k % 2 else "alpha gamma gamma"} for k in range(40)
        ]
        bulk_index(engine, index, docs)
        query = {"esqlog_terms": {"field": "body", "terms": ["alpha", "gamma"]}}
        found = _query(engine, index, query, search_type="dfs_query_then_fetch")["hits"]
        assert found["total"]["value"] == 40
        explained = str(found["hits"][0]["_explanation"])
        assert "'value': 40, 'description': 'n, number of documents containing term'" in explained
        assert "'value': 40, 'description': 'N, total number of documents with field'" in explained
    finally:
        call(engine, "DELETE", f"/{index}")


def test_without_idf_the_score_is_the_boost_times_the_saturation(engine: Engine) -> None:
    """``"idf": false``: the same score on shards whose df differ, one term or several;
    with the idf, the shard holding the term more rarely scores it higher."""
    index = create_index(engine, shards=2, mappings=MAPPINGS)
    try:
        docs = [{"id": k, "body": ("alpha beta" if k < 2 else "gamma beta")} for k in range(20)]
        for doc in docs:  # alpha on both shards, but 1 of 19 documents on one, 1 of 1 on the other
            call(
                engine,
                "PUT",
                f"/{index}/_doc/{doc['id']}",
                doc,
                routing="a" if doc["id"] == 0 else "b",
                refresh="true",
            )
        for terms in (["alpha"], ["alpha", "delta"]):
            scored = {}
            for idf in (True, False):
                found = _query(
                    engine,
                    index,
                    {"esqlog_terms": {"field": "body", "terms": terms, "boost": 2.0, "idf": idf}},
                )["hits"]
                assert found["total"]["value"] == 2
                scored[idf] = sorted(h["_score"] for h in found["hits"])
            assert scored[True][1] > 1.01 * scored[True][0], scored
            low, high = scored[False]
            assert low == pytest.approx(high, rel=1e-6), scored
            # 2.0 * freq / (freq + k1 * (1 - b + b * dl / avgdl)) at freq 1, dl = avgdl = 2,
            # times the (1 + k1) Elasticsearch's BM25 keeps
            plain = 2.0 * 1 / (1 + 1.2)
            assert low == pytest.approx(plain, rel=1e-3) or low == pytest.approx(
                plain * 2.2, rel=1e-3
            ), scored
    finally:
        call(engine, "DELETE", f"/{index}")


def test_without_idf_under_dfs_avgdl_is_the_index_wide_one(engine: Engine) -> None:
    """Under dfs_query_then_fetch the length norm divides by the whole index's average length
    (the dfs phase's field statistics), as the engine's own queries do: two shards of short
    and long documents score as one shard holding them all, and unlike without dfs."""
    docs = [
        {"id": k, "body": "alpha beta" if k % 2 else "alpha gamma delta epsilon zeta eta"}
        for k in range(20)
    ]
    query = {"esqlog_terms": {"field": "body", "terms": ["alpha", "beta"], "idf": False}}
    scores = {}
    for shards, search_type in (
        (1, "query_then_fetch"),
        (2, "dfs_query_then_fetch"),
        (2, "query_then_fetch"),
    ):
        index = create_index(engine, shards=shards, mappings=MAPPINGS)
        try:
            for doc in docs:  # the short documents on one shard, the long on the other
                call(
                    engine,
                    "PUT",
                    f"/{index}/_doc/{doc['id']}",
                    doc,
                    routing="a" if doc["id"] % 2 else "b",
                )
            call(engine, "POST", f"/{index}/_refresh")
            found = call(
                engine,
                "POST",
                f"/{index}/_search",
                {"query": query, "size": 20},
                search_type=search_type,
            )["hits"]["hits"]
            scores[shards, search_type] = {h["_id"]: h["_score"] for h in found}
        finally:
            call(engine, "DELETE", f"/{index}")
    single, dfs = scores[1, "query_then_fetch"], scores[2, "dfs_query_then_fetch"]
    assert single.keys() == dfs.keys() and len(single) == 20
    for doc, score in single.items():
        assert dfs[doc] == pytest.approx(score, rel=1e-4), doc
    local = scores[2, "query_then_fetch"]
    assert any(abs(local[d] - single[d]) > 1e-3 * single[d] for d in single), local


def _all_hits(client: Any, index: str, body: dict[str, Any]) -> tuple[int, dict[str, float]]:
    answer = client.search(index=index, body=body)
    if "sort" in body:  # sorted hits carry no score
        return total_of(answer), {h["_id"]: 0.0 for h in body_of(answer)["hits"]["hits"]}
    return total_of(answer), dict(hits_of(answer))


@pytest.mark.parametrize("path", ["plain", "sort"])
def test_plugin_scores_equal_span_scores(calibrated: Calibrated, path: str) -> None:
    """The same match set, hits.total and (all of the match set's) scores with the plugin
    as with spans sent per shard (the fan-out on 3 shards), and the same set under a sort
    (its scores are not returned)."""
    c = calibrated
    spans = wrap(c.engine.client, c.path, mode="identifiers", identifiers=SPANS)
    plugin = wrap(c.engine.client, c.path, mode="identifiers", identifiers=PLUGIN)
    extra = {"sort": [{"key": "asc"}]} if path == "sort" else {}
    compared = 0
    for text in _texts():
        total, expected = _all_hits(spans, c.index, _body(text, **extra))
        got_total, got = _all_hits(plugin, c.index, _body(text, **extra))
        assert got_total == total, text
        assert got.keys() == expected.keys(), text
        if path == "plain":
            for doc, score in expected.items():
                assert got[doc] == pytest.approx(score, rel=1e-4), (text, doc)
        compared += len(expected)
    assert compared > 5 * QUERIES


def test_the_plugin_sends_one_plain_search(calibrated: Calibrated) -> None:
    """One request per search, without dfs or a fan-out (its scores need no shard's
    statistics), with or without ``fan_out``; the same hits either way."""
    c = calibrated
    sent: list[tuple[str, Any]] = []
    transport = c.engine.client.transport
    perform = transport.perform_request

    def spy(method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        sent.append((url, kwargs.get("params") or (args[1] if len(args) > 1 else None)))
        return perform(method, url, *args, **kwargs)

    answers = []
    transport.perform_request = spy  # type: ignore[method-assign]
    try:
        for fan_out in (True, False):
            settings = IdentifierSettings(fan_out=fan_out, engine_query="plugin")
            client = wrap(c.engine.client, c.path, mode="identifiers", identifiers=settings)
            client.search(index=c.index, body=_body(_texts()[0]))  # resolves the index first
            sent.clear()
            answers.append(_all_hits(client, c.index, _body(_texts()[1])))
            searches = [(url, params) for url, params in sent if "_search" in url]
            assert len(searches) == 1 and "_msearch" not in searches[0][0], sent
            assert "dfs" not in str(searches[0][1]), searches
    finally:
        transport.perform_request = perform  # type: ignore[method-assign]
    assert answers[0] == answers[1]


def _status(engine: Engine, index: str, inner: dict[str, Any]) -> tuple[int | None, str]:
    try:
        call(engine, "POST", f"/{index}/_search", {"query": {"esqlog_terms": inner}})
    except Exception as exc:  # the engine's answer: the status and its reason
        return error_status(exc), str(exc)
    return 200, ""


def test_bad_input_is_the_engines_400_with_a_reason(engine: Engine) -> None:
    index = create_index(engine, shards=1, mappings=MAPPINGS)
    try:
        too_many = [f"t{k}" for k in range(200_000)]
        cases = {
            "requires a non-empty [field]": {"terms": ["a"]},
            "requires a non-empty [terms] array": {"field": "body", "terms": []},
            "more than the engine's max clause count": {"field": "body", "terms": too_many},
            "must hold strings only": {"field": "body", "terms": ["a", 3]},
            "does not support [size]": {"field": "body", "terms": ["a"], "size": 3},
            "does not support [idf]": {"field": "body", "terms": ["a"], "idf": "no"},
            "[boost] must be 0 or more, got [-1.5]": {
                "field": "body",
                "terms": ["a"],
                "boost": -1.5,
            },
        }
        for reason, inner in cases.items():
            status, message = _status(engine, index, inner)
            assert status == 400 and reason in message, (reason, status, message[:300])
        assert _status(engine, index, {"field": "body", "terms": ["a"]})[0] == 200
        body = body_of(
            engine.client.search(
                index=index,
                body={"query": {"esqlog_terms": {"field": "nothing", "terms": ["a", "b"]}}},
            )
        )  # an unmapped field matches nothing
        assert body["hits"]["total"]["value"] == 0
    finally:
        call(engine, "DELETE", f"/{index}")


def _descriptions(node: Any) -> str:
    """The Lucene queries a profile lists, as their descriptions (toString)."""
    if isinstance(node, list):
        return " ".join(_descriptions(child) for child in node)
    if not isinstance(node, dict):
        return ""
    own = node["description"] if isinstance(node.get("description"), str) else ""
    return " ".join([own, *(_descriptions(v) for v in node.values())])


def test_the_wrapper_sends_synonym_queries_not_spans(calibrated: Calibrated) -> None:
    """What the engine runs (its profile): SynonymQuery with the plugin, no span left."""
    c = calibrated
    spans = wrap(c.engine.client, c.path, mode="identifiers", identifiers=SPANS)
    plugin = wrap(c.engine.client, c.path, mode="identifiers", identifiers=PLUGIN)
    text = "read the file and close the stream"
    seen = {}
    for name, client in (("spans", spans), ("plugin", plugin)):
        answer = body_of(client.search(index=c.index, body=_body(text, profile=True)))
        seen[name] = _descriptions(answer["profile"])
    assert "spanOr(" in seen["spans"] and "Synonym(" not in seen["spans"]
    assert "Synonym(body:" in seen["plugin"] and "spanOr(" not in seen["plugin"]


def _scored(engine: Engine, index: str, query: dict[str, Any]) -> tuple[int, dict[str, float]]:
    answer = call(
        engine,
        "POST",
        f"/{index}/_search",
        {"query": query, "size": 100, "track_total_hits": True, "_source": False},
    )
    return total_of(answer), dict(hits_of(answer))


def _fresh(
    engine: Engine, docs: list[dict[str, Any]], query: dict[str, Any]
) -> tuple[int, dict[str, float]]:
    """The query's answer on a new index of ``docs``: its first search, read from the
    index itself (the postings cache holds nothing of a segment no search has read)."""
    index = create_index(engine, shards=1, mappings=MAPPINGS)
    try:
        bulk_index(engine, index, docs)
        return _scored(engine, index, query)
    finally:
        call(engine, "DELETE", f"/{index}")


def test_segments_deletions_and_merges_change_no_match_and_no_score(engine: Engine) -> None:
    """A repeated search answers the same; a new segment, deleted documents and a merge into
    a new segment answer as an index that never saw the query (the plugin keeps nothing
    between searches; a node that still names the retired postings-cache setting starts)."""
    words = ["readfile", "writefile", "closefile", "other", "text"]
    docs = [
        {"id": k, "body": " ".join(words[(k + j) % 5] for j in range(1 + k % 4))} for k in range(60)
    ]
    query = {
        "esqlog_terms": {
            "field": "body",
            "terms": ["readfile", "writefile", "absentterm"],
            "boost": 2.0,
            "idf": False,
        }
    }
    index = create_index(engine, shards=1, mappings=MAPPINGS)
    try:
        bulk_index(engine, index, docs[:40])
        cold = _scored(engine, index, query)
        assert cold[0] > 10 and cold == _scored(engine, index, query)  # warm: the same
        bulk_index(engine, index, docs[40:])  # a second segment beside the cached one
        both = _scored(engine, index, query)
        expected = _fresh(engine, docs, query)
        assert both[0] == expected[0] and both[1].keys() == expected[1].keys()
        for doc, score in expected[1].items():
            assert both[1][doc] == pytest.approx(score, rel=1e-6), doc
        gone = {str(k) for k in range(0, 60, 3)}
        for doc in gone:
            call(engine, "DELETE", f"/{index}/_doc/{doc}")
        call(engine, "POST", f"/{index}/_refresh")
        left = _scored(engine, index, query)  # deletions: the collector's live docs
        assert left[1].keys() == both[1].keys() - gone and left[0] == both[0] - len(
            both[1].keys() & gone
        )
        for doc, score in left[1].items():  # the statistics still count deleted documents
            assert score == pytest.approx(both[1][doc], rel=1e-6), doc
        call(engine, "POST", f"/{index}/_forcemerge", max_num_segments=1)
        call(engine, "POST", f"/{index}/_refresh")
        merged = _scored(engine, index, query)
        expected = _fresh(engine, [d for d in docs if str(d["id"]) not in gone], query)
        assert merged[0] == expected[0] and merged[1].keys() == expected[1].keys()
        for doc, score in expected[1].items():
            assert merged[1][doc] == pytest.approx(score, rel=1e-6), doc
    finally:
        call(engine, "DELETE", f"/{index}")


def test_deleted_and_updated_documents_keep_the_match_set_and_the_scores(
    engine: Engine, tmp_path: Path
) -> None:
    """On an index with deleted and updated documents, not merged (the postings still hold
    them, the statistics still count them), the identifiers mode through the plugin, asked
    once before the changes and so with its term states cached, returns the ids, hits.total
    and scores of the same mode through the engine's own span queries (its match set is the
    split stream's, not the plain match's), and no deleted document."""
    with calibrated_index(engine, 1, tmp_path) as (index, path):
        spans = wrap(engine.client, path, mode="identifiers", identifiers=SPANS)
        plugin = wrap(engine.client, path, mode="identifiers", identifiers=PLUGIN)
        texts = _texts()
        for text in texts:  # the node's caches warmed on the segments before the changes
            _all_hits(plugin, index, _body(text))
        docs = {str(d["id"]): d["body"] for d in load_docs(N_DOCS)}
        ids = sorted(docs)
        gone = set(ids[::7])
        updated = {
            i: docs[ids[(k * 11 + 500) % N_DOCS]] for k, i in enumerate(ids[3::11]) if i not in gone
        }
        for doc in gone:
            call(engine, "DELETE", f"/{index}/_doc/{doc}")
        bulk_index(engine, index, [{"id": i, "body": b, "key": i} for i, b in updated.items()])
        segments = call(engine, "GET", f"/{index}/_stats/docs")["_all"]["primaries"]["docs"]
        assert segments["deleted"] > 0 and segments["count"] == N_DOCS - len(gone)
        # calibrated anew for the changed index (else the wrapper searches in boost mode);
        # the segments, and the term states cached on them, are the same
        save_identifier_calibration(calibrate_identifiers(engine, index, "body"), path)
        spans = wrap(engine.client, path, mode="identifiers", identifiers=SPANS)
        plugin = wrap(engine.client, path, mode="identifiers", identifiers=PLUGIN)
        compared = hit_updated = 0
        for text in texts:
            total, expected = _all_hits(spans, index, _body(text))
            got_total, got = _all_hits(plugin, index, _body(text))
            assert got_total == total == len(expected), text
            assert got.keys() == expected.keys(), text
            assert not got.keys() & gone, text
            for doc, score in expected.items():
                assert got[doc] == pytest.approx(score, rel=1e-4), (text, doc)
            compared += len(expected)
            hit_updated += len(got.keys() & updated.keys())
        assert compared > 5 * len(texts) and hit_updated > 0
