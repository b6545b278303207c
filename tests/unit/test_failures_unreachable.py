"""unreachable_reason: a request that reached no engine (refused, closed without an answer)
has a short cause; an answer with a status, a timeout or a TLS problem has none. The
refused connection is a real one: the official clients against a loopback port with
nothing listening."""

from __future__ import annotations

import socket

import pytest

from esqlog.engine.connection import ConnectionSettings, make_client
from esqlog.engine.failures import unreachable_reason

opensearchpy = pytest.importorskip("opensearchpy")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("flavor", ["elasticsearch", "opensearch"])
def test_a_refused_connection_is_unreachable(flavor: str) -> None:
    pytest.importorskip(flavor if flavor == "elasticsearch" else "opensearchpy")
    settings = ConnectionSettings(f"http://127.0.0.1:{_free_port()}", max_retries=0)
    client = make_client(settings, flavor)  # type: ignore[arg-type]
    with pytest.raises(Exception) as raised:
        if flavor == "elasticsearch":
            client.perform_request("GET", "/", headers={"accept": "application/json"})
        else:
            client.transport.perform_request("GET", "/")
    assert unreachable_reason(raised.value) == "Connection refused"


def test_an_answer_or_a_timeout_is_not_unreachable() -> None:
    assert unreachable_reason(opensearchpy.TransportError(503, "unavailable")) is None
    assert (
        unreachable_reason(opensearchpy.ConnectionTimeout("TIMEOUT", "timed out", TimeoutError()))
        is None
    )
    assert unreachable_reason(ValueError("not a client's")) is None
