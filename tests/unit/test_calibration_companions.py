"""A calibration copied without its .npz companions: esqlog mcp names every missing file by
path, in one line and exit 2, instead of ranking in boost mode because the calibration
"has no identifiers statistics". No engine: the check runs before the first request."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from esqlog.calibration.files import load_calibration, save_calibration
from esqlog.cli import main
from esqlog.errors import UsageError
from esqlog.identifiers.calibrate import auto_mode
from tests.support.wrapper_units import calibration

DIGEST = "0123456789abcdef" * 4
VOCAB = f"code.qlog.vocab.{DIGEST[:16]}.npz"
IDENTS = f"code.qlog.idents.{DIGEST[:16]}.npz"


def _copied_json(folder: Path, applies: bool | None, present: tuple[str, ...] = ()) -> Path:
    record = replace(
        calibration(),
        h_tok_high=0.95,
        vocabulary=VOCAB,
        vocabulary_sha256=DIGEST,
        identifiers_applies=applies,
    )
    path = save_calibration(record, folder / "code.qlog.json")
    for name in present:
        (folder / name).write_bytes(b"")
    return path


@pytest.mark.parametrize(
    ("present", "missing"), [((), (VOCAB, IDENTS)), ((VOCAB,), (IDENTS,)), ((IDENTS,), (VOCAB,))]
)
def test_every_missing_companion_is_named_by_path(
    tmp_path: Path, present: tuple[str, ...], missing: tuple[str, ...]
) -> None:
    path = _copied_json(tmp_path, applies=True, present=present)
    with pytest.raises(UsageError) as raised:
        auto_mode(load_calibration(path))
    message = str(raised.value)
    for name in (VOCAB, IDENTS):
        assert (str(tmp_path / name) in message) == (name in missing), message
    assert "identifiers statistics" not in message and "--mode boost" in message


def test_a_calibration_without_identifiers_only_needs_its_snapshot(tmp_path: Path) -> None:
    path = _copied_json(tmp_path, applies=None, present=(VOCAB,))
    assert auto_mode(load_calibration(path))[0] == "boost"  # nothing missing: no error


@pytest.mark.parametrize("mode", ["auto", "identifiers"])
def test_esqlog_mcp_says_it_in_one_line(tmp_path: Path, mode: str) -> None:
    path = _copied_json(tmp_path, applies=True)
    result = CliRunner().invoke(
        main,
        [
            "mcp",
            "--url",
            "http://127.0.0.1:9",
            "--index",
            "code",
            "--calibration",
            str(path),
            "--mode",
            mode,
        ],
    )
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    assert str(tmp_path / VOCAB) in lines[0] and str(tmp_path / IDENTS) in lines[0]
    json.loads(path.read_text(encoding="utf-8"))  # the record itself is left as it was
