"""Which client the CLI needs, and the one line when it is not installed (no client is a
dependency of esqlog: an application wraps the client it already has)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from esqlog.engine import connection
from esqlog.engine.connection import ConnectionSettings, detect_flavor, make_client
from esqlog.errors import UsageError

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = ConnectionSettings("http://127.0.0.1:9")  # never reached: refused before


def test_a_plain_install_depends_on_no_client() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert not [d for d in project["dependencies"] if d.startswith(("elasticsearch", "opensearch"))]
    extras = project["optional-dependencies"]
    assert extras["opensearch"] == ["opensearch-py>=2.4"]


def test_no_client_at_all_is_one_line_naming_the_extras(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connection, "installed_clients", lambda: set())
    with pytest.raises(UsageError) as caught:
        detect_flavor(SETTINGS)
    text = str(caught.value)
    assert "\n" not in text and "esqlog[opensearch]" in text and "esqlog[es8]" in text


@pytest.mark.parametrize(
    ("flavor", "extra"), [("opensearch", "esqlog[opensearch]"), ("elasticsearch", "esqlog[es8]")]
)
def test_the_missing_client_of_a_known_engine_is_named(
    monkeypatch: pytest.MonkeyPatch, flavor: str, extra: str
) -> None:
    monkeypatch.setattr(connection, "installed_clients", lambda: set())
    with pytest.raises(UsageError, match=extra.replace("[", r"\[").replace("]", r"\]")):
        make_client(SETTINGS, flavor)  # type: ignore[arg-type]


def test_both_clients_are_found_here() -> None:
    assert connection.installed_clients() == {"elasticsearch", "opensearch"}
