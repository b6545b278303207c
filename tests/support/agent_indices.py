"""Real repositories of tests/data/agent-names indexed by ``esqlog index --calibrate``, as
the agent's engine tests search them (one copy per test module, outside the source tree)."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from esqlog.calibration.record import Calibration
from esqlog.cli import main
from esqlog.cli.query import load_for_field
from esqlog.engine.client import Engine
from tests.support.engines import ENGINE_URLS

DATA = Path(__file__).resolve().parents[1] / "data" / "agent-names"


def indexed_copy(
    engine: Engine,
    tmp_path_factory: pytest.TempPathFactory,
    repo: str,
    prefix: str,
    created: list[str],
) -> tuple[str, Calibration, str, Path]:
    """(index, calibration, field, folder) of a copy of ``repo``; the index's name is added
    to ``created`` before it exists, so that the caller deletes it whatever happens."""
    root = tmp_path_factory.mktemp(repo) / repo
    shutil.copytree(DATA / repo, root)
    index = f"{prefix}-{uuid.uuid4().hex[:8]}"
    created.append(index)
    calibration = root.parent / "cal.json"
    result = CliRunner().invoke(
        main,
        [
            "index",
            str(root),
            "--index",
            index,
            "--url",
            ENGINE_URLS[engine.flavor],
            "--calibrate",
            str(calibration),
        ],
    )
    assert result.exit_code == 0, result.output
    cal, field = load_for_field(calibration, None)
    return index, cal, field, root
