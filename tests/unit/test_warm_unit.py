"""esqlog plugin warm's plan (esqlog.identifiers.warm), driven by recorded answers: which
words come first, which node each search goes to, and when it stops. That the nodes keep
what it reads is tests/engine/test_node_plan.py's, on real nodes."""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import replace
from typing import Any

import pytest

from esqlog.engine.steps import Request
from esqlog.errors import ClusterError
from esqlog.identifiers import warm
from esqlog.identifiers.node_plan import QUERY_NAME
from esqlog.identifiers.settings import IdentifierSettings
from esqlog.identifiers.warm import Warmed, candidates, warm_line, warm_plan
from tests.support.split_docs import build
from tests.support.wrapper_units import calibration

SHARDS = {
    "shards": [
        [
            {"state": "STARTED", "node": "a", "shard": 0},
            {"state": "STARTED", "node": "b", "shard": 0},
        ],
        [
            {"state": "STARTED", "node": "a", "shard": 1},
            {"state": "INITIALIZING", "node": "b", "shard": 1},
        ],
        [{"state": "STARTED", "node": "b", "shard": 2}],
    ]
}


class Vocab:
    """The vocabulary's df lookup (the documents' own terms, as the snapshot holds them)."""

    def df_of(self, terms: list[str]) -> dict[str, int]:
        return dict.fromkeys(terms, 1)


def _stats(sizes: dict[str, int], limit: int = 1_000) -> dict[str, Any]:
    return {
        "nodes": {
            node: {
                "name": f"node-{node}",
                "word_postings": {"size_in_bytes": size, "limit_in_bytes": limit},
            }
            for node, size in sizes.items()
        }
    }


def _drive(
    plan: Generator[Any, Any, Warmed], grow: int, sizes: dict[str, int]
) -> tuple[Warmed, list[Request]]:
    """Answers the plan's requests: each search grows its node's cache by ``grow`` bytes."""
    searches: list[Request] = []
    answer: Any = None
    try:
        while True:
            request = plan.send(answer)
            if request.path.startswith("/_esqlog/terms/stats"):
                answer = _stats(sizes)
            elif request.path.endswith("/_search_shards"):
                answer = SHARDS
            else:
                searches.append(request)
                node = request.params["preference"].rsplit(":", 1)[1]
                sizes[node] += grow
                answer = {"hits": {"hits": []}}
    except StopIteration as done:
        return done.value, searches


def _plan(**given: Any) -> Generator[Any, Any, Warmed]:
    vocab: Any = Vocab()
    return warm_plan(
        "code", "body", "esqlog-words-x", build(), vocab, IdentifierSettings(), **given
    )


def test_the_words_with_compounds_come_first_by_their_documents() -> None:
    found = candidates(build())
    docs = [d for _, d in found]
    assert docs == sorted(docs, reverse=True)
    assert [w for w, _ in found[:2]] == ["read", "file"] and found[0][1] == 4
    words = {w for w, _ in found}
    assert "readfile" not in words and "os.readfile" not in words  # no compounds of its own
    assert {"socket", "handle", "web"} <= words


def test_each_node_reads_the_words_of_the_shards_it_holds() -> None:
    done, searches = _drive(_plan(), grow=1, sizes={"a": 0, "b": 0})
    preferences = {r.params["preference"] for r in searches}
    assert preferences == {"_shards:0,1|_only_nodes:a", "_shards:0,2|_only_nodes:b"}
    assert all(r.params["request_cache"] == "false" for r in searches)
    for request in searches:
        assert request.method == "POST" and request.path == "/code/_search"
        assert request.body["size"] == 0
        clause = request.body["query"][QUERY_NAME]
        assert clause["select"] == "all" and clause["lists"] == "esqlog-words-x"
    words = len(candidates(build()))
    assert done.words == {"a": words, "b": words} and done.searches == len(searches)
    assert done.grown_bytes == 2 * len(searches) // 2


