"""The CLI's progress bars (esqlog.cli.shared_options.progress_factory): a bar ends when its
work is done, also when the work learns it does fewer units than it announced (a warm
stopped at its cache share), and shows what was done, not what was announced."""

from __future__ import annotations

import pytest

from esqlog.cli.shared_options import progress_factory


def test_a_bar_ends_at_the_total_its_work_settles_on(capfd: pytest.CaptureFixture[str]) -> None:
    bars = progress_factory(True, "words")
    assert bars is not None
    advance = bars("warm code", 10)
    advance(2)
    advance(1)
    assert "warm code" not in capfd.readouterr().err  # still running: nothing final yet
    advance(0, total=3)
    err = capfd.readouterr().err
    assert "warm code" in err and "3/3" in err and "/10" not in err


def test_a_bar_ends_once_its_announced_units_are_done(capfd: pytest.CaptureFixture[str]) -> None:
    bars = progress_factory(True, "words")
    assert bars is not None
    advance = bars("warm code", 4)
    advance(4)
    assert "4/4" in capfd.readouterr().err


def test_no_bars_when_disabled() -> None:
    assert progress_factory(False) is None
