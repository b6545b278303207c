"""A scripted engine for unit tests of esqlog's I/O-free plans (tests only).

In the spirit of httpx's MockTransport: it answers each step from a table keyed by
(method, path), where the answer is recorded JSON, a function of the request, or an
exception to raise; the wrapped client's own ``search`` is keyed ("SEARCH", index). Every
step is kept in ``seen``. An unexpected request fails the test naming it.

This tests what a plan *decides* (which requests, in which order, with which bodies). It is
never evidence of how a cluster behaves: that is tested on the real nodes.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping
from typing import Any

import opensearchpy

from esqlog.engine.steps import ClientSearch, Pause, Step, drive

Answer = Any  # JSON, a callable(step) -> JSON, or an exception instance


class ScriptedEngine:
    def __init__(self, routes: Mapping[tuple[str, str], Answer]) -> None:
        self.routes = dict(routes)
        self.seen: list[Step] = []

    def perform(self, step: Step) -> Any:
        self.seen.append(step)
        if isinstance(step, Pause):
            return None
        key = (
            ("SEARCH", str(step.kwargs.get("index")))
            if isinstance(step, ClientSearch)
            else (step.method, step.path)
        )
        if key not in self.routes:
            raise AssertionError(f"unexpected step {key}: {step}")
        answer = self.routes[key]
        if callable(answer) and not isinstance(answer, BaseException):
            answer = answer(step)
        if isinstance(answer, BaseException):
            raise answer
        return copy.deepcopy(answer)

    def run(self, plan: Any) -> Any:
        return drive(plan, self.perform)

    def paths(self) -> list[str]:
        """What was performed, as "GET /x" or "SEARCH index"."""
        return [
            f"SEARCH {s.kwargs.get('index')}"
            if isinstance(s, ClientSearch)
            else "PAUSE"
            if isinstance(s, Pause)
            else f"{s.method} {s.path}"
            for s in self.seen
        ]


def not_found(index: str) -> opensearchpy.NotFoundError:
    """The client's own 404, shaped as opensearch-py raises it."""
    return opensearchpy.NotFoundError(
        404,
        "index_not_found_exception",
        {
            "error": {
                "root_cause": [
                    {"type": "index_not_found_exception", "reason": f"no such index [{index}]"}
                ]
            },
            "status": 404,
        },
    )


def settings_answer(index: str, uuid: str, shards: int) -> dict[str, Any]:
    """GET /{index}/_settings filtered to uuid and shard count, as both engines answer."""
    return {index: {"settings": {"index": {"uuid": uuid, "number_of_shards": str(shards)}}}}


def field_mapping(index: str, field: str, analyzer: str) -> dict[str, Any]:
    """GET /{index}/_mapping/field/{field}?include_defaults: a text field whose index and
    search analyzer are ``analyzer``, as both engines answer."""
    spec = {"type": "text", "analyzer": analyzer, "search_analyzer": analyzer}
    return {index: {"mappings": {field: {"full_name": field, "mapping": {field: spec}}}}}


def search_shards(shards: int) -> Callable[[Any], dict[str, Any]]:
    """GET /_search_shards?routing=r: routing value r lands on shard r % shards."""

    def answer(request: Any) -> dict[str, Any]:
        shard = int(request.params["routing"]) % shards
        return {"shards": [[{"primary": True, "shard": shard, "index": "x"}]]}

    return answer


def term_vectors(
    df: Mapping[str, int], doc_count: int, sum_ttf: int, shards: int
) -> Callable[[Any], dict[str, Any]]:
    """POST /_mtermvectors of artificial documents: each shard holds an equal share of the
    corpus; terms are the lowercased word characters of the text (a standard-like analyzer)."""

    def answer(request: Any) -> dict[str, Any]:
        docs = []
        for doc in request.body["docs"]:
            field, text = next(iter(doc["doc"].items()))
            words = (
                text.split()
                if doc.get("per_field_analyzer", {}).get(field) == "whitespace"
                else re.findall(r"\w+", text.lower())
            )
            terms = {
                w: {"doc_freq": df.get(w, 0) // shards, "term_freq": 1, "tokens": [{"position": i}]}
                for i, w in enumerate(words)
            }
            docs.append(
                {
                    "_index": doc["_index"],
                    "found": True,
                    "term_vectors": {
                        field: {
                            "field_statistics": {
                                "doc_count": doc_count // shards,
                                "sum_ttf": sum_ttf // shards,
                                "sum_doc_freq": 1,
                            },
                            "terms": terms,
                        }
                    },
                }
            )
        return {"docs": docs}

    return answer
