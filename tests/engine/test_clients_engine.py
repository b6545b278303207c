"""With only opensearch-py installed, the engine is still told apart on real nodes: an
OpenSearch node is used, an Elasticsearch node asks for its own client in one line."""

from __future__ import annotations

import pytest

from esqlog.engine import connection
from esqlog.engine.client import Engine
from esqlog.engine.connection import ConnectionSettings, detect_flavor
from esqlog.errors import UsageError
from tests.support.engines import ENGINE_URLS


def test_only_opensearch_py_installed(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connection, "installed_clients", lambda: {"opensearch"})
    settings = ConnectionSettings(ENGINE_URLS[engine.flavor])
    if engine.flavor == "opensearch":
        assert detect_flavor(settings) == "opensearch"
        return
    major = engine.version[0]
    with pytest.raises(UsageError) as caught:
        detect_flavor(settings)
    assert f"esqlog[es{major}]" in str(caught.value)
    assert f"Elasticsearch {major}" in str(caught.value)


def test_with_the_elasticsearch_client_each_engine_is_recognised(engine: Engine) -> None:
    assert detect_flavor(ConnectionSettings(ENGINE_URLS[engine.flavor])) == engine.flavor
