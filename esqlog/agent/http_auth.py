"""Streamable HTTP for ``esqlog mcp --transport http``, behind a bearer token when asked.

The SDK checks Host/Origin only when bound to loopback; on any other interface anyone who
can reach the port could search the index. So ``esqlog mcp`` refuses a non-loopback
``--host`` unless ``--auth-token-file`` is given, and then every HTTP request must carry
``Authorization: Bearer <token>`` (compared in constant time); anything else is a 401
before the MCP app sees it. A small ASGI wrapper rather than the SDK's OAuth resource
server: one shared secret needs no authorization server and no token introspection.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 or the name localhost: reachable from this machine only."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # another host name: it may resolve to any interface


class BearerAuth:
    """ASGI middleware: HTTP requests without the right bearer token get 401."""

    def __init__(self, app: App, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self._expected):
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"text/plain; charset=utf-8"),
                            (b"www-authenticate", b'Bearer realm="esqlog"'),
                        ],
                    }
                )
                await send(
                    {"type": "http.response.body", "body": b"missing or wrong bearer token\n"}
                )
                return
        await self.app(scope, receive, send)


def serve_http(server: Any, host: str, port: int, token: str | None) -> None:
    """Run ``server`` (an MCPServer) over streamable HTTP until interrupted."""
    import uvicorn

    app: App = server.streamable_http_app(host=host)
    if token is not None:
        app = BearerAuth(app, token)
    uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning")).run()
