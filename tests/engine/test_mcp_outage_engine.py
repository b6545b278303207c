"""``esqlog mcp`` over stdio (the official SDK's client, the installed command) when the
engine stops after the server started: each call answers one line naming the URL and the
fix, at once (one connection attempt a call, no retries), and stderr stays quiet: no
traceback, nothing at start-up (a client such as Claude Code logs every stderr line of a
server as an error). The same session checks what the server advertises: tools only, no
empty prompts or resources capabilities (a client adds tools of its own for those), and
the mode it chose in its serverInfo description instead of a stderr line.

The engine "stops" behind a loopback relay: it forwards to the real node while the server
starts, then accepts and closes every connection, counting them.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from esqlog.calibration.calibrate import calibrate
from esqlog.calibration.files import save_calibration
from esqlog.engine.client import Engine
from tests.support.engines import ENGINE_URLS, bulk_index, call, create_index

anyio = pytest.importorskip("anyio")
pytest.importorskip("mcp")


class Relay:
    """A loopback port forwarding to ``target`` until ``stop()``; then every connection is
    accepted, counted and closed at once, as a stopped engine's port would fail it."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target, self.stopped, self.refused = target, False, 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.open: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if self.stopped:
                self.refused += 1
                client.close()
                continue
            upstream = socket.create_connection(self.target)
            self.open += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass

    def stop(self) -> None:
        self.stopped = True
        for s in self.open:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()

    def close(self) -> None:
        self.listener.close()


@pytest.fixture(scope="module")
def outage(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    index = create_index(
        engine,
        shards=1,
        mappings={"properties": {"content": {"type": "text"}, "path": {"type": "keyword"}}},
    )
    folder = tmp_path_factory.mktemp("outage")
    try:
        bulk_index(
            engine,
            index,
            [
                {"id": str(i), "content": f"func read{i}() error", "path": f"f{i}.go"}
                for i in range(20)
            ],
        )
        cal_file = save_calibration(calibrate(engine, index, "content"), folder / "cal.json")
        host, port = ENGINE_URLS[engine.flavor].rsplit("/", 1)[-1].rsplit(":", 1)
        relay = Relay((host, int(port)))
        try:
            yield anyio.run(_conversation, relay, index, cal_file, folder)
        finally:
            relay.close()
    finally:
        call(engine, "DELETE", f"/{index}")


async def _conversation(relay: Relay, index: str, cal_file: Path, folder: Path) -> dict[str, Any]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    url = f"http://127.0.0.1:{relay.port}"
    params = StdioServerParameters(
        command=str(Path(sys.executable).with_name("esqlog")),
        args=["mcp", "--url", url, "--index", index, "--calibration", str(cal_file), "--no-watch"],
        env=dict(os.environ),
    )
    errors = folder / "stderr.txt"
    out: dict[str, Any] = {"url": url}
    with errors.open("w", encoding="utf-8") as sink:
        async with (
            stdio_client(params, errlog=sink) as (read, write),
            ClientSession(read, write) as session,
        ):
            init = await session.initialize()
            out["capabilities"] = init.capabilities
            out["description"] = init.server_info.description
            out["started"] = await session.call_tool("search_code", {"query": "read1"})
            out["stderr at start"] = errors.read_text(encoding="utf-8")
            relay.stop()
            out["calls"] = [
                await session.call_tool("search_code", {"query": "read1 error"}) for _ in range(2)
            ]
            out["attempts"] = relay.refused
    out["stderr"] = errors.read_text(encoding="utf-8")
    return out


def _text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def test_only_tools_are_advertised(outage: dict[str, Any]) -> None:
    capabilities = outage["capabilities"]
    assert capabilities.tools is not None
    assert capabilities.prompts is None and capabilities.resources is None
    assert capabilities.completions is None and capabilities.logging is None


def test_nothing_on_stderr_at_start_and_the_mode_in_the_server_info(outage: dict[str, Any]) -> None:
    assert not outage["started"].is_error, _text(outage["started"])
    assert outage["stderr at start"] == ""
    assert outage["description"].startswith("mode boost: ")


def test_a_stopped_engine_is_one_line_at_once(outage: dict[str, Any]) -> None:
    for result in outage["calls"]:
        text = _text(result)
        assert result.is_error, text
        assert len(text.splitlines()) == 1, text
        assert f": search engine at {outage['url']} unreachable: " in text, text
        assert text.endswith("; start it or check --url"), text
    # one connection attempt a call: the server's client does not retry
    assert outage["attempts"] == len(outage["calls"])
    assert "Traceback" not in outage["stderr"]
    assert len(outage["stderr"].splitlines()) <= 1, outage["stderr"]
