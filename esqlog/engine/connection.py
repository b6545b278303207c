"""Connecting from a URL and credentials: the CLI's path (applications bring their own client).

Why a module of its own: this is where secrets are handled. The URL, user, password, API
key and bearer token are checked and normalised once (:class:`ConnectionSettings`) before
any client sees them, because the clients turn a bad value into a traceback that prints
it; and the Authorization header is built here, never logged.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from esqlog.engine.client import Engine, Flavor, parse_version
from esqlog.engine.failures import RETRYABLE_STATUS
from esqlog.engine.steps import Request
from esqlog.errors import UsageError, redact


@dataclass(frozen=True)
class ConnectionSettings:
    """How to reach a cluster. Secrets are held here only; __repr__ never shows them."""

    url: str
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    api_key: str | None = field(default=None, repr=False)
    bearer_token: str | None = field(default=None, repr=False)
    ca_certs: str | None = None
    verify_certs: bool = True
    timeout: float = 30.0
    max_retries: int = 3

    def __post_init__(self) -> None:
        """Check the URL and credentials before any client sees them.

        Why here: the clients turn a bad port, a CR in a key file or a non-ASCII password
        into tracebacks that print the URL or the header, secret included. Credentials in
        the URL (``http://user:pw@host``) move to ``user``/``password``, so the URL kept
        here, and shown in every message, carries none.
        """
        fix = "pass e.g. --url https://localhost:9200"
        try:
            parts = urlsplit(self.url)
        except ValueError as exc:  # "Invalid IPv6 URL": an unclosed [ of an IPv6 host
            raise UsageError(
                f"--url {redact(self.url)!r} is not a URL ({exc})",
                "close an IPv6 host in brackets, e.g. --url http://[::1]:9200",
            ) from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UsageError("--url must be http:// or https:// followed by a host", fix)
        try:
            _ = parts.port
        except ValueError:
            raise UsageError(
                f"--url {redact(self.url)!r} has a port outside 1-65535", fix
            ) from None
        if "@" in parts.netloc:
            if self.user is not None:
                raise UsageError(
                    "credentials are given both in --url and with --user",
                    "pass them one way only (prefer --user and --password-file)",
                )
            object.__setattr__(self, "user", unquote(parts.username or ""))
            object.__setattr__(self, "password", unquote(parts.password or ""))
            netloc = parts.netloc.rpartition("@")[2]
            object.__setattr__(self, "url", urlunsplit(parts._replace(netloc=netloc)))
        for name, option in (("api_key", "--api-key"), ("bearer_token", "--bearer-token")):
            value = getattr(self, name)
            if value is not None:  # an empty value (an unset variable) means none given
                object.__setattr__(self, name, _header_token(value.strip(), option) or None)


def connect(settings: ConnectionSettings, flavor: Flavor | None = None) -> Engine:
    """A sync client for the URL, detecting the engine when ``flavor`` is not given.

    Detection asks the Elasticsearch client first: it refuses any server that does not
    identify as Elasticsearch, which is exactly the test we need.
    """
    if flavor is None:
        flavor = detect_flavor(settings)
    return Engine(make_client(settings, flavor))


def detect_flavor(settings: ConnectionSettings) -> Flavor:
    """``elasticsearch`` if the server identifies as Elasticsearch, else ``opensearch``.

    With the Elasticsearch client installed it is asked first: it refuses any server that
    does not identify as Elasticsearch, which is exactly the test needed. With only
    opensearch-py, the nodes-info version tells them apart (Elasticsearch is 7.x and later,
    OpenSearch 1.x to 3.x), and an Elasticsearch server then asks for its own client.
    """
    installed = installed_clients()
    if "elasticsearch" in installed:
        from elasticsearch import UnsupportedProductError

        client = make_client(settings, "elasticsearch")
        try:
            Engine(client).perform(Request("GET", "/_nodes/_local", NODE_VERSION))
        except UnsupportedProductError:
            return "opensearch"
        finally:
            client.close()
        return "elasticsearch"
    if "opensearch" not in installed:
        raise missing_client(None)
    client = make_client(settings, "opensearch")
    try:
        body = Engine(client).perform(Request("GET", "/_nodes/_local", NODE_VERSION))
    finally:
        client.close()
    versions = [
        str(node.get("version", "0")) for node in ((body or {}).get("nodes") or {}).values()
    ]
    major = parse_version(versions[0])[0] if versions else 0
    if major >= FIRST_ELASTICSEARCH_MAJOR:
        raise missing_client("elasticsearch", major)
    return "opensearch"


#: the nodes-info request both engines answer, whatever the user may read
NODE_VERSION = {"filter_path": "nodes.*.version"}
#: Elasticsearch's majors start at 7 where OpenSearch's (1.x to 3.x) end far below
FIRST_ELASTICSEARCH_MAJOR = 7
_CLIENT_MODULES: dict[Flavor, str] = {
    "elasticsearch": "elasticsearch",
    "opensearch": "opensearchpy",
}


def installed_clients() -> set[Flavor]:
    """Which engines' clients this environment can import (found, not imported)."""
    import importlib.util

    return {
        flavor
        for flavor, module in _CLIENT_MODULES.items()
        if importlib.util.find_spec(module) is not None
    }


def missing_client(flavor: Flavor | None, major: int | None = None) -> UsageError:
    """The one line for a client that is not installed, naming the extra that brings it."""
    if flavor == "opensearch":
        return UsageError(
            "the OpenSearch client (opensearch-py) is not installed",
            "pip install 'esqlog[opensearch]'",
        )
    if flavor == "elasticsearch":
        fix = (
            f"pip install 'esqlog[es{major}]'"
            if major in (8, 9)
            else "pip install 'esqlog[es8]' for Elasticsearch 8, 'esqlog[es9]' for 9"
        )
        return UsageError(
            "the server is Elasticsearch"
            + (f" {major}" if major else "")
            + " and its client (elasticsearch) is not installed",
            fix,
        )
    return UsageError(
        "no Elasticsearch or OpenSearch client is installed",
        "pip install 'esqlog[opensearch]', or 'esqlog[es8]' / 'esqlog[es9]' "
        "for the major of your Elasticsearch server",
    )


def make_client(settings: ConnectionSettings, flavor: Flavor, asynchronous: bool = False) -> Any:
    """Build the official client of the engine from connection settings.

    One set of options for both clients (retries, TLS, auth); only their spellings differ:
    Elasticsearch takes ``request_timeout`` and a URL, opensearch-py ``timeout``, ``hosts``
    and explicit TLS switches.
    """
    kwargs: dict[str, Any] = {
        "max_retries": settings.max_retries,
        # --timeout bounds the whole wait for a request: a timed-out one is not sent again
        "retry_on_timeout": False,
        "retry_on_status": tuple(sorted(RETRYABLE_STATUS)),
        "verify_certs": settings.verify_certs,
    }
    if settings.ca_certs:
        kwargs["ca_certs"] = settings.ca_certs
    headers = _auth_headers(settings)
    if headers:
        kwargs["headers"] = headers
    if flavor not in installed_clients():
        raise missing_client(flavor)
    if flavor == "elasticsearch":
        import elasticsearch

        kwargs["request_timeout"] = settings.timeout
        if not settings.verify_certs:
            kwargs["ssl_show_warn"] = False
        es_cls = elasticsearch.AsyncElasticsearch if asynchronous else elasticsearch.Elasticsearch
        return es_cls(settings.url, **kwargs)
    import opensearchpy

    kwargs.update(timeout=settings.timeout, ssl_show_warn=settings.verify_certs)
    if settings.url.startswith("https://"):
        kwargs.update(use_ssl=True, ssl_assert_hostname=settings.verify_certs)
    os_cls = opensearchpy.AsyncOpenSearch if asynchronous else opensearchpy.OpenSearch
    return os_cls(hosts=[settings.url], **kwargs)


def _header_token(value: str, option: str) -> str:
    """An API key or token that can travel in an HTTP header (printable ASCII), else refuse.

    Surrounding whitespace (a CRLF key file's ``\\r``) was stripped by the caller; the
    value itself is never shown, only where the bad character is.
    """
    bad = next((i for i, ch in enumerate(value) if not " " < ch <= "~"), None)
    if bad is not None:
        raise UsageError(
            f"{option} cannot be sent in an HTTP header (character {bad + 1} of "
            f"{len(value)} is not a printable ASCII character)",
            f"check the value given to {option} (API keys and tokens are ASCII)",
        )
    return value


def _auth_headers(settings: ConnectionSettings) -> dict[str, str]:
    """The Authorization header; basic auth is encoded here as UTF-8 (RFC 7617 charset).

    Why not the clients' own basic-auth options: they encode as ASCII or latin-1 and raise
    UnicodeEncodeError (with a traceback) for any other character in a user or password.
    """
    if settings.bearer_token:
        return {"authorization": f"Bearer {settings.bearer_token}"}
    if settings.api_key:
        return {"authorization": f"ApiKey {settings.api_key}"}
    if settings.user is not None:
        pair = f"{settings.user}:{settings.password or ''}".encode()
        return {"authorization": f"Basic {base64.b64encode(pair).decode('ascii')}"}
    return {}
