"""The frameworks people build retrieval with, driving a wrapped client against the real
nodes: each snippet of docs/frameworks.md runs as written and its results
must come back in the q-log order, on a query whose native order differs.

The snippets are read from docs/frameworks.md, so the page cannot drift from what is tested. The
test replaces only the index name ``"code"``, the calibration ``"code.qlog.json"`` and the
query text, and gives ``ES_URL`` / ``OS_URL``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gzip
import json
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import esqlog
from esqlog.calibration.calibrate import calibrate
from esqlog.calibration.files import save_calibration
from esqlog.engine.client import Engine
from esqlog.wrapper import QlogClient
from tests.support.engines import ENGINE_URLS, bulk_index, call, create_index

ROOT = Path(__file__).resolve().parents[2]
README_QUERY = "read the whole file into memory"
Q_LOW = 0.6
DFS = "dfs_query_then_fetch"


def readme_snippet(title: str) -> str:
    """The page's python block whose first line is ``# <title>``."""
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "frameworks.md").read_text(), re.S)
    found = [b for b in blocks if b.startswith(f"# {title}\n")]
    assert len(found) == 1, f"docs/frameworks.md has {len(found)} snippets titled {title!r}"
    return found[0]


@dataclass
class Setup:
    """One engine's framework index, its calibration file and a query that separates."""

    flavor: str
    engine: Engine
    index: str
    calibration: Path
    query: str
    qlog: list[str]  # contents of the top 10, wrapped
    native: list[str]  # contents of the top 10, native (dfs)

    def run(self, title: str) -> dict[str, Any]:
        code = (
            readme_snippet(title)
            .replace('"code.qlog.json"', repr(str(self.calibration)))
            .replace('"code"', repr(self.index))
            .replace(repr(README_QUERY), repr(self.query))
            .replace(f'"{README_QUERY}"', repr(self.query))
        )
        namespace: dict[str, Any] = {
            "ES_URL": ENGINE_URLS["elasticsearch"],
            "OS_URL": ENGINE_URLS["opensearch"],
            "__name__": "snippet",
        }
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # frameworks' own deprecation chatter
            exec(compile(code, f"frameworks.md:{title}", "exec"), namespace)
        return namespace


def _load_docs(limit: int = 1500) -> list[dict[str, Any]]:
    """Real Go functions (esqlog's bundled sample), unique contents, in framework shape."""
    path = ROOT / "esqlog" / "data" / "sample_go_docs.jsonl.gz"
    seen: set[str] = set()
    docs = []
    with gzip.open(path, "rt") as f:
        for line in f:
            doc = json.loads(line)
            if doc["text"] in seen:
                continue
            seen.add(doc["text"])
            docs.append(
                {
                    "id": doc["id"],
                    "content": doc["text"],
                    "metadata": {"name": doc.get("name", doc["id"])},
                }
            )
            if len(docs) == limit:
                break
    return docs


def _contents(response: Any) -> list[str]:
    return [
        h["_source"]["content"] for h in dict(getattr(response, "body", response))["hits"]["hits"]
    ]


def _separating_query(engine: Engine, index: str, calibration: Path) -> tuple[str, ...]:
    wrapped = esqlog.wrap(engine.client, str(calibration))
    queries = [
        json.loads(line)["text"]
        for line in (ROOT / "esqlog" / "data" / "sample_go_queries.jsonl").read_text().splitlines()
    ]
    for text in queries[:80]:
        body = {"query": {"match": {"content": text}}, "size": 10}
        qlog = _contents(wrapped.search(index=index, body=body))
        native = _contents(engine.client.search(index=index, body=body, search_type=DFS))
        if len(qlog) == 10 and qlog != native:
            return text, qlog, native  # type: ignore[return-value]
    raise AssertionError("no sample query ranks differently at q=0.6")


def _setup(engine: Engine, folder: Path) -> Iterator[Setup]:
    # index.query.default_field as docs/frameworks.md advises for Haystack, whose multi_match
    # names no fields: a listed default field makes that body exact, so esqlog rewrites it.
    index = create_index(
        engine,
        shards=3,
        settings={"index.query.default_field": ["content"]},
        mappings={
            "properties": {
                "content": {"type": "text"},
                "metadata": {"properties": {"name": {"type": "keyword"}}},
            }
        },
    )
    try:
        bulk_index(engine, index, _load_docs())
        record = dataclasses.replace(calibrate(engine, index, "content", sample=500), q=Q_LOW)
        path = save_calibration(record, folder / "code.qlog.json")
        text, qlog, native = _separating_query(engine, index, path)
        yield Setup(engine.flavor, engine, index, path, text, qlog, native)
    finally:
        call(engine, "DELETE", f"/{index}")


@pytest.fixture(scope="module")
def es(elasticsearch: Engine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    yield from _setup(elasticsearch, tmp_path_factory.mktemp("es"))


@pytest.fixture(scope="module")
def os_(opensearch: Engine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    yield from _setup(opensearch, tmp_path_factory.mktemp("os"))


def assert_qlog_order(setup: Setup, contents: list[str]) -> None:
    assert contents == setup.qlog
    assert contents != setup.native


def test_langchain_elasticsearch_store_and_retriever(es: Setup) -> None:
    ns = es.run("langchain-elasticsearch")
    assert_qlog_order(es, [d.page_content for d in ns["docs"]])
    assert_qlog_order(es, [d.page_content for d in ns["docs_too"]])
    assert isinstance(ns["store"].client, QlogClient)  # what its options() call returned


def test_langchain_elasticsearch_async_twins(es: Setup) -> None:
    ns = es.run("langchain-elasticsearch async")
    assert_qlog_order(es, [d.page_content for d in ns["docs"]])
    assert_qlog_order(es, [d.page_content for d in ns["docs_too"]])


def test_langchain_community_bm25_retriever(es: Setup) -> None:
    ns = es.run("langchain-community")
    assert_qlog_order(es, [d.page_content for d in ns["docs"]])


def test_llama_index_elasticsearch_text_search(es: Setup) -> None:
    ns = es.run("llama-index elasticsearch")
    assert_qlog_order(es, [n.get_content() for n in ns["result"].nodes])


def test_llama_index_opensearch_text_search_sync_and_async(os_: Setup) -> None:
    from llama_index.core.vector_stores.types import VectorStoreQuery, VectorStoreQueryMode

    ns = os_.run("llama-index opensearch")
    assert_qlog_order(os_, [n.get_content() for n in ns["result"].nodes])
    store = ns["OpensearchVectorStore"](ns["client"])
    result = asyncio.run(
        store.aquery(
            VectorStoreQuery(
                query_str=os_.query, mode=VectorStoreQueryMode.TEXT_SEARCH, similarity_top_k=10
            )
        )
    )
    assert_qlog_order(os_, [n.get_content() for n in result.nodes])


def test_opensearch_haystack_bm25_with_custom_query(os_: Setup) -> None:
    ns = os_.run("opensearch-haystack")
    assert_qlog_order(os_, [d.content for d in ns["docs"]])


def test_elasticsearch_haystack_bm25(es: Setup) -> None:
    ns = es.run("elasticsearch-haystack")
    assert_qlog_order(es, [d.content for d in ns["docs"]])
