"""One compatibility layer over the ``elasticsearch`` and ``opensearch-py`` clients.

This is the only module that knows Elasticsearch from OpenSearch. Everything above it talks
in plain REST requests (:class:`Request`) so that one piece of logic serves both engines and
both the sync and async clients: higher layers write *plans*, generators that yield requests
and receive parsed JSON responses; :func:`run` and :func:`arun` drive a plan on a sync or an
async engine. The wrapped client keeps its own exception types, so an application's error
handling keeps working; esqlog's CLI translates them into one-line messages.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeVar

from esqlog.engine.failures import failure_label
from esqlog.engine.paths import index_path
from esqlog.engine.steps import Plan, Request, adrive, drive

Flavor = Literal["elasticsearch", "opensearch"]
T = TypeVar("T")

_JSON_HEADERS = {"accept": "application/json", "content-type": "application/json"}

#: esqlog's logger: one INFO line per request (method, path, status, time) and per retry,
#: and one DEBUG line per wrapped search with its decision (rewritten or passed through and
#: why, statistics source, fallback: esqlog.wrapper.decisions). Headers, bodies, query
#: texts and credentials are never logged. Silent unless the application (or
#: ``esqlog --verbose``) attaches a handler.
logger = logging.getLogger("esqlog")
logger.addHandler(logging.NullHandler())


def flavor_of(client: Any) -> Flavor:
    """Which engine family a client object talks to, from its package."""
    module = type(client).__module__
    if module.startswith("opensearchpy"):
        return "opensearch"
    if module.startswith("elasticsearch"):
        return "elasticsearch"
    raise TypeError(
        f"esqlog wraps elasticsearch or opensearch-py clients, not {type(client).__name__}"
    )


def is_async_client(client: Any) -> bool:
    """Async clients are the Async* classes of either package."""
    return type(client).__name__.startswith("Async")


def _encode_params(params: Mapping[str, Any]) -> dict[str, str]:
    """Query-string values the way both clients expect them (booleans lowercase)."""
    out: dict[str, str] = {}
    for key, value in params.items():
        if isinstance(value, bool):
            out[key] = "true" if value else "false"
        elif isinstance(value, list | tuple):
            out[key] = ",".join(str(v) for v in value)
        else:
            out[key] = str(value)
    return out


def _body_of(response: Any) -> Any:
    """The JSON body: elasticsearch-py 8 wraps it in an ApiResponse, opensearch-py does not."""
    return getattr(response, "body", response)


def _dispatch(client: Any, flavor: Flavor, request: Request) -> Any:
    """The client's own low-level call: a response, or a coroutine for async clients.

    elasticsearch-py takes (method, path, params, headers, body) on the client; opensearch-py
    takes (method, url, params, body) on its transport.
    """
    params = _encode_params(request.params)
    if flavor == "elasticsearch":
        return client.perform_request(
            request.method, request.path, params=params, headers=_JSON_HEADERS, body=request.body
        )
    return client.transport.perform_request(
        request.method, request.path, params=params, body=request.body
    )


class Engine:
    """A sync Elasticsearch or OpenSearch client, seen as one thing."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.flavor: Flavor = flavor_of(client)
        self._version: tuple[int, ...] | None = None

    def perform(self, request: Request) -> Any:
        """Send one request through the user's client; the client's exceptions propagate."""
        started = time.perf_counter()
        try:
            resp = _dispatch(self.client, self.flavor, request)
        except Exception as exc:
            _log_request(request, failure_label(exc), started)
            raise
        _log_request(request, _status_label(resp), started)
        return _body_of(resp)

    def run(self, plan: Plan[T]) -> T:
        """Drive a plan to completion on this engine."""
        return run(self, plan)

    @property
    def version(self) -> tuple[int, ...]:
        """The server's version, asked once (GET / is not served by every distribution)."""
        if self._version is None:
            self._version = self.run(version_plan())
        return self._version

    @property
    def bm25_scale(self) -> float:
        """The constant the engine multiplies BM25 by: see :func:`bm25_scale`."""
        return bm25_scale(self.flavor, self.version)

    @property
    def label(self) -> str:
        """E.g. ``opensearch 3.6.0``."""
        return f"{self.flavor} {'.'.join(map(str, self.version))}"


