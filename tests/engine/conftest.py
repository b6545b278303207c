"""Fixtures for tests against real Elasticsearch and OpenSearch nodes; every test in this
folder is marked ``engine`` (``pytest -m "not engine"`` or ``pytest tests/unit`` runs without them).

The nodes come from ``scripts/start-*.sh`` (``scripts/test.sh`` starts them); their URLs
arrive in ESQLOG_OPENSEARCH_URL and ESQLOG_ELASTICSEARCH_URL. When CI=true an unreachable
engine is a failure, not a skip: a skipped engine test in CI would hide a broken engine.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from esqlog.engine.client import Engine
from esqlog.engine.steps import Request
from tests.support.engines import CLUSTER_URLS, call, connect_engine, create_index

if TYPE_CHECKING:
    from tests.support.oracle import Corpus


@pytest.fixture(params=["opensearch", "elasticsearch"], scope="session")
def engine(request: pytest.FixtureRequest) -> Engine:
    """A real engine, once per flavor."""
    return connect_engine(request.param)


@pytest.fixture(scope="session")
def opensearch() -> Engine:
    return connect_engine("opensearch")


@pytest.fixture(scope="session")
def elasticsearch() -> Engine:
    return connect_engine("elasticsearch")


@pytest.fixture(scope="session")
def cluster() -> Engine:
    """The three-node OpenSearch cluster, through a client that knows all three nodes (as an
    application's would: a node that goes away is the client's to route around)."""
    from opensearchpy import OpenSearch

    urls = CLUSTER_URLS.split(",")
    try:
        engine = Engine(OpenSearch(hosts=urls, timeout=60, maxsize=16))
        nodes = engine.perform(Request("GET", "/_cluster/health"))["number_of_nodes"]
        assert nodes == 3, f"{nodes} nodes instead of 3"
    except Exception as exc:
        message = f"the three-node cluster is not reachable at {CLUSTER_URLS}: {exc}"
        if os.environ.get("CI") == "true":
            pytest.fail(message + " (CI=true: engine tests must run)")
        pytest.skip(message + "; start it with scripts/engines/cluster.sh start")
    return engine


@pytest.fixture(scope="session", autouse=True)
def _word_lists_removed() -> Iterator[None]:
    """After the session, the word-lists indices that calibrations wrote on the test nodes
    (esqlog.identifiers.word_lists: every identifiers calibration on a node with the plugin
    writes one, and a test's own cleanup deletes only its index)."""
    yield
    from esqlog.identifiers.word_lists import lists_indices_plan, remove_lists_plan
    from tests.support.engines import connected_engines

    for engine in connected_engines():
        own, _others = engine.run(lists_indices_plan())
        for lists in own:
            engine.run(remove_lists_plan(lists.name))


@pytest.fixture
def fresh_index(engine: Engine) -> Iterator[str]:
    """An empty 3-shard index with a ``standard``-analyzed text field ``body``."""
    name = create_index(engine)
    yield name
    call(engine, "DELETE", f"/{name}")


@pytest.fixture(scope="module")
def corpus(engine: Engine) -> Iterator[Corpus]:
    """The shared calibrated 3-shard corpus (tests/support/oracle.py), built once per module and
    engine and always deleted. Modules that need another corpus define their own."""
    from tests.support.oracle import corpus_fixture  # oracle imports this module

    yield from corpus_fixture(engine)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The ``engine`` marker by folder: a test here needs a real node, one elsewhere does not."""
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.engine)
