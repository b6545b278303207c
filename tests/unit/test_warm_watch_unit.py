"""esqlog plugin warm --watch's loop (esqlog.identifiers.warm_watch), driven by recorded
answers: which nodes each look warms (the first look every node, then a node started again
or newly holding a copy, nothing else), and a cluster that stops answering is said once and
looked at again. That a real node's answers parse is tests/engine/test_warm_watch.py's."""

from __future__ import annotations

from typing import Any

from esqlog.engine.steps import Request
from esqlog.errors import ClusterError
from esqlog.identifiers.warm import candidates
from esqlog.identifiers.warm_watch import WatchJob, due, node_keys_plan, watch
from tests.support.split_docs import build


class _Vocab:
    def df_of(self, terms: list[str]) -> dict[str, int]:
        return dict.fromkeys(terms, 1)


def _shards(holders: dict[str, list[int]]) -> dict[str, Any]:
    """A ``_search_shards`` answer: each node's started copies, and one copy still starting."""
    copies = [
        [{"state": "STARTED", "node": node, "shard": shard}]
        for node, shards in holders.items()
        for shard in shards
    ]
    return {"shards": [*copies, [{"state": "INITIALIZING", "node": "late", "shard": 9}]]}


class _Cluster:
    """Answers plans as a cluster whose state each look reads from ``looks`` (holders and
    JVM start times, or an exception it fails with); records the nodes each look searched."""

    def __init__(self, looks: list[Any]) -> None:
        self.looks = looks
        self.searched: list[set[str]] = []

    def run(self, plan: Any) -> Any:
        if plan.gi_code.co_name == "node_keys_plan":  # a look begins
            self.searched.append(set())
        state = self.looks[len(self.searched) - 1]
        answer: Any = None
        try:
            while True:
                request = plan.send(answer)
                if isinstance(state, BaseException):
                    plan.close()
                    raise state
                answer = self._answer(request, state)
        except StopIteration as done:
            return done.value

    def _answer(self, request: Request, state: Any) -> Any:
        holders, starts = state
        if request.path.endswith("/_search_shards"):
            return _shards(holders)
        if request.path == "/_nodes/jvm":
            return {"nodes": {n: {"jvm": {"start_time_in_millis": t}} for n, t in starts.items()}}
        if request.path.startswith("/_esqlog/terms/stats"):
            sizes = {"size_in_bytes": 0, "limit_in_bytes": 1 << 30}
            return {"nodes": {n: {"name": n, "word_postings": sizes} for n in starts}}
        self.searched[-1].add(request.params["preference"].rsplit(":", 1)[1])
        return {"hits": {"hits": []}}


def _job() -> WatchJob:
    vocab: Any = _Vocab()
    return WatchJob("code.json: code/body", "code", "body", "esqlog-words-x", build(), vocab)


def _watch(looks: list[Any]) -> tuple[_Cluster, list[str], list[float]]:
    cluster = _Cluster(looks)
    said: list[str] = []
    slept: list[float] = []
    watch(cluster.run, [_job()], 30, said.append, rounds=len(looks), sleep=slept.append)
    return cluster, said, slept


def test_a_node_is_due_when_new_started_again_or_holding_other_copies() -> None:
    keys = {"a": (100, (0, 1)), "b": (100, (2,))}
    assert due(keys, {}) == ["a", "b"]  # the first look: every node
    assert due(keys, dict(keys)) == []
    assert due(keys, {"a": (100, (0, 1)), "b": (99, (2,))}) == ["b"]  # b started again
    assert due(keys, {"a": (100, (0,)), "b": (100, (2,))}) == ["a"]  # a copy moved to a


def test_the_keys_are_each_holders_start_time_and_started_copies() -> None:
    plan = node_keys_plan("code")
    request = next(plan)
    assert request.path == "/code/_search_shards"
    request = plan.send(_shards({"a": [0, 1], "b": [2]}))
    assert request.path == "/_nodes/jvm"
    try:
        plan.send({"nodes": {"a": {"jvm": {"start_time_in_millis": 7}}, "b": {}}})
    except StopIteration as done:
        assert done.value == {"a": (7, (0, 1)), "b": (0, (2,))}  # "late" has no started copy
    else:
        raise AssertionError("the plan asked for more")


def test_each_look_warms_the_nodes_started_again_and_nothing_else() -> None:
    both = ({"a": [0], "b": [1]}, {"a": 1, "b": 1})
    b_again = ({"a": [0], "b": [1]}, {"a": 1, "b": 2})
    moved = ({"a": [0, 1]}, {"a": 1, "b": 2})
    cluster, said, slept = _watch([both, both, b_again, b_again, moved])
    assert cluster.searched[0] == {"a", "b"}  # the first look warms every node
    assert cluster.searched[1] == set()  # nothing changed: two small requests, no search
    assert cluster.searched[2] == {"b"}  # b started again
    assert cluster.searched[3] == set()
    assert cluster.searched[4] == {"a"}  # b's copy moved to a
    every = len(candidates(build()))
    assert said[0].startswith("code.json: code/body: warmed words on node a ")
    assert f"node a {every:,}, b {every:,} (of 2 holding it)" in said[0]
    assert f"node b {every:,} (of 2 holding it)" in said[1]
    assert len(said) == 3 and slept == [30, 30, 30, 30]  # no sleep after the last look


def test_a_cluster_that_stops_answering_is_said_once_and_looked_at_again() -> None:
    up = ({"a": [0]}, {"a": 1})
    again = ({"a": [0]}, {"a": 2})  # it came back started again: warmed
    down = ConnectionError("http://user:secret@10.0.0.1:9200 refused")
    refused = ClusterError("no node keeps whole words (esqlog-terms before 1.11.0)", "fix")
    cluster, said, _ = _watch([up, down, down, again, refused, again])
    assert cluster.searched[0] == {"a"} and cluster.searched[3] == {"a"}
    assert said[1] == (
        "code.json: code/body: the cluster did not answer (ConnectionError); "
        "looking again every 30 s"
    )
    assert "secret" not in "\n".join(said)  # a client's message may hold the URL
    assert said[2] == "code.json: code/body: the cluster answers again"
    assert "warmed words on node a" in said[3]
    assert "no node keeps whole words" in said[4]
    # back, at the start time it was warmed at: said, and nothing read again
    assert said[5] == "code.json: code/body: the cluster answers again" and len(said) == 6
    assert cluster.searched[5] == set()
