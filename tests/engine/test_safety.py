"""Safety: esqlog never writes to a user's index, writes calibration files atomically, and
turns every bad calibration file or bad calibrate input into a one-line error.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result

from esqlog.calibration.calibrate import calibrate
from esqlog.calibration.files import load_calibration
from esqlog.calibration.freshness import check_calibration_plan, freshness_plan, stale_warning
from esqlog.cli import main
from esqlog.engine.client import Engine
from esqlog.engine.failures import error_status
from esqlog.errors import UsageError
from esqlog.wrapper import SEARCH_MODES, ScriptingUnavailable, wrap
from tests.support.code_snippets import SNIPPETS
from tests.support.engines import ENGINE_URLS, bulk_index, call, create_index
from tests.support.engines_state import snapshot as _snapshot
from tests.support.esqlog_runs import stdlib_lines

MAPPINGS = {
    "properties": {
        "body": {"type": "text"},
        "tag": {"type": "keyword"},
        "size": {"type": "long"},
        "notes": {"type": "text"},
    }
}


def _docs(count: int, offset: int = 0) -> list[dict[str, Any]]:
    texts = SNIPPETS + stdlib_lines(count + offset)
    return [
        {"id": i, "body": texts[i], "tag": f"t{i % 7}", "size": i}
        for i in range(offset, offset + count)
    ]


def _cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _one_line(result: Result, code: int) -> str:
    assert result.exit_code == code, (result.exit_code, result.output)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


@pytest.fixture
def index(engine: Engine) -> Iterator[str]:
    name = create_index(engine, shards=3, mappings=MAPPINGS)
    bulk_index(engine, name, _docs(300))
    yield name
    call(engine, "DELETE", f"/{name}")


# --- no writes to the user's index -----------------------------------------------------------


class _Requests(logging.Handler):
    """esqlog's own request log (method and path), captured in-process."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.seen: list[tuple[str, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        parts = record.getMessage().split(" ")
        if len(parts) > 3 and parts[2] == "->":
            self.seen.append((parts[0], parts[1]))


#: the index calibrate writes the word lists into (esqlog.identifiers.word_lists): created,
#: filled, refreshed and marked complete
_WORD_LISTS = re.compile(r"/esqlog-words-[0-9a-f]{16}(/_mapping|/_bulk|/_refresh)?")
READ_SUFFIXES = ("/_search", "/_mtermvectors", "/_search/scroll", "/_count", "/_termvectors")


def _allowed(method: str, path: str) -> bool:
    """Reads, plus the only two writes esqlog may make: its stored script and its own index
    (created and marked by esqlog, esqlog.engine.state_index)."""
    if method in ("GET", "HEAD") or (method == "POST" and path.endswith(READ_SUFFIXES)):
        return True
    if method == "DELETE" and path == "/_search/scroll":
        return True
    if _WORD_LISTS.fullmatch(path):  # calibrate's word lists: its own marked index
        return method in ("PUT", "POST")
    return method == "PUT" and (
        path
        in ("/_scripts/esqlog-qlog-term", "/esqlog-calibrations", "/esqlog-calibrations/_mapping")
        or path.startswith("/esqlog-calibrations/_doc/")
    )


