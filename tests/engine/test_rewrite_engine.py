"""Property test on real engines: any query body either passes through unchanged or becomes
a body the engine accepts, with exactly the same set of matching documents."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from esqlog.wrapper import wrap
from tests.support.oracle import Corpus, body_of

WORDS = [
    "read",
    "file",
    "error",
    "returns",
    "the",
    "buffer",
    "writer",
    "string",
    "new",
    "close",
    "http",
    "request",
    "readfile",
    "parse",
    "value",
    "zzznope",
    "of",
    "len",
]
FIELDS = ["body", "title"]


texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join) | st.sampled_from(
    ["", "!!!", "read_file", "ReadFile reads the named file", "a.b.c", "x1 y2"]
)
msm = st.none() | st.sampled_from([1, 2, "2", "-1", "50%", "75%", "1<-1", "2<75%"])


@st.composite
def match(draw: st.DrawFn) -> dict[str, Any]:
    spec: dict[str, Any] = {"query": draw(texts)}
    if draw(st.booleans()):
        spec["operator"] = draw(st.sampled_from(["or", "and", "OR", "AND"]))
    m = draw(msm)
    if m is not None:
        spec["minimum_should_match"] = m
    if draw(st.booleans()):
        spec["boost"] = draw(st.sampled_from([0.5, 1.0, 2.0]))
    if draw(st.integers(0, 9)) == 0:
        spec["fuzziness"] = "AUTO"  # not rewritable: must pass through
    return {"match": {draw(st.sampled_from(FIELDS)): spec}}


@st.composite
def multi_match(draw: st.DrawFn) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "query": draw(texts),
        "fields": draw(st.sampled_from([["body"], ["body", "title^2"], ["title", "body^0.5"]])),
        "type": draw(st.sampled_from(["best_fields", "most_fields", "cross_fields"])),
    }
    if draw(st.booleans()):
        spec["operator"] = draw(st.sampled_from(["or", "and"]))
    m = draw(msm)
    if m is not None:
        spec["minimum_should_match"] = m
    if draw(st.booleans()):
        spec["tie_breaker"] = draw(st.sampled_from([0.0, 0.3, 1.0]))
    return {"multi_match": spec}


leaf = (
    match()
    | multi_match()
    | st.just({"term": {"pkg": "bufio"}})
    | st.just({"range": {"seq": {"gte": 100}}})
)


def _bool(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {},
        optional={
            "must": st.lists(children, max_size=2),
            "should": st.lists(children, max_size=3),
            "filter": st.lists(leaf, max_size=1),
            "must_not": st.lists(leaf, max_size=1),
            "minimum_should_match": st.sampled_from([0, 1, "1"]),
        },
    ).map(lambda spec: {"bool": spec})


queries = st.recursive(leaf, _bool, max_leaves=6)


def _matching_ids(corpus: Corpus, client: Any, query: dict[str, Any], **kw: Any) -> set[str]:
    body = {
        "query": query,
        "size": len(corpus.docs) + 10,
        "_source": False,
        "track_total_hits": True,
    }
    response = body_of(client.search(index=corpus.index, body=body, **kw))
    hits = response["hits"]["hits"]
    assert response["hits"]["total"]["value"] == len(hits)
    return {h["_id"] for h in hits}


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(query=queries)
def test_rewrite_keeps_the_matching_set(corpus: Corpus, query: dict[str, Any]) -> None:
    client = corpus.engine.client
    original = copy.deepcopy(query)
    native = _matching_ids(corpus, client, query, search_type="dfs_query_then_fetch")
    for mode in ("boost", "script") if corpus.has_painless else ("boost",):
        wrapped = wrap(client, corpus.cals(0.6), mode=mode)  # type: ignore[arg-type]
        assert _matching_ids(corpus, wrapped, query) == native, mode
    assert query == original  # the caller's body is never modified
