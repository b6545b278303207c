"""What a failed request means: its status, whether to retry, and the one line a user reads.

Both clients raise their own exception types (elasticsearch's ApiError and TransportError,
opensearch-py's TransportError and ConnectionError); the functions here read either, so
that retries and messages are decided once for both engines.
"""

from __future__ import annotations

import logging
import random
import re
import time
from collections.abc import Callable, Mapping
from typing import TypeVar

from esqlog.errors import ClusterError, redact
from esqlog.extras import client_too_new

T = TypeVar("T")
RETRYABLE_STATUS = frozenset({429, 502, 503, 504})
logger = logging.getLogger("esqlog")


def failure_label(exc: BaseException) -> str:
    """The status of a failed request for a log line, or what kind of failure it was."""
    status = error_status(exc)
    return str(status) if status is not None else f"failed ({type(exc).__name__})"


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
            logger.info(
                "retry %d of %d in %.2f s after %s",
                attempt,
                attempts - 1,
                delay,
                failure_label(exc),
            )
            if on_retry is not None:
                on_retry(attempt, exc, delay)
            time.sleep(delay)
    raise AssertionError("unreachable")


#: the innermost cause in a client's nested connection error text
_ROOT_CAUSE = (
    re.compile(r"\[Errno -?\d+\] ([^'\")\]]+)"),
    re.compile(r"RemoteDisconnected\(['\"]([^'\"]+)"),
)


def unreachable_reason(exc: BaseException) -> str | None:
    """The short cause when the engine could not be reached at all (refused, reset, closed
    without an answer), else None: a status, a timeout, a TLS or name problem are not that.

    Why apart from describe_failure: a long-running caller (esqlog mcp) says "unreachable"
    in one short line, and the clients nest the cause three reprs deep."""
    if not is_client_error(exc) or error_status(exc) is not None or is_timeout(exc):
        return None
    text = error_reason(exc)
    lowered = text.lower()
    if any(word in lowered for word in ("certificate", "ssl", "resolve", "name or service")):
        return None
    for pattern in _ROOT_CAUSE:
        found = pattern.search(text)
        if found:
            return found.group(1).strip()
    return redact(text)[:120]


def describe_failure(exc: BaseException, url: str | None = None) -> ClusterError:
    """Turn a client exception into a one-line error naming the problem and the fix."""
    where = f" at {redact(url)}" if url else ""
    status = error_status(exc)
    reason = redact(error_reason(exc))
    if status is None:
        text = reason.lower()
        if (
            "name or service not known" in text
            or "nodename nor servname" in text
            or ("failed to resolve" in text or "temporary failure in name resolution" in text)
        ):
            return ClusterError(
                f"cannot resolve the cluster host{where}", "check the hostname in --url"
            )
        if "timed out" in text or "timeout" in text:
            return ClusterError(
                f"the cluster{where} did not answer in time", "check it is up, or raise --timeout"
            )
        if "certificate" in text or "ssl" in text:
            return ClusterError(
                f"TLS handshake with the cluster{where} failed ({reason})",
                "pass --ca-certs with the cluster's CA bundle",
            )
        return ClusterError(
            f"cannot connect to the cluster{where} ({reason})",
            "check --url and that the cluster is running",
        )
    if status == 401:
        return ClusterError(
            f"the cluster{where} rejected the credentials (401)",
            "check --user/--password, --api-key or --bearer-token",
        )
    if status == 403:
        return ClusterError(
            f"the credentials lack a permission this needs (403: {reason})",
            "grant read access to the index (and manage for --install-script)",
        )
    if status == 400 and "media_type_header_exception" in str(exc):
        return client_too_new()
    closed = _closed_index(exc)
    if closed is not None:
        return ClusterError(
            f"index {closed!r} is closed (searches and statistics need it open)",
            f"open it with POST /{closed}/_open, or pass an open index",
        )
    if status == 429 or status in (502, 503, 504):
        return ClusterError(
            f"the cluster{where} stayed overloaded or unavailable ({status}) after retries",
            "try again later",
        )
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
