"""``esqlog calibrate`` refuses bad flags before connecting: one ``error:`` line, exit 2.

Nothing listens at the ``--url`` given here, so a check that let the run connect would fail
with exit 3 (cannot connect) instead. tests/unit/test_calibrate_arguments.py checks the same
rules through the Python API.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from esqlog.cli import main
from tests.support.adversarial import unused_url as _unused_url
from tests.support.esqlog_runs import assert_vocabulary_needs_out as _assert_needs_out
from tests.support.esqlog_runs import calibrate_run as _calibrate
from tests.support.esqlog_runs import one_line_error


def test_calibrate_vocabulary_needs_out_before_connecting() -> None:
    """A usage error needs no cluster: reported even when none answers at --url."""
    _assert_needs_out("http://127.0.0.1:9")


@pytest.mark.parametrize("parallel", ["0", "65"])
def test_calibrate_parallel_out_of_range_is_one_line(parallel: str) -> None:
    """Checked before connecting (no cluster answers at --url)."""
    result = CliRunner().invoke(
        main,
        [
            "calibrate",
            "--url",
            "http://127.0.0.1:9",
            "--index",
            "any",
            "--field",
            "body",
            "--exact",
            "--parallel",
            parallel,
        ],
    )
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --parallel must be between 1 and"), lines
    assert "Traceback" not in result.output


def test_seed_and_sample_bounds_are_checked_before_connecting_with_the_right_fix() -> None:
    url = _unused_url()  # nothing listens: exit 2 proves no connection was needed
    seed = one_line_error(_calibrate(url, "code", "--seed", str(2**64)), 2)
    assert f"--seed must be a signed 64-bit integer, got {2**64}" in seed
    low = one_line_error(_calibrate(url, "code", "--sample", "0"), 2)
    assert "got 0; pass a larger --sample" in low
    high = one_line_error(_calibrate(url, "code", "--sample", "100001"), 2)
    assert "got 100001; pass a smaller --sample" in high
