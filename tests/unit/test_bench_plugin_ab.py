"""plugin_ab's each-term-once bodies: every term listed once, in its first group."""

from __future__ import annotations

from scripts.bench.plugin_ab import each_term_once


def _group(terms: list[str], boost: float) -> dict[str, object]:
    return {"esqlog_terms": {"field": "body", "terms": terms, "boost": boost, "idf": False}}


def test_each_term_is_kept_in_the_first_group_that_lists_it() -> None:
    body = {
        "query": {
            "bool": {
                "should": [
                    _group(["socket", "websocket", "sockethandler"], 2.0),
                    _group(["handler", "sockethandler", "websocket.handler"], 1.5),
                    _group(["websocket", "sockethandler"], 1.0),
                ]
            }
        },
        "size": 10,
    }
    once = each_term_once(body)
    groups = [g["esqlog_terms"] for g in once["query"]["bool"]["should"]]
    assert [g["terms"] for g in groups] == [
        ["socket", "websocket", "sockethandler"],
        ["handler", "websocket.handler"],
        ["websocket"],  # every term came earlier: the group keeps its first
    ]
    assert [g["boost"] for g in groups] == [2.0, 1.5, 1.0]
    assert once["size"] == 10
    # the body given is left as it was
    assert body["query"]["bool"]["should"][1]["esqlog_terms"]["terms"] == [
        "handler",
        "sockethandler",
        "websocket.handler",
    ]


def test_a_body_without_groups_is_copied_unchanged() -> None:
    body = {"query": {"match": {"body": "read file"}}, "size": 10}
    assert each_term_once(body) == body
