"""The wrapped client's surface, read from the client classes themselves: every method that
returns another client is rewrapped, and positional arguments bind by the client's own
signature. tests/engine/test_wrapper_client.py drives the wrapped clients on real engines.
"""

from __future__ import annotations

import inspect
import typing
from typing import Any

import pytest

from esqlog.wrapper.client import CLIENT_FACTORIES, keywords_of


def _bare_classes() -> list[type]:
    from elasticsearch import AsyncElasticsearch, Elasticsearch
    from opensearchpy import AsyncOpenSearch, OpenSearch

    return [Elasticsearch, AsyncElasticsearch, OpenSearch, AsyncOpenSearch]


def _returns_a_client(cls: type, name: str) -> bool:
    """Whether a public method's return annotation is the client itself (Self, its class)."""
    annotation = inspect.signature(getattr(cls, name)).return_annotation
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
    return text.strip("'\"") in {cls.__name__, "SelfType", "Self", typing.Self.__repr__()}


def test_every_client_method_that_returns_a_client_is_rewrapped() -> None:
    found = {
        (cls.__name__, name)
        for cls in _bare_classes()
        for name in dir(cls)
        if not name.startswith("_")
        and callable(getattr(cls, name))
        and _returns_a_client(cls, name)
    }
    assert ("Elasticsearch", "options") in found  # the scan sees what it looks for
    assert {name for _, name in found} <= CLIENT_FACTORIES


def test_positional_arguments_bind_by_the_clients_own_signature() -> None:
    def keyword_only(*, body: Any = None, index: Any = None, params: Any = None) -> None:
        return None

    def positional(body: Any = None, index: Any = None, **extra: Any) -> None:
        return None

    with pytest.raises(TypeError, match="keyword arguments only"):
        keywords_of(keyword_only, ({"query": {}}, "code"), {})
    assert keywords_of(positional, ({"q": 1}, "code"), {"size": 3}) == (
        (),
        {"body": {"q": 1}, "index": "code", "size": 3},
    )
    assert keywords_of(keyword_only, (), {"index": "code"}) == ((), {"index": "code"})