def test_nothing_esqlog_does_changes_the_user_index(
    engine: Engine, index: str, tmp_path: Path
) -> None:
    before = _snapshot(engine, index)
    assert before["count"] == 300 and all(max(s) >= 0 for s in before["seq_no"].values())
    log = logging.getLogger("esqlog")
    recorder = _Requests()
    log.addHandler(recorder)
    level = log.level
    log.setLevel(logging.INFO)
    url = ENGINE_URLS[engine.flavor]
    out = tmp_path / "cal.json"
    can_script = engine.flavor == "opensearch"  # the ES integ-test zip has no Painless
    try:
        extra = ["--install-script"] if can_script else []
        result = _cli(
            "calibrate",
            "--url",
            url,
            "--index",
            index,
            "--field",
            "body",
            "--out",
            str(out),
            "--store-in-cluster",
            *extra,
        )
        assert result.exit_code == 0, result.output
        client = _client(engine.flavor, url)
        wrapped = wrap(client, out)
        query = {"match": {"body": "return self name value"}}
        for mode in SEARCH_MODES:
            if mode == "identifiers":  # needs --identifiers statistics: checked below
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # auto's fallback on ES
                try:
                    response = wrapped.search(
                        index=index, body={"query": query, "size": 5}, esqlog_mode=mode
                    )
                except ScriptingUnavailable:
                    assert mode == "script" and not can_script
                    continue
            assert _body(response)["hits"]["hits"], mode
        idents = tmp_path / "idents.json"  # the identifiers mode reads the index too
        result = _cli(
            "calibrate",
            "--url",
            url,
            "--index",
            index,
            "--field",
            "body",
            "--out",
            str(idents),
            "--vocabulary",
            "--identifiers",
        )
        assert result.exit_code == 0, result.output
        response = wrap(client, idents, mode="identifiers").search(
            index=index, body={"query": query, "size": 5}
        )
        assert _body(response)["hits"]["hits"]
        searched = _cli(
            "search",
            index,
            "read file",
            "--url",
            url,
            "--calibration",
            str(idents),
            "--mode",
            "identifiers",
        )
        assert searched.exit_code == 0, searched.output
        ran = ["calibrate"]
        names = set(main.list_commands(click.Context(main)))
        if "explain" in names:
            explained = _cli("explain", index, "read file", "--url", url, "--calibration", str(out))
            assert explained.exit_code == 0, explained.output
            ran.append("explain")
        if "search" in names:
            for mode in ("boost", "rerank", "auto"):
                searched = _cli(
                    "search",
                    index,
                    "read file",
                    "--url",
                    url,
                    "--calibration",
                    str(out),
                    "--mode",
                    mode,
                )
                assert searched.exit_code == 0, searched.output
            ran.append("search")
        client.close()
    finally:
        log.removeHandler(recorder)
        log.setLevel(level)
        call(engine, "DELETE", f"/esqlog-calibrations/_doc/{index}:body", refresh="true")
        written = tmp_path / "idents.json"
        lists = load_calibration(written).word_lists if written.exists() else None
        if lists:
            call(engine, "DELETE", f"/{lists}")
    assert _snapshot(engine, index) == before
    assert len(recorder.seen) > 10
    writes = [r for r in recorder.seen if not _allowed(*r)]
    assert writes == [], writes
    assert ("PUT", f"/esqlog-calibrations/_doc/{index}%3Abody") in recorder.seen


def _client(flavor: str, url: str) -> Any:
    if flavor == "opensearch":
        import opensearchpy

        return opensearchpy.OpenSearch(hosts=[url], timeout=60)
    import elasticsearch

    return elasticsearch.Elasticsearch(url, request_timeout=60)


def _body(response: Any) -> dict[str, Any]:
    return dict(getattr(response, "body", response))


def test_other_index_uuid_and_stale_calibrations(engine: Engine) -> None:
    name = create_index(engine, shards=2, mappings=MAPPINGS)
    try:
        bulk_index(engine, name, _docs(100))
        record = calibrate(engine, name, "body", sample=50)
        fresh = engine.run(check_calibration_plan(record, name))
        assert fresh.same_index and fresh.drift == 0 and stale_warning(record, fresh) is None
        bulk_index(engine, name, _docs(5, offset=100))  # 5% drift: still fresh
        assert stale_warning(record, engine.run(freshness_plan(record, name))) is None
        bulk_index(engine, name, _docs(20, offset=105))  # 25% drift: stale
        fresh = engine.run(check_calibration_plan(record, name))
        warning = stale_warning(record, fresh)
        assert warning is not None and "\n" not in warning
        assert warning.startswith("warning: the index changed by 25% of its documents")
        assert f"re-run esqlog calibrate --index {name} --field body" in warning
        # The same name recreated is another index (new uuid): refused, with the fix.
        call(engine, "DELETE", f"/{name}")
        call(engine, "PUT", f"/{name}", {"mappings": MAPPINGS})
        with pytest.raises(UsageError) as info:
            engine.run(check_calibration_plan(record, name))
        text = str(info.value)
        assert f"the calibration is for index {name!r} (uuid {record.index_uuid})" in text
        assert f"run esqlog calibrate --index {name} --field body" in text and "\n" not in text
    finally:
        call(engine, "DELETE", f"/{name}")


