"""``GET /_esqlog/terms/stats`` on the three-node OpenSearch cluster (scripts/engines/cluster.sh):
every node's caches in one answer, through the plugin's nodes action.

An index of three shards without replicas, so that the searches run on the nodes holding
them: a repeated group search must show as cache hits on each of those nodes (and on no
other), every node must answer under its own id and name, the top-level figures must be the
sums of the nodes', and a path naming one node must answer for it alone. The cache's
arithmetic on one node is tests/engine/test_plugin_cache_stats.py's. ``esqlog plugin stats``
must report each node once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner

from esqlog.cli import main
from esqlog.engine.client import Engine
from tests.support.calibrated_go import mappings
from tests.support.engines import CLUSTER_URLS, bulk_index, call, create_index, wait_green

SHARDS = 3
TERMS = ["read", "readfile", "word3", "absentterm"]


@pytest.fixture(scope="module")
def index(cluster: Engine) -> Iterator[str]:
    name = create_index(
        cluster, shards=SHARDS, mappings=mappings(), settings={"number_of_replicas": 0}
    )
    try:
        wait_green(cluster, name)
        docs = [{"id": k, "body": f"read readFile word{k % 7} x{k}"} for k in range(60)]
        bulk_index(cluster, name, docs)
        call(cluster, "POST", f"/{name}/_refresh")
        yield name
    finally:
        call(cluster, "DELETE", f"/{name}")


def _stats(cluster: Engine, path: str = "") -> dict[str, Any]:
    return call(cluster, "GET", f"/_esqlog/terms/stats{path}")


def _search(cluster: Engine, index: str) -> None:
    # without idf, as the identifiers mode sends its groups: the path that uses the cache
    body = {"query": {"esqlog_terms": {"field": "body", "terms": TERMS, "idf": False}}}
    found = call(cluster, "POST", f"/{index}/_search", body, request_cache="false")
    assert found["hits"]["total"]["value"] == 60
    assert found["_shards"]["successful"] == SHARDS


def _shards_by_node(cluster: Engine, index: str) -> Counter[str]:
    """How many of the index's shards each node holds (by node id)."""
    state = call(cluster, "GET", f"/_cluster/state/routing_table/{index}")
    shards = state["routing_table"]["indices"][index]["shards"].values()
    return Counter(copy["node"] for copies in shards for copy in copies)


def test_every_node_answers_and_the_top_level_is_their_sum(cluster: Engine, index: str) -> None:
    _search(cluster, index)
    stats = _stats(cluster)
    listed = call(cluster, "GET", "/_nodes")["nodes"]
    assert stats["_nodes"] == {"total": 3, "successful": 3, "failed": 0}
    assert set(stats["nodes"]) == set(listed)
    for node_id, node in stats["nodes"].items():
        assert node["name"] == listed[node_id]["name"]
    for section in ("term_state_cache", "word_lists"):
        for counter, total in stats[section].items():
            summed = sum(node[section][counter] for node in stats["nodes"].values())
            assert total == summed, (section, counter)
        assert stats[section]["limit_in_bytes"] > 0


def test_searches_show_as_hits_on_the_nodes_that_ran_them(cluster: Engine, index: str) -> None:
    held = _shards_by_node(cluster, index)
    _search(cluster, index)  # each shard's lookups cached on its node
    before = _stats(cluster)["nodes"]
    _search(cluster, index)
    after = _stats(cluster)["nodes"]
    assert set(after) >= set(held)
    for node_id, node in after.items():
        grew = node["term_state_cache"]["hits"] - before[node_id]["term_state_cache"]["hits"]
        # each of the group's terms looked up again in each segment of each shard it holds
        assert grew >= len(TERMS) * held[node_id], (node_id, grew)
        if not held[node_id]:
            assert grew == 0, (node_id, grew)


def test_a_path_naming_one_node_answers_for_it_alone(cluster: Engine, index: str) -> None:
    for node_id, node in call(cluster, "GET", "/_nodes")["nodes"].items():
        one = _stats(cluster, f"/{node_id}")
        assert one["_nodes"] == {"total": 1, "successful": 1, "failed": 0}
        assert list(one["nodes"]) == [node_id]
        by_name = _stats(cluster, f"/{node['name']}")
        assert list(by_name["nodes"]) == [node_id]


def test_the_stats_command_reports_every_node(cluster: Engine, index: str) -> None:
    _search(cluster, index)
    url = CLUSTER_URLS.split(",")[0]
    result = CliRunner().invoke(main, ["plugin", "stats", "--url", url])
    assert result.exit_code == 0, result.output
    names = [node["name"] for node in call(cluster, "GET", "/_nodes")["nodes"].values()]
    lines = result.output.splitlines()
    for name in names:
        assert sum(line.startswith(name + " ") for line in lines) == 1, (name, lines)
    assert sum("term states:" in line for line in lines) == 3
    assert sum("word lists:" in line for line in lines) == 3
    assert not any("did not answer" in line for line in lines)