def test_a_node_stops_once_its_cache_holds_the_share_of_its_room(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(warm, "BATCH", 4)  # the six documents hold 14 words
    sizes = {"a": 0, "b": 900}  # b: 100 bytes left of 1,000, a half of it may be filled
    done, searches = _drive(_plan(share=0.5, most=10_000), grow=30, sizes=sizes)
    on_b = [r for r in searches if r.params["preference"].endswith(":b")]
    assert len(on_b) == 2  # 900 -> 930 -> 960 >= 950
    assert done.words["b"] == 8 and done.words["a"] == len(candidates(build()))
    assert done.grown_bytes == 30 * len(searches)  # from each node's size before, b's 900


def test_at_most_the_words_asked() -> None:
    done, searches = _drive(_plan(most=3), grow=1, sizes={"a": 0, "b": 0})
    assert done.words == {"a": 3, "b": 3}
    for request in searches:
        words = [w["word"] for w in request.body["query"][QUERY_NAME]["words"]]
        assert words == [w for w, _ in candidates(build())[:3]]


def test_a_cluster_without_whole_words_is_one_clear_error() -> None:
    plan = _plan()
    request = next(plan)
    assert request.path.startswith("/_esqlog/terms/stats")
    with pytest.raises(ClusterError, match=r"1\.11\.0"):
        plan.send({"nodes": {"a": {"name": "a", "term_state_cache": {"size_in_bytes": 1}}}})


class _Refused(Exception):
    status_code = 403


class _Engine:
    """An engine whose every request fails as given."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def run(self, plan: Any) -> Any:
        plan.close()
        raise self.error


def test_calibrate_goes_on_when_the_warm_is_refused() -> None:
    record = replace(calibration(), word_lists="esqlog-words-x", terms_plugin="1.11.1")
    vocab: Any = Vocab()
    refused: Any = _Engine(_Refused("security_exception"))
    line = warm_line(refused, record, build(), vocab)
    assert line is not None and "not done" in line and "403" in line
    assert "esqlog plugin warm" in line
    gone: Any = _Engine(ClusterError("no node keeps whole words", "install it"))
    assert "no node keeps whole words" in (warm_line(gone, record, build(), vocab) or "")
    with pytest.raises(ConnectionError):  # not an answer: calibrate fails as it would
        warm_line(_Engine(ConnectionError("refused")), record, build(), vocab)  # type: ignore[arg-type]
    older = replace(record, terms_plugin="1.10.0")
    assert warm_line(refused, older, build(), vocab) is None  # nothing to read there


def test_every_listed_word_by_default_with_a_bar_per_node(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No cap: every word with compounds is read (after it a search reads no group); each
    node's bar announces them all, and a node stopped at its share ends its bar there."""
    monkeypatch.setattr(warm, "BATCH", 4)
    bars: dict[str, list[tuple[int, int | None]]] = {}
    announced: dict[str, int] = {}

    def factory(label: str, total: int) -> Any:
        announced[label], bars[label] = total, []
        return lambda n, total=None: bars[label].append((n, total))

    sizes = {"a": 0, "b": 900}  # b stops at 960 >= 950, after 8 words
    done, _ = _drive(_plan(share=0.5, progress=factory), grow=30, sizes=sizes)
    every = len(candidates(build()))
    assert done.words == {"a": every, "b": 8}
    a, b = "warm code on node a", "warm code on node b"
    assert announced == {a: every, b: every}
    assert sum(n for n, _ in bars[a]) == every and all(t is None for _, t in bars[a])
    assert bars[b] == [(4, None), (4, None), (0, 8)]


def test_no_cap_on_the_words_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    """A corpus with more words with compounds than any fixed cap (26,005 on Go 153K) has
    them all read."""
    many = [(f"w{i}", 1) for i in range(6_000)]
    monkeypatch.setattr(warm, "candidates", lambda _stats: many)
    done, _ = _drive(_plan(), grow=0, sizes={"a": 0, "b": 0})
    assert done.words == {"a": 6_000, "b": 6_000}
