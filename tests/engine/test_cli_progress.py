"""``esqlog eval --sweep`` and ``esqlog compare`` show progress on a terminal's stderr, and
nothing when stderr is a pipe. The real command in a child process, its stderr a pty."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from esqlog.engine.client import Engine
from tests.support.beir_data import BEIR, QUERIES, beir_docs
from tests.support.engines import ENGINE_URLS, bulk_index, call, create_index
from tests.support.esqlog_runs import run_esqlog

CODE = "import sys; from esqlog.cli import main; sys.exit(main(prog_name='esqlog'))"
BAR = "queries/s"  # the bar's rate column (esqlog.cli.shared_options.progress_factory)


@pytest.fixture(scope="module")
def calibrated(
    engine: Engine, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Engine, str, Path]]:
    """The BEIR Java corpus in a 2-shard index and its calibration; always deleted."""
    name = create_index(engine, shards=2)
    try:
        bulk_index(
            engine,
            name,
            [{"id": d["_id"], "body": f"{d['title']}\n{d['text']}"} for d in beir_docs()],
        )
        out = tmp_path_factory.mktemp("progress") / "cal.json"
        done = run_esqlog(
            "calibrate",
            "--url",
            ENGINE_URLS[engine.flavor],
            "--index",
            name,
            "--field",
            "body",
            "--out",
            str(out),
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        yield engine, name, out
    finally:
        call(engine, "DELETE", f"/{name}")


def _on_a_terminal(*args: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``esqlog args`` with stderr a terminal (a pty)."""
    leader, follower = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ESQLOG_")}
    child = subprocess.Popen(
        [sys.executable, "-c", CODE, *args],
        stdout=subprocess.PIPE,
        stderr=follower,
        env={**env, "COLUMNS": "120", "TERM": "xterm"},
        text=True,
    )
    os.close(follower)
    chunks: list[bytes] = []

    def drain() -> None:  # the pty's buffer is small: read while the child writes
        while True:
            try:
                data = os.read(leader, 65536)
            except OSError:  # the child closed its side
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain)
    reader.start()
    stdout, _ = child.communicate(timeout=300)
    reader.join(timeout=30)
    os.close(leader)
    return child.returncode, stdout, b"".join(chunks).decode("utf-8", "replace")


def _commands(engine: Engine, index: str, cal: Path, tmp_path: Path) -> dict[str, list[str]]:
    log = tmp_path / "log.txt"
    log.write_text(QUERIES.read_text(encoding="utf-8"), encoding="utf-8")
    url = ENGINE_URLS[engine.flavor]
    return {
        "compare": [
            "compare",
            "--url",
            url,
            "--index",
            index,
            "--queries",
            str(log),
            "--calibration",
            str(cal),
            "--limit",
            "20",
        ],
        "eval": [
            "eval",
            "--url",
            url,
            "--index",
            index,
            "--field",
            "body",
            "--queries",
            str(QUERIES),
            "--qrels",
            str(BEIR / "qrels" / "test.tsv"),
            "--sweep",
            "--limit",
            "20",
        ],
    }


@pytest.mark.parametrize("command", ["compare", "eval"])
def test_progress_on_a_terminal_and_quiet_in_a_pipe(
    calibrated: tuple[Engine, str, Path], tmp_path: Path, command: str
) -> None:
    args = _commands(*calibrated, tmp_path)[command]
    code, stdout, terminal = _on_a_terminal(*args)
    assert code == 0, terminal
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", terminal)
    done = {"compare": "20/20", "eval": "260/260"}[command]  # eval: 20 x (2 + 11 q values)
    assert BAR in plain and done in plain, plain
    assert BAR not in stdout
    piped = run_esqlog(*args, timeout=300)
    assert piped.returncode == 0, piped.stderr
    assert BAR not in piped.stderr and BAR not in piped.stdout
    assert piped.stdout.splitlines()[0] == stdout.splitlines()[0]  # the same report
