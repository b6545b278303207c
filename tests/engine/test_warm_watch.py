"""esqlog plugin warm --watch on a real node (esqlog.identifiers.warm_watch): the node's own
answers give its id, its JVM's start time and the shards it holds; the first look warms it,
a look after that only looks; the command says what it did and stops cleanly on Ctrl-C.
Which nodes a look warms after a restart or a moved copy is tests/unit/test_warm_watch_unit.py's.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner

from esqlog.calibration.files import load_calibration
from esqlog.cli import main
from esqlog.engine.client import Engine
from esqlog.identifiers import warm_watch
from esqlog.identifiers.files import load_with_vocabulary
from esqlog.identifiers.warm_watch import WatchJob, node_keys_plan, watch
from tests.support.engines import ENGINE_URLS, call
from tests.support.node_plans import Planned, planned_index


@pytest.fixture(scope="module")
def planned(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Planned]:
    with planned_index(engine, tmp_path_factory.mktemp("warm-watch"), 2) as found:
        yield found


def _job(planned: Planned) -> WatchJob:
    record = load_calibration(planned.path)
    assert record.word_lists
    stats, vocab = load_with_vocabulary(record)
    return WatchJob("code", record.index, record.field, record.word_lists, stats, vocab)


def test_a_look_reads_the_nodes_id_start_time_and_copies(planned: Planned) -> None:
    keys = planned.engine.run(node_keys_plan(planned.index))
    node = next(iter(call(planned.engine, "GET", "/_nodes/_local")["nodes"]))
    assert list(keys) == [node]
    started, shards = keys[node]
    assert shards == (0, 1)
    assert time.time() - 7 * 86_400 < started / 1000 <= time.time()


def test_the_first_look_warms_and_the_next_only_looks(planned: Planned) -> None:
    said: list[str] = []
    slept: list[float] = []
    watch(
        planned.engine.run, [_job(planned)], 5, said.append, most=12, rounds=3, sleep=slept.append
    )
    node = next(iter(call(planned.engine, "GET", "/_nodes/_local")["nodes"]))
    assert len(said) == 1, said
    assert said[0].startswith(f"code: warmed words on node {node} 12 (of 1 holding it), ")
    assert slept == [5, 5]


def test_the_command_watches_until_interrupted(
    planned: Planned, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--watch warms, keeps looking, and ends on Ctrl-C with a line, exit 0: here the watch
    runs one look, then the interrupt comes."""
    real = warm_watch.watch

    def one_look(*args: Any, **kwargs: Any) -> None:
        real(*args, **{**kwargs, "rounds": 1})
        raise KeyboardInterrupt

    monkeypatch.setattr(warm_watch, "watch", one_look)
    url = ENGINE_URLS[planned.engine.flavor]
    result = CliRunner().invoke(
        main,
        ["plugin", "warm", "--url", url, "--calibration", str(planned.path), "--watch", "2"],
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].endswith("watching 1 calibration(s) every 2 s (Ctrl-C stops)")
    assert "warmed words on node" in lines[1] and lines[-1].endswith(" stopped")
    bad = CliRunner().invoke(
        main,
        ["plugin", "warm", "--url", url, "--calibration", str(planned.path), "--watch", "0"],
    )
    assert bad.exit_code == 2 and "--watch" in bad.output
