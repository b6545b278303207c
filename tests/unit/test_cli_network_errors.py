"""Network faults that need no node: a refused connection, a name that does not resolve, a
server that accepts and never answers. Each is one ``error:`` line naming the fix, without
the URL's credentials, and a timed-out request is not sent again.

Every run is the real ``esqlog`` in its own process against a closed port or a fake server,
so the output is what a user (or a CI log) would see.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import elastic_transport
import opensearchpy
import pytest

from esqlog.engine.failures import is_retryable
from esqlog.errors import UsageError
from tests.support.adversarial import PASSWORD
from tests.support.adversarial import unused_url as _unused_url
from tests.support.esqlog_runs import calibrate_args as _calibrate_args
from tests.support.esqlog_runs import calibrate_run as _calibrate
from tests.support.esqlog_runs import no_secret as _no_secret
from tests.support.esqlog_runs import one_line_error, run_esqlog


def _unused_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_connection_refused_is_one_line() -> None:
    url = f"http://127.0.0.1:{_unused_port()}"
    line = one_line_error(run_esqlog(*_calibrate_args(url, "code")), 3)
    assert line.startswith(f"error: cannot connect to the cluster at {url}")
    assert "check --url and that the cluster is running" in line


def test_dns_failure_names_the_hostname_problem() -> None:
    url = "http://no-such-host.invalid:9200"
    line = one_line_error(run_esqlog(*_calibrate_args(url, "code")), 3)
    assert line == (f"error: cannot resolve the cluster host at {url}; check the hostname in --url")


def test_silent_server_times_out_in_one_line() -> None:
    with socket.socket() as server:  # accepts connections (backlog), never answers
        server.bind(("127.0.0.1", 0))
        server.listen(16)
        url = f"http://127.0.0.1:{server.getsockname()[1]}"
        started = time.monotonic()
        result = run_esqlog(*_calibrate_args(url, "code", "--timeout", "0.2"))
        elapsed = time.monotonic() - started
    line = one_line_error(result, 3)
    assert line == (
        f"error: the cluster at {url} did not answer in time; check it is up, or raise --timeout"
    )
    assert elapsed < 30


class SilentServer:
    """Accepts TCP connections and never answers; counts how many were opened."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.2)
        self.accepted: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self.sock.getsockname()[1])

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted.append(conn)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        for conn in self.accepted:
            conn.close()
        self.sock.close()


@pytest.fixture
def silent() -> Iterator[SilentServer]:
    server = SilentServer()
    yield server
    server.close()


def test_redact_hides_the_userinfo_of_every_url() -> None:
    from esqlog.errors import redact

    text = "at http://u:p@h:1/x and https://tok@h2 but not mail a@b.c or http://h3/@x"
    assert redact(text) == (
        "at http://***@h:1/x and https://***@h2 but not mail a@b.c or http://h3/@x"
    )
    assert (
        str(UsageError(f"bad https://me:{PASSWORD}@host", f"see http://me:{PASSWORD}@x"))
        == "bad https://***@host; see http://***@x"
    )


def test_url_credentials_never_appear_in_network_errors(silent: SilentServer) -> None:
    refused = _unused_url().replace("http://", f"http://user:{PASSWORD}@")
    runs = {
        "refused": (_calibrate(refused), 3, "cannot connect to the cluster at http://127.0.0.1"),
        "refused --debug": (
            run_esqlog(
                "--debug", "calibrate", "--url", refused, "--index", "code", "--field", "body"
            ),
            1,
            None,
        ),
        "dns": (
            _calibrate(f"http://user:{PASSWORD}@no-such-host.invalid:9200"),
            3,
            "cannot resolve the cluster host at http://no-such-host.invalid:9200",
        ),
        "timeout": (
            _calibrate(
                f"http://user:{PASSWORD}@127.0.0.1:{silent.port}", "code", "--timeout", "0.3"
            ),
            3,
            "did not answer in time",
        ),
        "port out of range": (
            _calibrate(f"http://user:{PASSWORD}@127.0.0.1:99999"),
            2,
            "--url 'http://***@127.0.0.1:99999' has a port outside 1-65535",
        ),
        "no scheme": (
            _calibrate(f"user:{PASSWORD}@127.0.0.1:9200"),
            2,
            "--url must start with http:// or https://",
        ),
    }
    for name, (result, code, expected) in runs.items():
        _no_secret(result, PASSWORD)
        if expected is None:  # --debug shows the traceback, still without the secret
            assert result.returncode == code and "Traceback" in result.stderr, name
        else:
            assert expected in one_line_error(result, code), name


def test_timeout_bounds_the_whole_wait_no_retry_of_a_timed_out_request(
    silent: SilentServer,
) -> None:
    result = _calibrate(f"http://127.0.0.1:{silent.port}", "code", "--timeout", "0.5")
    assert "did not answer in time" in one_line_error(result, 3)
    # One connection: the request that timed out was not sent again (each retry of a
    # timed-out request waited another full --timeout: 4 connections, 4x the wait).
    assert len(silent.accepted) == 1


def test_timeouts_are_not_retried_by_esqlog_either() -> None:
    """esqlog's own retry loop leaves timeouts alone, for both clients' exception types."""
    es_timeout = elastic_transport.ConnectionTimeout("timed out")
    os_timeout = opensearchpy.ConnectionTimeout("TIMEOUT", "timed out", None)
    refused = elastic_transport.ConnectionError("refused")
    assert not is_retryable(es_timeout) and not is_retryable(os_timeout)
    assert is_retryable(refused)
