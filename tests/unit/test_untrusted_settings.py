"""A --url the URL parser cannot read, and a calibration JSON naming a key twice: one line
each, credentials never shown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from esqlog.calibration.files import load_calibration, save_calibration
from esqlog.calibration.record import Calibration
from esqlog.cli import main
from esqlog.engine.connection import ConnectionSettings
from esqlog.errors import UsageError
from tests.support.adversarial import RECORD


@pytest.mark.parametrize("url", ["http://u:pw@[::1", "http://u:pw@[::1/x", "https://[fe80::1"])
def test_an_unclosed_ipv6_host_is_one_line_without_the_password(url: str) -> None:
    with pytest.raises(UsageError) as caught:
        ConnectionSettings(url)
    message = str(caught.value)
    assert "not a URL" in message and "[::1]" in message  # the fix shows the form
    assert "pw" not in message and "\n" not in message


@pytest.mark.parametrize(
    "command",
    [
        ["calibrate", "--index", "x", "--field", "body", "--out", "c.json"],
        ["index", ".", "--index", "x"],
    ],
)
def test_the_cli_says_it_in_one_line(command: list[str]) -> None:
    result = CliRunner().invoke(main, [*command, "--url", "http://u:secret@[::1"])
    assert result.exit_code != 0
    assert not isinstance(result.exception, ValueError), result.exception
    assert "not a URL" in result.output and "secret" not in result.output


def test_a_calibration_naming_a_key_twice_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    save_calibration(Calibration.from_json(RECORD), path)
    load_calibration(path)  # as written: read
    text = path.read_text()
    # the same record with its q given twice: json would keep the second silently
    doubled = text.replace('"q":', '"q": 0.1, "q":', 1)
    assert json.loads(doubled)["q"] == RECORD["q"]
    path.write_text(doubled)
    with pytest.raises(UsageError) as caught:
        load_calibration(path)
    message = str(caught.value)
    assert "'q' appears twice" in message and str(path) in message and "\n" not in message
