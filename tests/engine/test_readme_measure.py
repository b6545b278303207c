"""docs/evaluation.md, "Measure on your own data": its three command blocks, run verbatim on
real nodes.

The blocks are read from the page itself and run with bash in a folder holding what they
name (my-beir/ is tests/data/beir-java, query-log.txt its queries, index ``code`` with
field ``content`` that corpus), with ESQLOG_URL set as the page says. An edit of the page
that breaks a command fails here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from esqlog.engine.client import Engine
from tests.support.beir_data import BEIR, QUERIES, beir_docs
from tests.support.engines import ENGINE_URLS, bulk_index, call
from tests.support.measure_page import measure_blocks


@pytest.fixture
def code_index(engine: Engine) -> Iterator[Engine]:
    """The page's index ``code`` with a text field ``content`` (a user's index)."""
    call(
        engine,
        "PUT",
        "/code",
        {
            "settings": {"number_of_shards": 1, "number_of_replicas": 0},
            "mappings": {"properties": {"content": {"type": "text"}}},
        },
    )
    try:
        bulk_index(
            engine,
            "code",
            [{"id": d["_id"], "content": f"{d['title']}\n{d['text']}"} for d in beir_docs()],
        )
        yield engine
    finally:
        call(engine, "DELETE", "/code")


def test_every_block_runs_as_written(code_index: Engine, tmp_path: Path) -> None:
    shutil.copytree(BEIR, tmp_path / "my-beir")
    texts = [json.loads(line)["text"] for line in QUERIES.read_text().splitlines()]
    (tmp_path / "query-log.txt").write_text("\n".join(texts[:25]) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ESQLOG_")}
    env["ESQLOG_URL"] = ENGINE_URLS[code_index.flavor]
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    outputs = []
    for block in measure_blocks():
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", block],
            cwd=tmp_path,
            env=env,
            text=True,
            capture_output=True,
            timeout=600,
            check=False,
        )
        assert done.returncode == 0, (block, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr and "error:" not in done.stderr
        outputs.append(done.stdout)
    assert "dnDCG@10 [95% CI]" in outputs[0]
    assert (tmp_path / "runs" / "native.run").stat().st_size > 0
    assert "identifiers" in outputs[1] and (tmp_path / "bench" / "bench.png").is_file()
    assert "would show a different first result" in outputs[2]
