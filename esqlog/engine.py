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
import random
import time
from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeVar

from esqlog.errors import ClusterError, redact
from esqlog.extras import client_too_new
from esqlog.paths import index_path

# Plan and Request are re-exported: every plan module imports them from here.
from esqlog.steps import Plan as Plan
from esqlog.steps import Request as Request
from esqlog.steps import adrive, drive

Flavor = Literal["elasticsearch", "opensearch"]
T = TypeVar("T")

_JSON_HEADERS = {"accept": "application/json", "content-type": "application/json"}
RETRYABLE_STATUS = frozenset({429, 502, 503, 504})

#: esqlog's logger: one INFO line per request (method, path, status, time) and per retry.
#: Headers, bodies and credentials are never logged. Silent unless the application (or
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
        return client.perform_request(request.method, request.path, params=params,
                                      headers=_JSON_HEADERS, body=request.body)
    return client.transport.perform_request(request.method, request.path, params=params,
                                            body=request.body)


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
            _log_request(request, _failure_label(exc), started)
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
            _log_request(request, _failure_label(exc), started)
            raise
        _log_request(request, _status_label(resp), started)
        return _body_of(resp)


def _status_label(response: Any) -> str:
    """The HTTP status of a response (opensearch-py returns bare bodies: 2xx)."""
    status = getattr(getattr(response, "meta", None), "status", None)
    return str(status) if isinstance(status, int) else "2xx"


def _failure_label(exc: BaseException) -> str:
    status = error_status(exc)
    return str(status) if status is not None else f"failed ({type(exc).__name__})"


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
    index: str, body: Mapping[str, Any], on_page: Callable[[list[dict[str, Any]]], Plan[bool]],
    keep_alive: str = "5m", params: Mapping[str, Any] | None = None,
) -> Plan[None]:
    """Page through a search with the scroll API, releasing the scroll context however it ends.

    Each non-empty page of hits goes to ``on_page`` (itself a plan, so it can make requests
    of its own); it returns False to stop early. A failure while clearing the scroll is
    ignored: a leftover context expires on its own after ``keep_alive``.
    """
    page = yield Request("POST", index_path(index, "_search", patterns=True),
                         {"scroll": keep_alive, **(params or {})}, body)
    scroll_id = page.get("_scroll_id")
    try:
        while hits := page["hits"]["hits"]:
            if not (yield from on_page(hits)):
                break
            page = yield Request("POST", "/_search/scroll",
                                 body={"scroll": keep_alive, "scroll_id": scroll_id})
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

def error_status(exc: BaseException) -> int | None:
    """HTTP status of a client exception, or None for network-level failures."""
    meta = getattr(exc, "meta", None)
    status = getattr(meta, "status", None)
    if isinstance(status, int):
        return status
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        return status
    return None


def is_client_error(exc: BaseException) -> bool:
    """True for exceptions raised by either client package (not programming errors)."""
    module = type(exc).__module__
    return module.startswith(("elasticsearch", "elastic_transport", "opensearchpy"))


def error_reason(exc: BaseException) -> str:
    """The engine's own one-line reason (root cause) when it sent one."""
    info = getattr(exc, "info", None) or getattr(exc, "body", None)
    if isinstance(info, Mapping):
        error = info.get("error")
        if isinstance(error, Mapping):
            causes = error.get("root_cause") or []
            first = causes[0] if causes and isinstance(causes[0], Mapping) else error
            return str(first.get("reason") or first.get("type") or error)
        if error:
            return str(error)
    message = getattr(exc, "message", None) or str(exc)
    return " ".join(str(message).split())[:300]


def is_timeout(exc: BaseException) -> bool:
    """A request that got no answer within its timeout (either client's ConnectionTimeout)."""
    return any("Timeout" in cls.__name__ for cls in type(exc).__mro__)


def is_retryable(exc: BaseException) -> bool:
    """Overload (429), unavailable (502-504) and network failures are worth another try.

    A timeout is not: it has already spent the whole wait the user allowed (--timeout
    bounds each request, retries included), so trying again would multiply it.
    """
    if not is_client_error(exc) or is_timeout(exc):
        return False
    status = error_status(exc)
    if status is None:
        return True
    return status in RETRYABLE_STATUS


