"""Real faults, no mocks: refused connections, DNS failure, a silent server, a real 503 and a
real 429 from an engine, and a node stopped in the middle of a calibration and of a search.

The network faults need no node: they are in tests/unit/test_cli_network_errors.py. The
engine faults run on a private Elasticsearch node (own port and state folder, see
tests/support/private_nodes.py) because they make its cluster red, trip its circuit breaker
and stop it: the shared nodes on 19200/19201 are never touched.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import elasticsearch
import pytest

from esqlog.calibration.files import load_calibration
from esqlog.engine.client import Engine
from esqlog.engine.connection import ConnectionSettings, connect
from esqlog.engine.steps import Request
from esqlog.wrapper import wrap
from tests.support.esqlog_runs import calibrate_args as _calibrate_args
from tests.support.esqlog_runs import one_line_error, run_esqlog
from tests.support.esqlog_runs import stdlib_lines as real_lines
from tests.support.private_nodes import ENGINE_SH, PrivateNode, node

BIG = "faults-code"
BIG_DOCS = 20_000


def _log(stderr: str, pattern: str) -> list[str]:
    return [
        line
        for line in stderr.splitlines()
        if line.startswith("esqlog: ") and re.search(pattern, line)
    ]


# --- engine faults on a private node ------------------------------------------------------------


@dataclass
class FaultNode:
    url: str
    engine: Engine
    private: PrivateNode


@pytest.fixture(scope="module")
def faults(request: pytest.FixtureRequest) -> Iterator[FaultNode]:
    private = node("faults", request.session)
    url = private.wait()[-1]
    engine = connect(ConnectionSettings(url, timeout=60), flavor="elasticsearch")
    _create(engine, BIG, shards=2)
    docs = real_lines(BIG_DOCS)
    assert len(docs) == BIG_DOCS
    for start in range(0, len(docs), 5000):
        lines = []
        for i, text in enumerate(docs[start : start + 5000], start):
            lines += [
                json.dumps({"index": {"_index": BIG, "_id": str(i)}}),
                json.dumps({"body": text}),
            ]
        assert not engine.perform(Request("POST", "/_bulk", {}, "\n".join(lines) + "\n"))["errors"]
    engine.perform(Request("POST", f"/{BIG}/_refresh"))
    engine.perform(Request("POST", f"/{BIG}/_flush"))
    try:
        yield FaultNode(url, engine, private)
    finally:
        private.stop()


def _create(engine: Engine, name: str, shards: int = 1, **settings: object) -> None:
    engine.perform(
        Request(
            "PUT",
            f"/{name}",
            {"wait_for_active_shards": "0"},
            body={
                "settings": {"number_of_shards": shards, "number_of_replicas": 0, **settings},
                "mappings": {"properties": {"body": {"type": "text"}}},
            },
        )
    )


def test_503_from_unassigned_shards_is_retried_then_reported(faults: FaultNode) -> None:
    _create(faults.engine, "red-index", **{"index.routing.allocation.require._name": "nowhere"})
    try:
        started = time.monotonic()
        result = run_esqlog(*_calibrate_args(faults.url, "red-index"))
        elapsed = time.monotonic() - started
    finally:
        faults.engine.perform(Request("DELETE", "/red-index"))
    line = one_line_error(result, 3)
    assert line == (
        f"error: the cluster at {faults.url} stayed overloaded or unavailable (503) "
        "after retries; try again later"
    )
    # esqlog's own read was tried 5 times with 4 backoff waits (0.25-0.5, 0.5-1, 1-2, 2-4 s).
    assert len(_log(result.stderr, r"^esqlog: GET /red-index/_count -> 503")) == 5
    waits = [float(m) for m in re.findall(r"retry \d of 4 in ([\d.]+) s after 503", result.stderr)]
    assert len(waits) == 4 and waits == sorted(waits)
    assert 0.25 <= waits[0] <= 0.5 and 2.0 <= waits[3] <= 4.0
    assert elapsed >= sum(waits) - 0.05


def test_429_from_circuit_breaker_is_retried_then_reported(faults: FaultNode) -> None:
    # calibrate runs no aggregations, so the request breaker (indices.breaker.request.limit)
    # never sees it; the in-flight breaker counts every request body, including esqlog's
    # _mtermvectors. 200 bytes trips those and still lets the (shorter) restore through.
    _create(faults.engine, "breaker-index")
    faults.engine.perform(
        Request(
            "POST",
            "/breaker-index/_doc",
            {"refresh": "true"},
            {"body": "def read_file(path): return open(path).read()"},
        )
    )
    setting = "network.breaker.inflight_requests.limit"
    faults.engine.perform(
        Request("PUT", "/_cluster/settings", body={"transient": {setting: "200b"}})
    )
    try:
        result = run_esqlog(*_calibrate_args(faults.url, "breaker-index"))
    finally:
        faults.engine.perform(
            Request("PUT", "/_cluster/settings", body={"transient": {setting: None}})
        )
        faults.engine.perform(Request("DELETE", "/breaker-index"))
    line = one_line_error(result, 3)
    assert "stayed overloaded or unavailable (429) after retries" in line
    assert len(_log(result.stderr, r"POST /breaker-index/_mtermvectors -> 429")) == 5
    assert len(re.findall(r"retry \d of 4 in [\d.]+ s after 429", result.stderr)) == 4
    restored = faults.engine.perform(Request("GET", "/_cluster/settings"))
    assert restored["transient"] == {}


def test_node_stopped_mid_calibration_and_mid_search(faults: FaultNode, tmp_path: Path) -> None:
    out = tmp_path / "calibration.json"
    first = run_esqlog(
        "calibrate",
        "--url",
        faults.url,
        "--index",
        BIG,
        "--field",
        "body",
        "--sample",
        "200",
        "--out",
        str(out),
    )
    assert first.returncode == 0, first.stderr
    previous = out.read_bytes()
    assert load_calibration(out).h_tok_method == "sample"

    client = elasticsearch.Elasticsearch(faults.url, request_timeout=30)
    wrapped = wrap(client, out)
    query = {"match": {"body": "return self value"}}
    assert wrapped.search(index=BIG, query=query)["hits"]["total"]["value"] > 0

    code = "import sys; from esqlog.cli import main; sys.exit(main(prog_name='esqlog'))"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            code,
            *_calibrate_args(faults.url, BIG, "--exact", "--out", str(out)),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    stderr: list[str] = []
    batches = threading.Event()

    def read_stderr() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            stderr.append(line)
            if sum("/_mtermvectors -> 2" in s for s in stderr) >= 4:
                batches.set()

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    try:
        assert batches.wait(60), "".join(stderr)
        # Freeze the client while the node stops, so the stop surely lands mid-run.
        os.kill(proc.pid, signal.SIGSTOP)
        assert proc.poll() is None, "calibrate finished before the node could be stopped"
        try:
            faults.private.run(str(ENGINE_SH), "stop", "elasticsearch")
        finally:
            os.kill(proc.pid, signal.SIGCONT)
        rc = proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    reader.join(10)
    text = "".join(stderr)
    result = subprocess.CompletedProcess(
        proc.args, rc, proc.stdout.read() if proc.stdout else "", text
    )
    line = one_line_error(result, 3)
    assert f"cannot connect to the cluster at {faults.url}" in line
    assert len(re.findall(r"retry \d of 4 in [\d.]+ s after ", text)) == 4
    # The file is the previous calibration, byte for byte, with no temp file beside it.
    assert out.read_bytes() == previous
    assert sorted(p.name for p in tmp_path.iterdir()) == ["calibration.json"]

    # A wrapped search against the stopped node raises the client's own exception type.
    with pytest.raises(elasticsearch.ConnectionError):
        wrapped.search(index=BIG, query=query)

    # Restart the same node on its data, re-run: success, and the wrapper works again.
    faults.private.run(
        str(ENGINE_SH), "start", "elasticsearch", env_extra={"ESQLOG_ENGINE_KEEP_DATA": "1"}
    )
    again = run_esqlog(
        "calibrate",
        "--url",
        faults.url,
        "--index",
        BIG,
        "--field",
        "body",
        "--exact",
        "--out",
        str(out),
        "--json",
    )
    assert again.returncode == 0, again.stderr
    record = load_calibration(out)
    assert record.h_tok_method == "exact" and record.live_docs == BIG_DOCS
    assert json.loads(again.stdout)["h_tok"] == record.h_tok
    assert wrapped.search(index=BIG, query=query)["hits"]["total"]["value"] > 0
    client.close()
