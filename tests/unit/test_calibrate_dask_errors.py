"""``esqlog calibrate --dask``'s mistakes are one line each, before any cluster is read.

Nothing listens at the ``--url`` here either: a check that let the run reach the engine
would fail with exit 3 (cannot connect) instead of naming the Dask problem.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from esqlog.engine.connection import ConnectionSettings
from esqlog.errors import UsageError
from esqlog.identifiers.calibrate import calibrate_identifiers
from esqlog.identifiers.dask_scan import dask_scheduler
from tests.support.adversarial import unused_url
from tests.support.esqlog_runs import calibrate_run, one_line_error


def _closed_scheduler() -> str:
    return "tcp://" + unused_url().removeprefix("http://")


def test_dask_without_identifiers_names_the_flag(tmp_path: Path) -> None:
    line = one_line_error(
        calibrate_run(
            unused_url(),
            "code",
            "--vocabulary",
            "--out",
            str(tmp_path / "c.json"),
            "--dask",
            _closed_scheduler(),
        ),
        2,
    )
    assert "--dask runs the --identifiers scan" in line and "add --vocabulary --identifiers" in line


def test_an_unreachable_scheduler_is_one_line_and_fails_fast(tmp_path: Path) -> None:
    started = time.monotonic()
    address = _closed_scheduler()
    run = calibrate_run(
        unused_url(),
        "code",
        "--vocabulary",
        "--identifiers",
        "--out",
        str(tmp_path / "c.json"),
        "--dask",
        address,
        "--dask-timeout",
        "1",
    )
    line = one_line_error(run, 2)
    assert f"cannot reach the Dask scheduler at '{address}'" in line, line
    assert "--dask tcp://HOST:8786" in line
    assert time.monotonic() - started < 30  # the timeout, not Dask's default of 30 s or more
    assert not (tmp_path / "c.json").exists()


def test_the_library_says_the_same_and_needs_connection_settings() -> None:
    with (
        pytest.raises(UsageError, match="cannot reach the Dask scheduler"),
        dask_scheduler(_closed_scheduler(), timeout=0.5),
    ):
        pass
    with pytest.raises(UsageError, match="needs the connection settings"):
        calibrate_identifiers(None, "code", "body", dask=_closed_scheduler())  # type: ignore[arg-type]


def test_without_the_extra_the_line_names_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if not installed
    from click.testing import CliRunner

    from esqlog.cli import main

    result = CliRunner().invoke(
        main,
        [
            "calibrate",
            "--url",
            unused_url(),
            "--index",
            "code",
            "--field",
            "body",
            "--vocabulary",
            "--identifiers",
            "--out",
            str(tmp_path / "c.json"),
            "--dask",
            _closed_scheduler(),
        ],
    )
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install 'esqlog[distributed]'" in lines[0], lines
    with pytest.raises(UsageError, match=r"esqlog\[distributed\]"), dask_scheduler("tcp://x:1"):
        pass


def test_connection_settings_travel_without_showing_their_secrets() -> None:
    settings = ConnectionSettings(
        "https://search.example:9200", user="reader", password="s3cret-pw", api_key="k3y-value"
    )
    assert "s3cret" not in repr(settings) and "k3y" not in repr(settings)


def test_a_malformed_address_is_one_line(tmp_path: Path) -> None:
    line = one_line_error(
        calibrate_run(
            unused_url(),
            "code",
            "--vocabulary",
            "--identifiers",
            "--out",
            str(tmp_path / "c.json"),
            "--dask",
            "scheduler-without-port",
        ),
        2,
    )
    assert "is not a scheduler address" in line and "--dask tcp://HOST:8786" in line


def test_distributed_is_imported_only_for_dask() -> None:
    """A calibration without --dask never asks for it (the runtime dependencies stay few).

    Every attempt to import ``distributed`` or ``dask`` is recorded by a finder placed
    first, installed or not: an import guarded by ``try/except ImportError`` counts too."""
    code = (
        "import sys\n"
        "asked = []\n"
        "class Spy:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('distributed', 'dask'):\n"
        "            asked.append(name)\n"
        "        return None\n"
        "sys.meta_path.insert(0, Spy())\n"
        "from esqlog.cli import main\n"
        f"sys.argv = ['esqlog', 'calibrate', '--url', {unused_url()!r}, '--index', 'x',"
        " '--field', 'body']\n"
        "try:\n    main(prog_name='esqlog')\nexcept SystemExit:\n    pass\n"
        "print(sorted(set(asked)))"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert run.stdout.strip().splitlines()[-1] == "[]", run.stdout