def with_retries(
    call: Callable[[], T],
    attempts: int = 5,
    base_delay: float = 0.5,
    max_delay: float = 8.0,
    on_retry: Callable[[int, BaseException, float], None] | None = None,
) -> T:
    """Call ``call`` again on retryable failures with capped, jittered exponential backoff.

    Only esqlog's own idempotent reads use this; the wrapped application's searches keep the
    client's own retry policy.
    """
    for attempt in range(1, attempts + 1):
        try:
            return call()
        except Exception as exc:
            if attempt == attempts or not is_retryable(exc):
                raise
            delay = min(max_delay, base_delay * 2 ** (attempt - 1)) * (0.5 + random.random() / 2)
            logger.info("retry %d of %d in %.2f s after %s", attempt, attempts - 1, delay,
                        _failure_label(exc))
            if on_retry is not None:
                on_retry(attempt, exc, delay)
            time.sleep(delay)
    raise AssertionError("unreachable")


def describe_failure(exc: BaseException, url: str | None = None) -> ClusterError:
    """Turn a client exception into a one-line error naming the problem and the fix."""
    where = f" at {redact(url)}" if url else ""
    status = error_status(exc)
    reason = redact(error_reason(exc))
    if status is None:
        text = reason.lower()
        if "name or service not known" in text or "nodename nor servname" in text or (
            "failed to resolve" in text or "temporary failure in name resolution" in text
        ):
            return ClusterError(f"cannot resolve the cluster host{where}",
                                "check the hostname in --url")
        if "timed out" in text or "timeout" in text:
            return ClusterError(f"the cluster{where} did not answer in time",
                                "check it is up, or raise --timeout")
        if "certificate" in text or "ssl" in text:
            return ClusterError(f"TLS handshake with the cluster{where} failed ({reason})",
                                "pass --ca-certs with the cluster's CA bundle")
        return ClusterError(f"cannot connect to the cluster{where} ({reason})",
                            "check --url and that the cluster is running")
    if status == 401:
        return ClusterError(f"the cluster{where} rejected the credentials (401)",
                            "check --user/--password, --api-key or --bearer-token")
    if status == 403:
        return ClusterError(f"the credentials lack a permission this needs (403: {reason})",
                            "grant read access to the index (and manage for --install-script)")
    if status == 400 and "media_type_header_exception" in str(exc):
        return client_too_new()
    closed = _closed_index(exc)
    if closed is not None:
        return ClusterError(f"index {closed!r} is closed (searches and statistics need it open)",
                            f"open it with POST /{closed}/_open, or pass an open index")
    if status == 429 or status in (502, 503, 504):
        return ClusterError(f"the cluster{where} stayed overloaded or unavailable "
                            f"({status}) after retries", "try again later")
    return ClusterError(f"the cluster refused the request ({status}: {reason})")


def _closed_index(exc: BaseException) -> str | None:
    """The index name of an ``index_closed_exception``, else None."""
    info = getattr(exc, "info", None) or getattr(exc, "body", None)
    error = info.get("error") if isinstance(info, Mapping) else None
    if not isinstance(error, Mapping):
        return None
    causes = [c for c in (error.get("root_cause") or []) if isinstance(c, Mapping)]
    for cause in [*causes, error]:
        if cause.get("type") == "index_closed_exception":
            return str(cause.get("index") or "?")
    return None


# --- connecting from a URL: esqlog.connection ------------------------------------------------

_MOVED = frozenset({"ConnectionSettings", "connect", "detect_flavor", "make_client"})


def __getattr__(name: str) -> Any:
    """``from esqlog.engine import ConnectionSettings`` still works (its historical home).

    Resolved lazily because esqlog.connection builds on this module: an eager import here
    would be circular.
    """
    if name in _MOVED:
        from esqlog import connection

        return getattr(connection, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
