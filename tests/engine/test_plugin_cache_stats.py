"""The esqlog-terms plugin's term-state cache, seen through ``GET /_esqlog/terms/stats``.

The cache remembers where each segment has (or lacks) each term a group without idf names
(the groups the identifiers mode sends), so a repeated
search must be answered from it (its hits grow by at least one per term and segment), and it
is bounded: whatever is searched, its size stays within its limit and absent terms within
their own quarter. The endpoint answers for every node (here the only one): under ``nodes``
by node id, and summed at the top level (tests/engine/test_cluster_plugin_stats.py checks a
three-node cluster).
"""

from __future__ import annotations

import math
import uuid
from typing import Any

import pytest

from esqlog.engine.client import Engine
from tests.support.calibrated_go import mappings
from tests.support.engines import bulk_index, call, create_index

#: terms per made-up group: under the engines' default clause limit (1,024)
FLOOD = 1000
#: estimated bytes of one absent entry (TermStateCache.ABSENT_OVERHEAD plus a short key)
ABSENT_ENTRY = 100


def _stats(engine: Engine) -> dict[str, int]:
    return call(engine, "GET", "/_esqlog/terms/stats")["term_state_cache"]


def _search(engine: Engine, index: str, terms: list[str]) -> int:
    # without idf, as the identifiers mode sends its groups: the path that uses the cache
    group = {"field": "body", "terms": terms, "idf": False}
    body: dict[str, Any] = {"query": {"esqlog_terms": group}, "size": 5}
    found = call(engine, "POST", f"/{index}/_search", body, request_cache="false")
    return int(found["hits"]["total"]["value"])


@pytest.fixture
def index(engine: Engine) -> Any:
    name = create_index(engine, shards=1, mappings=mappings())
    try:
        bulk_index(
            engine, name, [{"id": k, "body": f"read readFile word{k % 7} x{k}"} for k in range(50)]
        )
        call(engine, "POST", f"/{name}/_forcemerge", max_num_segments=1)
        call(engine, "POST", f"/{name}/_refresh")
        yield name
    finally:
        call(engine, "DELETE", f"/{name}")


def test_the_stats_name_the_cache_and_its_limits(engine: Engine) -> None:
    stats = _stats(engine)
    for key in (
        "size_in_bytes",
        "limit_in_bytes",
        "absent_limit_in_bytes",
        "entries",
        "hits",
        "misses",
        "evictions",
        "breaker_limit_in_bytes",
    ):
        assert isinstance(stats[key], int) and stats[key] >= 0, key
    assert stats["limit_in_bytes"] > 0, "the test nodes run the cache (5% of the heap)"
    assert stats["absent_limit_in_bytes"] == stats["limit_in_bytes"] // 4


def test_the_answer_names_the_nodes_and_sums_them(engine: Engine) -> None:
    """One node here: it answers, under its own id and name, and the sums are its figures."""
    every = call(engine, "GET", "/_esqlog/terms/stats")
    assert every["_nodes"] == {"total": 1, "successful": 1, "failed": 0}
    (node_id, node), *others = every["nodes"].items()
    assert not others
    listed = call(engine, "GET", "/_nodes")["nodes"]
    assert node["name"] == listed[node_id]["name"]
    for section in ("term_state_cache", "word_lists"):
        assert set(node[section]) == set(every[section]), section
        assert node[section]["limit_in_bytes"] == every[section]["limit_in_bytes"] > 0
    local = call(engine, "GET", "/_esqlog/terms/stats/_local")
    assert list(local["nodes"]) == [node_id]
    by_id = call(engine, "GET", f"/_esqlog/terms/stats/{node_id}")
    assert list(by_id["nodes"]) == [node_id]
    nobody = call(engine, "GET", "/_esqlog/terms/stats/no-such-node")
    assert nobody["_nodes"]["total"] == 0 and nobody["nodes"] == {}
    assert nobody["term_state_cache"] == {} and nobody["word_lists"] == {}


def test_a_repeated_search_is_answered_from_the_cache(engine: Engine, index: str) -> None:
    terms = ["read", "readfile", "word3", f"absent{uuid.uuid4().hex}", f"gone{uuid.uuid4().hex}"]
    first = _search(engine, index, terms)
    before = _stats(engine)
    assert _search(engine, index, terms) == first == 50
    after = _stats(engine)
    # one segment, five terms: each looked up again is a hit, none a miss
    assert after["hits"] - before["hits"] >= len(terms)
    assert after["misses"] == before["misses"]
    assert after["entries"] >= len(terms)


def test_made_up_terms_stay_within_their_quarter(engine: Engine, index: str) -> None:
    """Enough distinct absent terms to fill the absent budget 1.5 times over: the absent
    bytes stop at their limit (evictions happen), the present entries are not pushed out."""
    _search(engine, index, ["read", "readfile"])
    limit = _stats(engine)["absent_limit_in_bytes"]
    rounds = math.ceil(1.5 * limit / (FLOOD * ABSENT_ENTRY))
    if rounds > 300:
        pytest.skip(f"the absent budget ({limit} bytes) needs {rounds} requests to fill")
    tag = uuid.uuid4().hex[:8]
    for r in range(rounds):
        assert _search(engine, index, [f"m{tag}{r}x{k}" for k in range(FLOOD)]) == 0
    stats = _stats(engine)
    assert stats["evictions"] > 0
    # one flooding request at most past the limit while the clock evicts
    assert stats["absent_size_in_bytes"] <= limit + FLOOD * 2 * ABSENT_ENTRY
    assert stats["size_in_bytes"] <= stats["limit_in_bytes"] + FLOOD * 2 * ABSENT_ENTRY
    before = _stats(engine)["hits"]
    _search(engine, index, ["read", "readfile"])
    assert _stats(engine)["hits"] - before >= 2, "the present terms were pushed out"
