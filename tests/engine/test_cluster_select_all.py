"""``select: "all"`` on the three-node OpenSearch cluster (scripts/engines/cluster.sh).

The words' whole groups are read on the nodes that hold the shards, from the word lists: the
coordinating node rewrites the query with the lists it has, but sends the shards only the
words (the lists are no part of the query on the wire), so a node that holds a shard and has
not coordinated must read the lists itself in its own rewrite. Checked: on an index of three
shards without replicas, the hits, hits.total and scores equal the client's plan of every
compound; after the first search, every node holding a shard keeps the lists and the
whole-word groups it read; calibrate's warm reads every word, the most frequent first, on
every node holding a copy (replicas too), so a search of them sent to any copy reads
nothing. The one-node arithmetic is tests/engine/test_node_plan.py's.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from esqlog.calibration.files import load_calibration
from esqlog.engine.client import Engine
from esqlog.identifiers.files import load_for_calibration
from esqlog.identifiers.settings import IdentifierSettings
from esqlog.identifiers.warm import candidates
from esqlog.wrapper import wrap
from tests.support.engines import call
from tests.support.node_plans import (
    EVERY,
    Planned,
    assert_every_compound,
    body,
    planned_index,
    texts,
)

DOCS = 1500


@pytest.fixture(scope="module")
def planned(cluster: Engine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Planned]:
    """Three shards, no replica, calibrated without the warm: the nodes read the words
    themselves."""
    folder = tmp_path_factory.mktemp("select-all")
    with planned_index(cluster, folder, 3, DOCS, replicas=0, warm=False) as found:
        yield found


def _shard_nodes(planned: Planned) -> set[str]:
    shards = call(planned.engine, "GET", f"/_cat/shards/{planned.index}?format=json&h=node")
    return {s["node"] for s in shards}


def _node_sections(planned: Planned) -> dict[str, dict[str, dict[str, int]]]:
    nodes = call(planned.engine, "GET", "/_esqlog/terms/stats")["nodes"]
    return {n["name"]: n for n in nodes.values()}


def test_every_node_holding_a_shard_reads_the_words_itself(planned: Planned) -> None:
    holders = _shard_nodes(planned)
    assert len(holders) >= 2  # some shard is on a node that does not coordinate
    before = _node_sections(planned)
    node = wrap(planned.engine.client, planned.path, mode="identifiers", identifiers=EVERY)
    node.search(index=planned.index, body=body(texts()[0], 10))
    after = _node_sections(planned)
    for name in holders:
        read = after[name]["word_postings"]["misses"] - before[name]["word_postings"]["misses"]
        kept = after[name]["word_lists"]["entries"]
        assert read > 0 and kept > 0, (name, after[name])


def test_the_cluster_scores_as_the_clients_plan_of_every_compound(planned: Planned) -> None:
    assert_every_compound(planned, 12, 6)


@pytest.fixture(scope="module")
def replicated(cluster: Engine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Planned]:
    """Three shards and a replica each, calibrated with the warm (calibrate's default)."""
    with planned_index(cluster, tmp_path_factory.mktemp("warm"), 3, DOCS, replicas=1) as found:
        yield found


def test_the_warm_reads_every_copy_so_any_copy_answers_from_its_cache(
    replicated: Planned,
) -> None:
    assert "the most frequent first, on 3 nodes" in replicated.note, replicated.note
    record = load_calibration(replicated.path)
    vocabulary = record.vocabulary_path()
    assert vocabulary is not None
    stats = load_for_calibration(vocabulary, record.vocabulary_sha256)
    top = " ".join(w for w, _ in candidates(stats)[:10])
    searcher = wrap(
        replicated.engine.client,
        replicated.path,
        mode="identifiers",
        identifiers=IdentifierSettings(family_excess=None),
    )
    shards = call(replicated.engine, "GET", f"/{replicated.index}/_search_shards")["shards"]
    copies = [(c["shard"], c["node"]) for copies in shards for c in copies]
    assert len(copies) == 6
    names = {n: v["name"] for n, v in call(replicated.engine, "GET", "/_nodes")["nodes"].items()}
    for shard, node in copies:
        before = _node_sections(replicated)[names[node]]["word_postings"]
        searcher.search(
            index=replicated.index,
            body=body(top, 10),
            preference=f"_shards:{shard}|_only_nodes:{node}",
        )
        after = _node_sections(replicated)[names[node]]["word_postings"]
        assert after["misses"] == before["misses"], (shard, node)
        assert after["hits"] > before["hits"], (shard, node)
