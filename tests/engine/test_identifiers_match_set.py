"""One identifiers-mode query, one match set and one ranking, whatever the options and API.

A small index of real Go functions (1, 3 and 6 shards, both engines), calibrated with
--vocabulary --identifiers and wrapped as an application would. The same match query is
searched plainly and with each option that used to send it another way (aggregations, a
sort, collapse, rescore, profile, routing, a custom preference, request_cache) and through
``msearch``: ``hits.total`` and the ids must be those of the plain search, the scores too
where the option does not rank (a sort ranks: there the set must be the same). The
aggregations must count the documents the hits come from.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from esqlog.engine.client import Engine
from esqlog.identifiers.calibrate import calibrate_identifiers, save_identifier_calibration
from esqlog.wrapper import wrap
from tests.support.calibrated_go import N_DOCS, calibrated_index
from tests.support.engines import bulk_index, call, create_index
from tests.support.oracle import body_of, hits_of, load_docs, load_query_texts, total_of

QUERIES = 12
SIZE = 20


@dataclass
class Calibrated:
    engine: Engine
    index: str
    shards: int
    path: Path

    def routing_of_every_shard(self) -> str:
        """Routing values that together reach every shard (so the match set is the whole
        index's), found with the engine's own _search_shards."""
        found: dict[int, str] = {}
        for value in (str(k) for k in range(500)):
            answer = call(self.engine, "GET", f"/{self.index}/_search_shards", routing=value)
            found.setdefault(int(answer["shards"][0][0]["shard"]), value)
            if len(found) == self.shards:
                return ",".join(found.values())
        raise AssertionError(f"no routing values reach all {self.shards} shards: {found}")


@pytest.fixture(scope="module", params=[1, 3, 6], ids=lambda s: f"{s}-shards")
def calibrated(
    engine: Engine, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Calibrated]:
    shards = int(request.param)
    with calibrated_index(engine, shards, tmp_path_factory.mktemp("match-set"), ("key", "pkg")) as (
        index,
        path,
    ):
        yield Calibrated(engine, index, shards, path)


def _texts() -> list[str]:
    return [t for t in load_query_texts() if t.isascii()][:QUERIES]


def _body(text: str, size: int = SIZE, **extra: Any) -> dict[str, Any]:
    return {
        "query": {"match": {"body": text}},
        "size": size,
        "track_total_hits": True,
        "_source": False,
        **extra,
    }


RESCORE = {
    "window_size": 50,
    "query": {"rescore_query": {"match_all": {}}, "query_weight": 1.0, "rescore_query_weight": 0.0},
}
AGGS = {"all": {"filter": {"match_all": {}}}, "pkgs": {"terms": {"field": "pkg", "size": 3}}}
#: option -> (extra body, extra keywords); routing is filled in per index
VARIANTS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "aggs": ({"aggs": AGGS}, {}),
    "aggs-reading-scores": (
        {
            "aggs": {
                **AGGS,
                "best": {"top_hits": {"size": 1, "_source": False, "track_scores": True}},
            }
        },
        {},
    ),
    "collapse": ({"collapse": {"field": "key"}}, {}),
    "rescore": ({"rescore": RESCORE}, {}),
    "profile": ({"profile": True}, {}),
    "preference": ({}, {"preference": "user-42"}),
    "request_cache": ({}, {"request_cache": True}),
    "routing": ({}, {"routing": None}),
}


def _assert_same(got: Any, plain: Any, what: str) -> None:
    assert total_of(got) == total_of(plain), what
    assert [i for i, _ in hits_of(got)] == [i for i, _ in hits_of(plain)], what
    assert [s for _, s in hits_of(got)] == pytest.approx(
        [s for _, s in hits_of(plain)], rel=1e-5
    ), what


@pytest.mark.parametrize("option", list(VARIANTS))
def test_an_option_keeps_the_match_set_and_the_ranking(calibrated: Calibrated, option: str) -> None:
    c = calibrated
    client = wrap(c.engine.client, c.path, mode="identifiers")
    extra_body, keywords = VARIANTS[option]
    if "routing" in keywords:
        keywords = {"routing": c.routing_of_every_shard()}
    matched = 0
    for text in _texts():
        plain = client.search(index=c.index, body=_body(text))
        got = client.search(index=c.index, body=_body(text, **extra_body), **keywords)
        _assert_same(got, plain, f"{option}: {text!r}")
        matched += total_of(plain) > SIZE
        answer = body_of(got)
        if option.startswith("aggs"):  # the facets count the documents the hits come from
            assert answer["aggregations"]["all"]["doc_count"] == total_of(plain), text
            buckets = answer["aggregations"]["pkgs"]["buckets"]
            assert sum(b["doc_count"] for b in buckets) <= total_of(plain)
        if option == "aggs-reading-scores":  # scored by the one dfs query, same match set
            best = answer["aggregations"]["best"]["hits"]
            assert total_of({"hits": best}) == total_of(plain), text
            assert best["hits"][0]["_score"] > 0, text
        if option == "profile":
            assert len(answer["profile"]["shards"]) == c.shards, text
    assert matched >= QUERIES // 2  # the queries match more than a page: the set can differ


def test_a_sort_keeps_the_match_set(calibrated: Calibrated) -> None:
    c = calibrated
    client = wrap(c.engine.client, c.path, mode="identifiers")
    for text in _texts():
        plain = client.search(index=c.index, body=_body(text, size=N_DOCS))
        got = client.search(index=c.index, body=_body(text, size=N_DOCS, sort=[{"key": "asc"}]))
        assert total_of(got) == total_of(plain) > 0, text
        ids = [h["_id"] for h in body_of(got)["hits"]["hits"]]
        assert set(ids) == {i for i, _ in hits_of(plain)}, text
        assert ids == sorted(ids), text  # sorted by key, which is the id


@pytest.mark.parametrize("api", ["msearch", "msearch-header-index"])
def test_msearch_answers_as_search(calibrated: Calibrated, api: str) -> None:
    """Each body of an msearch is the search it would be on its own: the same match set,
    ids and scores (also beside a body with aggregations in the same batch)."""
    c = calibrated
    client = wrap(c.engine.client, c.path, mode="identifiers")
    texts = _texts()
    pairs: list[Any] = []
    for text in texts:
        pairs += [{"index": c.index}, _body(text)]
        pairs += [{"index": c.index}, _body(text, aggs=AGGS)]
    key = "searches" if c.engine.flavor == "elasticsearch" else "body"
    batch: Callable[[], Any] = (
        (lambda: client.msearch(**{key: pairs}))
        if api == "msearch"
        else (
            lambda: client.msearch(
                index=c.index,
                **{key: [{} if isinstance(p, dict) and "index" in p else p for p in pairs]},
            )
        )
    )
    responses = body_of(batch())["responses"]
    assert len(responses) == 2 * len(texts)
    for k, text in enumerate(texts):
        plain = client.search(index=c.index, body=_body(text))
        _assert_same(responses[2 * k], plain, f"msearch: {text!r}")
        _assert_same(responses[2 * k + 1], plain, f"msearch with aggs: {text!r}")
        assert responses[2 * k + 1]["aggregations"]["all"]["doc_count"] == total_of(plain), text


#: Paging and hit counts the fan-out would answer otherwise than the engine (negative or
#: boolean from and size, a track_total_hits the merge cannot cap by), and the strings the
#: mode reads as booleans: the identifiers mode decides in one place how such a body goes.
#: A page beyond the result window is refused by the shards as by the whole index.
ODD_PAGING: dict[str, dict[str, Any]] = {
    "from -1": {"from": -1},
    "size -1": {"size": -1},
    "from true": {"from": True},
    "from beyond the result window": {"from": 10_000},
    "track_total_hits -1": {"track_total_hits": -1},
    "track_total_hits 'true'": {"track_total_hits": "true"},
    "track_total_hits 'false'": {"track_total_hits": "false"},
    "track_total_hits 'TRUE'": {"track_total_hits": "TRUE"},
}


def _outcome(send: Callable[[], Any], entry: Callable[[Any], Any]) -> tuple[Any, ...]:
    """What a request answers: the engine's error status (of the whole request, or of the
    body's entry), or hits.total and the ids in order."""
    from esqlog.engine.failures import error_status

    try:
        answer = body_of(entry(send()))
    except Exception as exc:
        if error_status(exc) is None:  # not the engine's answer: esqlog's own failure
            raise
        return ("error", error_status(exc))
    if "error" in answer:
        return ("error", answer.get("status"))
    return ("hits", answer["hits"].get("total"), [h["_id"] for h in answer["hits"]["hits"]])


@pytest.mark.parametrize("calibrated", [3], indirect=True, ids=["3-shards"])
@pytest.mark.parametrize("paging", list(ODD_PAGING))
def test_msearch_pages_as_search_does(calibrated: Calibrated, paging: str) -> None:
    """A body whose paging the fan-out cannot honour answers through msearch exactly as
    through search (the same hits.total and ids, or the same engine error), where msearch
    used to fan it out and page or count it its own way (from -1 answered no hits instead
    of the engine's 400, track_total_hits "true" raised ValueError)."""
    c = calibrated
    client = wrap(c.engine.client, c.path, mode="identifiers")
    key = "searches" if c.engine.flavor == "elasticsearch" else "body"
    for text in _texts()[:4]:
        body = _body(text, **ODD_PAGING[paging])
        expected = _outcome(
            lambda b=body: client.search(index=c.index, body=dict(b)), lambda answer: answer
        )
        got = _outcome(
            lambda b=body: client.msearch(**{key: [{"index": c.index}, dict(b)]}),
            lambda answer: body_of(answer)["responses"][0],
        )
        assert got == expected, (paging, text)


def test_a_recreated_index_is_noticed_at_once(engine: Engine, tmp_path: Path) -> None:
    """Deleted, then recreated under its name with another shard count: the engine's
    index_not_found and the first answer of the new index drop the cached resolution, so
    the very next search reads all the new shards, in boost mode (the statistics are of
    another index), with one warning that says the index is another one."""
    import warnings

    from tests.support.engines import client_errors

    docs = [{"id": d["id"], "body": d["body"]} for d in load_docs(300)]
    index = create_index(engine, shards=3)
    try:
        bulk_index(engine, index, docs)
        path = tmp_path / "c.json"
        save_identifier_calibration(calibrate_identifiers(engine, index, "body"), path)
        client = wrap(engine.client, path, mode="identifiers")
        body = _body(_texts()[0], size=N_DOCS)
        assert body_of(client.search(index=index, body=body))["_shards"]["total"] == 3
        call(engine, "DELETE", f"/{index}")
        with pytest.raises(client_errors(engine.flavor)[0]):
            client.search(index=index, body=body)
        call(
            engine,
            "PUT",
            f"/{index}",
            {"settings": {"number_of_shards": 2, "number_of_replicas": 0}},
        )
        bulk_index(engine, index, docs)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = client.search(index=index, body=body)
        messages = [str(c.message) for c in caught if issubclass(c.category, RuntimeWarning)]
        assert any("another index now" in m for m in messages), messages
        assert not any("changed by 0%" in m for m in messages), messages
        assert body_of(got)["_shards"]["total"] == 2
        native = engine.client.search(index=index, body=body)  # boost keeps its match set
        assert total_of(got) == total_of(native) > 0
        assert {i for i, _ in hits_of(got)} == {i for i, _ in hits_of(native)}
    finally:
        call(engine, "DELETE", f"/{index}", ignore_unavailable="true")
