"""What the tests of identifiers queries planned on the node share (tests/engine/test_node_plan.py
on one node of every engine, tests/engine/test_cluster_select_all.py on the three-node
cluster): the calibrated index, the request bodies a client sends, and the comparison of
select "all" with the client's plan of every compound."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from esqlog.engine.client import Engine
from esqlog.identifiers.calibrate import calibrate_identifiers, identifier_report
from esqlog.identifiers.node_plan import QUERY_NAME
from esqlog.identifiers.settings import IdentifierSettings
from esqlog.wrapper import wrap
from tests.support.calibrated_go import N_DOCS, mappings
from tests.support.engines import bulk_index, call, create_index, found, wait_green
from tests.support.oracle import hits_of, load_docs, load_query_texts, total_of

QUERIES = 30


@dataclass
class Planned:
    engine: Engine
    index: str
    path: Path
    lists: str
    note: str


@contextmanager
def planned_index(
    engine: Engine,
    folder: Path,
    shards: int,
    docs: int = N_DOCS,
    replicas: int | None = None,
    warm: bool = True,
) -> Iterator[Planned]:
    """An index of the first ``docs`` Go functions, calibrated with its word lists (and
    calibrate's warm unless ``warm`` is False), deleted with its lists afterwards;
    ``replicas`` set waits for every copy to start."""
    settings = None if replicas is None else {"number_of_replicas": replicas}
    index = create_index(engine, shards=shards, mappings=mappings(), settings=settings)
    lists = None
    try:
        rows = [{"id": d["id"], "body": d["body"], "key": str(d["id"])} for d in load_docs(docs)]
        bulk_index(engine, index, rows)
        call(engine, "POST", f"/{index}/_refresh")
        if replicas is not None:
            wait_green(engine, index)
        path = folder / "code.qlog.json"
        found_stats = calibrate_identifiers(engine, index, "body")
        record, note = identifier_report(found_stats, path, engine, warm=warm)
        lists = record.word_lists
        assert lists is not None, note
        yield Planned(engine, index, path, lists, note)
    finally:
        call(engine, "DELETE", f"/{index}")
        if lists is not None:
            found(engine, "DELETE", f"/{lists}")


def texts() -> list[str]:
    return [t for t in load_query_texts() if t.isascii()][:QUERIES]


def body(text: str, size: int = N_DOCS) -> dict[str, Any]:
    return {"query": {"match": {"body": text}}, "size": size, "track_total_hits": True}


class Sent:
    """The bodies of the searches a client's transport sends."""

    def __init__(self, client: Any) -> None:
        self.transport = client.transport
        self.perform = self.transport.perform_request
        self.bodies: list[str] = []

    def __enter__(self) -> Sent:
        def spy(method: str, url: str, *args: Any, **kwargs: Any) -> Any:
            if url.endswith("/_search"):
                self.bodies.append(json.dumps(kwargs.get("body"), default=str))  # as sent
            return self.perform(method, url, *args, **kwargs)

        self.transport.perform_request = spy
        return self

    def __exit__(self, *exc: object) -> None:
        self.transport.perform_request = self.perform


EVERY = IdentifierSettings(select="all")
#: the client's plan without a budget: every compound of every word, listed term by term
UNLIMITED = IdentifierSettings(node_plan=False, budget=4_999)


def listed_terms(planned: Planned, words: list[dict[str, Any]]) -> int:
    """The terms of every word's whole group: its own term and its list's compounds that the
    index holds (df > 0), as the lists index has them."""
    total = 0
    for word in words:
        got = found(planned.engine, "GET", f"/{planned.lists}/_doc/{word['word']}")
        source = (got or {}).get("_source") or {}
        df = np.frombuffer(base64.b64decode(source.get("df", "")), "<i4")
        total += int(word["own"]) + int((df > 0).sum())
    return total


def client_terms(body: dict[str, Any]) -> int:
    clauses = body["query"]["bool"]["should"]
    return sum(len(c["esqlog_terms"]["terms"]) for c in clauses if "esqlog_terms" in c)


def assert_every_compound(planned: Planned, queries: int, least: int) -> None:
    """select "all": each word's whole group read on the node (WholeWordQuery) gives the
    hits, hits.total and scores of the client's plan listing every compound term by term,
    on the first ``queries`` texts (each cut to its first six words, so that its every
    compound fits the engine's clause limit; a text whose client plan the limit still cuts,
    checked from the lists index, is left out), at least ``least`` of them compared."""
    node = wrap(planned.engine.client, planned.path, mode="identifiers", identifiers=EVERY)
    client = wrap(planned.engine.client, planned.path, mode="identifiers", identifiers=UNLIMITED)
    compared = done = 0
    for text in texts()[:queries]:
        text = " ".join(text.split()[:6])
        with Sent(planned.engine.client) as sent:
            got = node.search(index=planned.index, body=body(text))
        assert len(sent.bodies) == 1 and '"select": "all"' in sent.bodies[0], text
        with Sent(planned.engine.client) as sent_client:
            expected = client.search(index=planned.index, body=body(text))
        words = json.loads(sent.bodies[0])["query"][QUERY_NAME]["words"]
        if client_terms(json.loads(sent_client.bodies[0])) != listed_terms(planned, words):
            continue
        done += 1
        assert total_of(got) == total_of(expected), text
        want, have = dict(hits_of(expected)), dict(hits_of(got))
        assert have.keys() == want.keys(), text
        for doc, score in want.items():
            assert have[doc] == pytest.approx(score, rel=1e-5), (text, doc)
        compared += len(want)
    assert done >= least and compared > 5 * done
