"""esqlog mcp's start-up checks: each problem one line on stderr and exit 2, before serving.

Over stdio an agent only sees its server close, so these lines are the user's only clue.
No engine is needed: every check runs before the first request.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from esqlog.agent.http_auth import is_loopback
from esqlog.cli import main

BASE = ["mcp", "--url", "http://127.0.0.1:9", "--index", "code"]


def _run(args: list[str]) -> Result:
    return CliRunner().invoke(main, [*BASE, *args])


def _one_line_error(result: Result) -> str:
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:"), result.output
    assert "Traceback" not in result.output
    return lines[0]


def test_relative_calibration_names_the_absolute_path_and_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    line = _one_line_error(_run(["--calibration", "code.qlog.json"]))
    assert str(tmp_path / "code.qlog.json") in line
    assert f"starts in, {tmp_path}" in line and "absolute path" in line


def test_absolute_missing_calibration_does_not_blame_the_folder(tmp_path: Path) -> None:
    line = _one_line_error(_run(["--calibration", str(tmp_path / "none.json")]))
    assert str(tmp_path / "none.json") in line and "starts in" not in line


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.5", "::", "example.org"])
def test_non_loopback_host_needs_a_token(tmp_path: Path, host: str) -> None:
    line = _one_line_error(
        _run(["--calibration", str(tmp_path / "c.json"), "--transport", "http", "--host", host])
    )
    assert f"--host {host}" in line and "--auth-token-file" in line


@pytest.mark.parametrize("content", ["", "  \n", "two words\n"])
def test_unusable_token_file(tmp_path: Path, content: str) -> None:
    token = tmp_path / "token"
    token.write_text(content, encoding="utf-8")
    line = _one_line_error(
        _run(
            [
                "--calibration",
                str(tmp_path / "c.json"),
                "--transport",
                "http",
                "--host",
                "0.0.0.0",
                "--auth-token-file",
                str(token),
            ]
        )
    )
    assert "auth token file" in line and str(token) in line


@pytest.mark.parametrize(
    ("content", "mode", "said"),
    [
        ("short-token\n", 0o600, "under 16"),
        ("a-token-of-thirty-two-characters\n", 0o644, "chmod 600"),
        ("a-token-of-thirty-two-characters\n", 0o640, "chmod 600"),
    ],
)
def test_a_guessable_or_shared_token_is_refused(
    tmp_path: Path, content: str, mode: int, said: str
) -> None:
    token = tmp_path / "token"
    token.write_text(content, encoding="utf-8")
    token.chmod(mode)
    result = _run(
        [
            "--calibration",
            str(tmp_path / "c.json"),
            "--transport",
            "http",
            "--host",
            "0.0.0.0",
            "--auth-token-file",
            str(token),
        ]
    )
    line = _one_line_error(result)
    assert said in line and "a-token" not in result.output and "short-token" not in result.output


def test_token_file_without_http_is_refused(tmp_path: Path) -> None:
    line = _one_line_error(
        _run(
            [
                "--calibration",
                str(tmp_path / "c.json"),
                "--auth-token-file",
                str(tmp_path / "token"),
            ]
        )
    )
    assert "--transport http" in line


def test_token_is_never_printed(tmp_path: Path) -> None:
    """With a good token the next check (the calibration) fails; the token is not shown."""
    token = tmp_path / "token"
    token.write_text("s3cret-token-value\n", encoding="utf-8")
    token.chmod(0o600)
    result = _run(
        [
            "--calibration",
            str(tmp_path / "c.json"),
            "--transport",
            "http",
            "--host",
            "0.0.0.0",
            "--auth-token-file",
            str(token),
        ]
    )
    assert "calibration file" in _one_line_error(result)
    assert "s3cret" not in result.output


def test_missing_mcp_extra_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK itself is imported (esqlog.agent.server only imports it lazily)."""
    monkeypatch.setitem(sys.modules, "mcp", None)
    monkeypatch.setitem(sys.modules, "mcp.server.mcpserver", None)
    line = _one_line_error(_run(["--calibration", str(tmp_path / "c.json")]))
    assert "pip install 'esqlog[mcp]'" in line


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.9.0.1", True),
        ("localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("::", False),
        ("10.0.0.1", False),
        ("myhost", False),
    ],
)
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_a_bracketed_ipv6_host_is_taken_and_an_unknown_one_is_one_line() -> None:
    from esqlog.cli.mcp_cmd import listen_host
    from esqlog.errors import UsageError

    assert listen_host("[::1]") == "::1" and listen_host(" 127.0.0.1 ") == "127.0.0.1"
    with pytest.raises(UsageError) as error:
        listen_host("[::1")
    assert "--host" in str(error.value) and "\n" not in str(error.value)