class AsyncEngine:
    """The async counterpart of :class:`Engine` for AsyncElasticsearch / AsyncOpenSearch."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.flavor: Flavor = flavor_of(client)

    async def perform(self, request: Request) -> Any:
        """Send one request without blocking the event loop."""
        started = time.perf_counter()
        try:
            resp = await _dispatch(self.client, self.flavor, request)
        except Exception as exc:
            _log_request(request, failure_label(exc), started)
            raise
        _log_request(request, _status_label(resp), started)
        return _body_of(resp)


def _status_label(response: Any) -> str:
    """The HTTP status of a response (opensearch-py returns bare bodies: 2xx)."""
    status = getattr(getattr(response, "meta", None), "status", None)
    return str(status) if isinstance(status, int) else "2xx"


def _log_request(request: Request, outcome: str, started: float) -> None:
    """Method, path and outcome only: never headers, bodies or query parameters."""
    if logger.isEnabledFor(logging.INFO):
        elapsed = (time.perf_counter() - started) * 1000
        logger.info("%s %s -> %s (%.0f ms)", request.method, request.path, outcome, elapsed)


def run(engine: Engine, plan: Plan[T]) -> T:
    """Feed each request of a plan to a sync engine and return the plan's result.

    A failed request is thrown into the plan at its ``yield``, so a plan may translate
    a status it understands (404 for a missing index, say) and let the rest propagate.
    """
    return drive(plan, engine.perform)


async def arun(engine: AsyncEngine, plan: Plan[T]) -> T:
    """Feed each request of a plan to an async engine and return the plan's result."""
    return await adrive(plan, engine.perform)


def bm25_scale(flavor: Flavor, version: tuple[int, ...], k1: float = 1.2) -> float:
    """Elasticsearch and OpenSearch 2.x keep BM25's (k1 + 1) numerator; OpenSearch 3 does not.

    Rankings do not depend on it, but a rerank that adds to the engine's own scores must
    speak the same units.
    """
    if flavor == "opensearch" and version[:1] >= (3,):
        return 1.0
    return k1 + 1.0


def version_plan() -> Plan[tuple[int, ...]]:
    """The version of the local node, from the nodes-info API (served by both engines)."""
    body = yield Request("GET", "/_nodes/_local", {"filter_path": "nodes.*.version"})
    nodes = (body or {}).get("nodes") or {}
    for node in nodes.values():
        return parse_version(str(node.get("version", "0")))
    return (0,)


def scroll_plan(
    index: str,
    body: Mapping[str, Any],
    on_page: Callable[[list[dict[str, Any]]], Plan[bool]],
    keep_alive: str = "5m",
    params: Mapping[str, Any] | None = None,
) -> Plan[None]:
    """Page through a search with the scroll API, releasing the scroll context however it ends.

    Each non-empty page of hits goes to ``on_page`` (itself a plan, so it can make requests
    of its own); it returns False to stop early. A failure while clearing the scroll is
    ignored: a leftover context expires on its own after ``keep_alive``.
    """
    page = yield Request(
        "POST",
        index_path(index, "_search", patterns=True),
        {"scroll": keep_alive, **(params or {})},
        body,
    )
    scroll_id = page.get("_scroll_id")
    try:
        while hits := page["hits"]["hits"]:
            if not (yield from on_page(hits)):
                break
            page = yield Request(
                "POST", "/_search/scroll", body={"scroll": keep_alive, "scroll_id": scroll_id}
            )
            scroll_id = page.get("_scroll_id", scroll_id)
    finally:
        if scroll_id:
            with contextlib.suppress(Exception):
                yield Request("DELETE", "/_search/scroll", body={"scroll_id": [scroll_id]})


def parse_version(text: str) -> tuple[int, ...]:
    """``"8.19.21"`` -> (8, 19, 21); suffixes such as ``-SNAPSHOT`` are dropped."""
    parts = []
    for piece in text.split("-")[0].split("."):
        if not piece.isdigit():
            break
        parts.append(int(piece))
    return tuple(parts) or (0,)


# --- errors: what a failure means, whatever client raised it -----------------------------
