"""Reaching the real engines in tests: their URLs, a REST call, bulk indexing, fresh indices.

The nodes come from ``scripts/start-*.sh`` (``scripts/test.sh`` starts them); their URLs
arrive in ESQLOG_OPENSEARCH_URL and ESQLOG_ELASTICSEARCH_URL. When CI=true an unreachable
engine is a failure, not a skip: a skipped engine test in CI would hide a broken engine.
"""

from __future__ import annotations

import json
import os
import uuid
from typing import Any

import pytest

from esqlog.engine.client import Engine
from esqlog.engine.connection import ConnectionSettings, connect
from esqlog.engine.failures import error_status
from esqlog.engine.steps import Request

ENGINE_URLS = {
    "opensearch": os.environ.get("ESQLOG_OPENSEARCH_URL", "http://127.0.0.1:19200"),
    "elasticsearch": os.environ.get("ESQLOG_ELASTICSEARCH_URL", "http://127.0.0.1:19201"),
}


_engines: dict[str, Engine | BaseException] = {}


CLUSTER_URLS = os.environ.get(
    "ESQLOG_CLUSTER_URLS", "http://127.0.0.1:19230,http://127.0.0.1:19231,http://127.0.0.1:19232"
)


def connect_engine(name: str) -> Engine:
    cached = _engines.get(name)
    if isinstance(cached, Engine):
        return cached
    if cached is None:
        try:
            engine = connect(ConnectionSettings(ENGINE_URLS[name], timeout=60), flavor=name)  # type: ignore[arg-type]
            _ = engine.version
            _engines[name] = engine
            print(f"\n[esqlog tests] {name}: {engine.label} at {ENGINE_URLS[name]}")
        except Exception as exc:
            _engines[name] = exc
    found = _engines[name]
    if isinstance(found, Engine):
        return found
    message = f"{name} is not reachable at {ENGINE_URLS[name]}: {found}"
    if os.environ.get("CI") == "true":
        pytest.fail(message + " (CI=true: engine tests must run)")
    pytest.skip(message + "; start it with scripts/start-" + name + ".sh")


def connected_engines() -> list[Engine]:
    """The engines this session has connected to so far."""
    return [e for e in _engines.values() if isinstance(e, Engine)]


def call(engine: Engine, method: str, path: str, body: Any = None, **params: Any) -> Any:
    """A REST call on a real engine (tests only)."""
    return engine.perform(Request(method, path, params, body))


def found(engine: Engine, method: str, path: str, **params: Any) -> Any | None:
    """The engine's answer, or None when it answers 404 (the index or document is absent).

    Any other failure raises: a check that turned every error into "absent" would let
    ``assert not exists(...)`` pass on a cluster that is down or refuses the request.
    """
    try:
        return call(engine, method, path, **params)
    except Exception as exc:
        if error_status(exc) == 404:
            return None
        raise


def wait_green(engine: Engine, index: str, tries: int = 20) -> None:
    """Wait until every shard copy of ``index`` is started (30 s a try: the engine's default;
    a ``timeout`` parameter would be taken by the client for its own)."""
    for _ in range(tries):
        health = call(engine, "GET", f"/_cluster/health/{index}", wait_for_status="green")
        if health["status"] == "green":
            return
    raise AssertionError(f"{index} is not green: {health}")


def bulk_index(
    engine: Engine, index: str, docs: list[dict[str, Any]], refresh: bool = True
) -> None:
    """Index ``docs`` (each with an ``id`` key) with the bulk API."""
    for start in range(0, len(docs), 2000):
        lines = []
        for doc in docs[start : start + 2000]:
            body = {k: v for k, v in doc.items() if k != "id"}
            lines.append(json.dumps({"index": {"_index": index, "_id": str(doc["id"])}}))
            lines.append(json.dumps(body))
        result = call(engine, "POST", "/_bulk", "\n".join(lines) + "\n")
        assert not result.get("errors"), result
    if refresh:
        call(engine, "POST", f"/{index}/_refresh")


def create_index(
    engine: Engine,
    shards: int = 3,
    mappings: dict[str, Any] | None = None,
    settings: dict[str, Any] | None = None,
) -> str:
    """A fresh uniquely named index (deleted by the caller's fixture)."""
    name = f"esqlog-test-{uuid.uuid4().hex[:10]}"
    body: dict[str, Any] = {
        "settings": {"number_of_shards": shards, "number_of_replicas": 0, **(settings or {})},
        "mappings": mappings or {"properties": {"body": {"type": "text"}}},
    }
    call(engine, "PUT", f"/{name}", body)
    return name


def client_errors(flavor: str) -> tuple[type[Exception], type[Exception]]:
    """(NotFoundError, the 400 error class) of the client package."""
    if flavor == "elasticsearch":
        import elasticsearch

        return elasticsearch.NotFoundError, elasticsearch.BadRequestError
    import opensearchpy

    return opensearchpy.NotFoundError, opensearchpy.RequestError
