"""The public API as a type checker sees it: mypy (from this environment) on a small
application file, asserting the revealed types and the errors it must report.

Why: ``wrap`` used to return ``Any``, so ``es.serch(...)`` type-checked; now it returns the
client's own type, its options are keyword-only and their choices Literals. One mypy run
checks every line (about 15-30 s: it reads both clients' type information).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: each line ending in ``# E: <text>`` must get a mypy error containing <text>, and
#: each ``# R: <type>`` a revealed type equal to <type>; no other line may get an error
APPLICATION = """
from elasticsearch import AsyncElasticsearch, Elasticsearch
from opensearchpy import AsyncOpenSearch, OpenSearch

import esqlog

cal: esqlog.Calibration = esqlog.load_calibration("code.qlog.json")
es = esqlog.wrap(Elasticsearch("http://localhost:9200"), cal)
reveal_type(es)  # R: elasticsearch._sync.client.Elasticsearch
os_ = esqlog.wrap(OpenSearch(hosts=["http://localhost:9200"]), "code.qlog.json")
reveal_type(os_)  # R: opensearchpy.client.OpenSearch
aes = esqlog.wrap(AsyncElasticsearch("http://localhost:9200"), [cal], mode="rerank")
reveal_type(aes)  # R: elasticsearch._async.client.AsyncElasticsearch
aos = esqlog.wrap(AsyncOpenSearch(hosts=["http://localhost:9200"]), cal)
reveal_type(aos)  # R: opensearchpy._async.client.AsyncOpenSearch
fresh = esqlog.calibrate(Elasticsearch("http://localhost:9200"), "code", "body",
                         vocabulary=True, out="code.qlog.json")
reveal_type(fresh)  # R: esqlog.calibration.record.Calibration
mode: esqlog.SearchMode = "identifiers"
settings = esqlog.IdentifierSettings(select="words", shard_groups="max", common="own")
esqlog.wrap(es, fresh, mode=mode, stats="snapshot", identifiers=settings)
try:
    es.search(index="code", query={"match": {"body": "read file"}})
except esqlog.UsageError as exc:
    problem: str = exc.problem

es.serch(index="code")  # E: "Elasticsearch" has no attribute "serch"
os_.serch(index="code")  # E: "OpenSearch" has no attribute "serch"
esqlog.wrap(es, cal, "rerank")  # E: Too many positional arguments
esqlog.wrap(es, cal, mode="fast")  # E: Argument "mode" to "wrap" has incompatible type
esqlog.wrap(es, cal, stats="cached")  # E: Argument "stats" to "wrap" has incompatible type
esqlog.IdentifierSettings(select="best")  # E: Argument "select" to "IdentifierSettings"
esqlog.IdentifierSettings(operator="xor")  # E: Argument "operator" to "IdentifierSettings"
esqlog.calibrate(es, "code", "body", True)  # E: Too many positional arguments
"""


def test_mypy_sees_the_client_s_own_type_and_catches_misuse(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    pytest.importorskip("elasticsearch")
    pytest.importorskip("opensearchpy")
    app = tmp_path / "app.py"
    app.write_text(APPLICATION)
    config = tmp_path / "mypy.ini"
    config.write_text("[mypy]\npython_version = 3.11\n")
    # MYPYPATH: this checkout's esqlog, whatever esqlog the environment has installed
    env = {**os.environ, "MYPYPATH": str(ROOT)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(config),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--no-error-summary",
            "--show-error-codes",
            str(app),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    lines = APPLICATION.splitlines()
    reported: dict[int, list[str]] = {}  # line -> "error: ..." / "note: ..."
    for line in done.stdout.splitlines():
        found = re.match(r".*app\.py:(\d+): ((?:error|note): .*)", line)
        if found:
            reported.setdefault(int(found[1]), []).append(found[2])
    expected: dict[int, str] = {}
    for number, text in enumerate(lines, start=1):
        marker = re.search(r"# ([ER]): (.*)$", text)
        if marker:
            kind, want = marker[1], marker[2]
            expected[number] = f'Revealed type is "{want}"' if kind == "R" else want
    for number, want in expected.items():
        got = reported.get(number, [])
        assert any(want in message for message in got), (
            f"line {number} ({lines[number - 1].strip()!r}): wanted {want!r}, mypy said "
            f"{got or 'nothing'}\n{done.stdout}{done.stderr}"
        )
    unexpected = {
        n: m
        for n, m in reported.items()
        if n not in expected and any(x.startswith("error") or "Revealed" in x for x in m)
    }
    assert unexpected == {}, done.stdout