# --- bad input to calibrate ---------------------------------------------------------------------


def test_bad_calibrate_input_is_one_line_usage_error(engine: Engine, index: str) -> None:
    url = ENGINE_URLS[engine.flavor]
    tag = uuid.uuid4().hex[:8]
    other = f"{index}-other"  # so that the wildcard f"{index}*" matches exactly two
    call(engine, "PUT", f"/{other}", {"settings": {"number_of_replicas": 0}, "mappings": MAPPINGS})
    empty = create_index(engine, shards=1, mappings=MAPPINGS)
    bulk_index(engine, other, _docs(20))
    call(
        engine,
        "POST",
        "/_aliases",
        {
            "actions": [
                {"add": {"index": index, "alias": f"one-{tag}"}},
                {"add": {"index": index, "alias": f"two-{tag}"}},
                {"add": {"index": other, "alias": f"two-{tag}"}},
            ]
        },
    )

    def calib(target: str, field: str = "body", *extra: str) -> Result:
        return _cli("calibrate", "--url", url, "--index", target, "--field", field, *extra)

    try:
        ok = calib(f"one-{tag}", "body", "--json")
        assert ok.exit_code == 0, ok.output
        assert json.loads(ok.stdout)["index"] == index  # the alias resolves to its index
        cases = {
            f"no index or alias named 'missing-{tag}'": calib(f"missing-{tag}"),
            f"'two-{tag}' matches 2 indices": calib(f"two-{tag}"),
            f"'{index}*' matches 2 indices ({index}, {other})": calib(f"{index}*"),
            f"index {index!r} has no field 'nope'": calib(index, "nope"),
            "field 'tag' is of type 'keyword', not text": calib(index, "tag"),
            "field 'size' is of type 'long', not text": calib(index, "size"),
            f"field 'notes' of index {index!r} has no indexed text": calib(index, "notes"),
            f"field 'body' of index {empty!r} has no indexed text": calib(empty),
            "--sample must be between 1 and 100000, got 0": calib(index, "body", "--sample", "0"),
            "--sample must be between 1 and 100000, got 100001": calib(
                index, "body", "--sample", "100001"
            ),
        }
        for expected, result in cases.items():
            assert expected in _one_line(result, 2), (expected, result.stderr)
    finally:
        call(engine, "DELETE", f"/{other},{empty}")


def test_data_stream_is_refused(opensearch: Engine) -> None:
    # Data streams need the data-streams module, which the Elasticsearch integ-test
    # distribution lacks; OpenSearch has them in core.
    name = f"esqlog-ds-{uuid.uuid4().hex[:8]}"
    call(
        opensearch,
        "PUT",
        f"/_index_template/{name}",
        {
            "index_patterns": [f"{name}*"],
            "data_stream": {},
            "priority": 500,
            "template": {
                "settings": {"number_of_replicas": 0},
                "mappings": {"properties": {"message": {"type": "text"}}},
            },
        },
    )
    try:
        call(opensearch, "PUT", f"/_data_stream/{name}")
        call(
            opensearch,
            "POST",
            f"/{name}/_doc",
            {"@timestamp": "2025-01-01", "message": "a b"},
            refresh="true",
        )
        call(opensearch, "POST", f"/{name}/_rollover")
        backing = call(opensearch, "GET", f"/_data_stream/{name}")["data_streams"][0]["indices"]
        assert len(backing) == 2
        result = _cli(
            "calibrate", "--url", ENGINE_URLS["opensearch"], "--index", name, "--field", "message"
        )
        line = _one_line(result, 2)
        assert f"{name!r} matches 2 indices (.ds-{name}-000001" in line
        assert "calibrate one concrete index" in line
    finally:
        try:
            call(opensearch, "DELETE", f"/_data_stream/{name}")
        except Exception as exc:  # already gone
            assert error_status(exc) == 404
        call(opensearch, "DELETE", f"/_index_template/{name}")
