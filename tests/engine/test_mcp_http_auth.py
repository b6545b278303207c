"""``esqlog mcp --transport http --auth-token-file F`` over real HTTP on 127.0.0.1.

Without the token, or with a wrong one, every request is a 401 before the MCP app sees it;
with ``Authorization: Bearer <token>`` the SDK's own streamable HTTP client searches.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from esqlog.calibration.calibrate import calibrate
from esqlog.calibration.files import save_calibration
from esqlog.engine.client import Engine
from tests.support.engines import ENGINE_URLS, bulk_index, call, create_index

anyio = pytest.importorskip("anyio")
httpx2 = pytest.importorskip("httpx2")
pytest.importorskip("mcp")

TOKEN = "a1b2c3d4e5f6-test-token"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}


@pytest.fixture(scope="module")
def server(opensearch: Engine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("http-auth")
    index = create_index(
        opensearch,
        shards=1,
        mappings={
            "properties": {
                "content": {"type": "text"},
                "path": {"type": "keyword"},
                "start_line": {"type": "integer"},
            }
        },
    )
    docs = [
        {
            "id": f"d{i}",
            "content": f"func Parse{i}Header() error {{ return nil }}\n",
            "path": f"p{i}.go",
            "start_line": 1,
        }
        for i in range(20)
    ]
    process = None
    try:
        bulk_index(opensearch, index, docs)
        cal = save_calibration(calibrate(opensearch, index, "content"), folder / "cal.json")
        (folder / "token").write_text(TOKEN + "\n", encoding="utf-8")
        (folder / "token").chmod(0o600)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        process = subprocess.Popen(
            [
                str(Path(sys.executable).with_name("esqlog")),
                "mcp",
                "--url",
                ENGINE_URLS["opensearch"],
                "--index",
                index,
                "--calibration",
                str(cal),
                "--transport",
                "http",
                "--port",
                str(port),
                "--auth-token-file",
                str(folder / "token"),
            ],
            stdin=subprocess.DEVNULL,
        )
        for _ in range(600):  # readiness, not a timing assertion: up to 60 s to listen
            assert process.poll() is None, "esqlog mcp --transport http exited"
            with socket.socket() as s, contextlib.suppress(OSError):
                s.connect(("127.0.0.1", port))
                break
            anyio.run(anyio.sleep, 0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        if process is not None:
            process.terminate()
            process.wait(timeout=30)
        call(opensearch, "DELETE", f"/{index}")


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer wrong"},
        {"Authorization": TOKEN},
        {"Authorization": f"Bearer {TOKEN}x"},
    ],
)
def test_without_the_right_token_every_request_is_refused(
    server: str, headers: dict[str, str]
) -> None:
    answer = httpx2.post(
        server,
        json=INITIALIZE,
        headers={**headers, "Accept": "application/json, text/event-stream"},
    )
    assert answer.status_code == 401
    assert answer.headers["www-authenticate"].startswith("Bearer")
    assert TOKEN not in answer.text


def test_with_the_token_the_sdk_client_searches(server: str) -> None:
    async def search() -> tuple[Any, str]:
        from mcp.client.session import ClientSession
        from mcp.client.streamable_http import streamable_http_client

        client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"})
        async with (
            client,
            streamable_http_client(server, http_client=client) as (r, w),
            ClientSession(r, w) as session,
        ):
            await session.initialize()
            result = await session.call_tool("search_code", {"query": "Parse7Header"})
            return result, "".join(getattr(c, "text", "") for c in result.content)

    result, text = anyio.run(search)
    assert not result.is_error, text
    assert text.splitlines()[0].startswith("1. p7.go:1-1")
