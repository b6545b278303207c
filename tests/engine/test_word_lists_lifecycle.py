"""Where the word lists come from besides ``esqlog calibrate``, and where they go.

``esqlog.calibrate(identifiers=True)`` and ``esqlog index --calibrate`` write the lists the
nodes plan identifiers queries from (esqlog.identifiers.word_lists), as ``esqlog calibrate``
does, so an application's or esqlog mcp's searches are planned on the node; a rerun of
``esqlog index --calibrate`` that refreshes FILE writes the new statistics' lists and
removes the ones FILE named before (one index per edit would otherwise pile up); an index
of a lists name that esqlog did not mark is never removed. On real nodes running the
plugin, both engines.
"""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import esqlog
from esqlog.calibration.files import load_calibration
from esqlog.cli import main
from esqlog.engine.client import Engine
from esqlog.identifiers.node_plan import QUERY_NAME
from esqlog.identifiers.settings import IdentifierSettings
from esqlog.identifiers.word_lists import PREFIX, STATE, remove_superseded
from tests.support.agent_indices import DATA
from tests.support.calibrated_go import mappings
from tests.support.engines import ENGINE_URLS, bulk_index, call, create_index, found
from tests.support.oracle import hits_of, load_docs, load_query_texts

ON_CLIENT = IdentifierSettings(node_plan=False)


def _lists(engine: Engine) -> set[str]:
    rows = call(engine, "GET", f"/_cat/indices/{PREFIX}*", format="json", h="index")
    return {row["index"] for row in rows or []}


def _complete(engine: Engine, name: str) -> bool:
    own = call(engine, "GET", f"/{name}/_mapping")[name]["mappings"]["_meta"]["esqlog"]
    return bool(own["state"] == STATE and own["complete"] is True and own["words"] > 0)


def _search_bodies(client: Any, run: Any) -> list[str]:
    """The bodies of the searches ``run()`` sends through ``client``."""
    transport = client.transport
    perform = transport.perform_request
    bodies: list[str] = []

    def spy(method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        if url.endswith("/_search"):
            bodies.append(json.dumps(kwargs.get("body"), default=str))
        return perform(method, url, *args, **kwargs)

    transport.perform_request = spy
    try:
        run()
    finally:
        transport.perform_request = perform
    return bodies


def _calibrated(engine: Engine, index: str, out: Path, **more: Any) -> Any:
    """``esqlog.calibrate`` with the identifiers statistics, written to ``out``."""
    return esqlog.calibrate(
        engine.client, index, "body", vocabulary=True, identifiers=True, out=out, **more
    )


@pytest.fixture
def code_index(engine: Engine) -> Iterator[str]:
    index = create_index(engine, shards=1, mappings=mappings())
    docs = [{"id": d["id"], "body": d["body"], "key": str(d["id"])} for d in load_docs(300)]
    bulk_index(engine, index, docs)
    yield index
    call(engine, "DELETE", f"/{index}")


def test_the_librarys_calibrate_writes_lists_that_wrap_plans_from(
    engine: Engine, code_index: str, tmp_path: Path
) -> None:
    before = _lists(engine)
    off = _calibrated(engine, code_index, tmp_path / "off.json", word_lists=False)
    assert off.word_lists is None and _lists(engine) == before
    record = _calibrated(engine, code_index, tmp_path / "on.json")
    try:
        assert record.word_lists is not None and record.word_lists not in before
        assert load_calibration(tmp_path / "on.json").word_lists == record.word_lists
        assert _complete(engine, record.word_lists)
        node = esqlog.wrap(engine.client, tmp_path / "on.json", mode="identifiers")
        client = esqlog.wrap(
            engine.client, tmp_path / "on.json", mode="identifiers", identifiers=ON_CLIENT
        )
        texts = [t for t in load_query_texts() if t.isascii()][:5]
        body = {"size": 300, "track_total_hits": True}
        answers: list[Any] = []
        sent = _search_bodies(
            engine.client,
            lambda: answers.extend(
                node.search(index=code_index, body={**body, "query": {"match": {"body": t}}})
                for t in texts
            ),
        )
        assert len(sent) == len(texts) and all(QUERY_NAME in b for b in sent)
        for text, answer in zip(texts, answers, strict=True):
            expected = client.search(
                index=code_index, body={**body, "query": {"match": {"body": text}}}
            )
            assert hits_of(answer) == hits_of(expected), text
    finally:
        if record.word_lists:
            found(engine, "DELETE", f"/{record.word_lists}")


def _index_run(engine: Engine, root: Path, index: str, out: Path) -> str:
    url = ENGINE_URLS[engine.flavor]
    result = CliRunner().invoke(
        main, ["index", str(root), "--index", index, "--url", url, "--calibrate", str(out)]
    )
    assert result.exit_code == 0, result.output
    return result.output


def test_a_refresh_writes_new_lists_and_removes_the_ones_it_supersedes(
    engine: Engine, tmp_path: Path
) -> None:
    root = tmp_path / "gin"
    shutil.copytree(DATA / "gin", root)
    index, out = f"esqlog-test-lists-{uuid.uuid4().hex[:8]}", tmp_path / "cal.json"
    named: list[str | None] = []
    try:
        output = _index_run(engine, root, index, out)
        first = load_calibration(out).word_lists
        named.append(first)
        assert first is not None and _complete(engine, first)
        assert f"written to index {first}" in output

        assert "unchanged" in _index_run(engine, root, index, out)
        assert load_calibration(out).word_lists == first and first in _lists(engine)

        source = next(root.rglob("*.go"))
        source.write_text(source.read_text() + "\nfunc esqlogListsProbe() int { return 7 }\n")
        output = _index_run(engine, root, index, out)
        second = load_calibration(out).word_lists
        named.append(second)
        assert "refreshed by" in output or "calibrated in full" in output
        assert second is not None and second != first and _complete(engine, second)
        assert f"removed the superseded index {first}" in output
        assert first not in _lists(engine) and second in _lists(engine)

        wrapped = esqlog.wrap(engine.client, out)  # mode auto: identifiers on code
        query = {"query": {"match": {"content": "lists probe"}}, "size": 3}
        answer: list[Any] = []
        sent = _search_bodies(
            engine.client, lambda: answer.append(wrapped.search(index=index, body=query))
        )
        assert sent and QUERY_NAME in sent[0]
        hits = answer[0]["hits"]["hits"]
        assert any("esqlogListsProbe" in h["_source"]["content"] for h in hits)
    finally:
        call(engine, "DELETE", f"/{index}")
        for name in named:
            if name:
                found(engine, "DELETE", f"/{name}")


def test_an_index_of_a_lists_name_esqlog_did_not_mark_is_not_removed(engine: Engine) -> None:
    name = f"{PREFIX}{uuid.uuid4().hex[:16]}"
    call(engine, "PUT", f"/{name}", {"settings": {"number_of_shards": 1}})
    try:
        line = remove_superseded(engine, name, None)
        assert line is not None and "was not removed" in line and name in line
        assert name in _lists(engine)
        assert remove_superseded(engine, name, name) is None
        assert remove_superseded(engine, None, name) is None
    finally:
        call(engine, "DELETE", f"/{name}")


def _plugin_lists(engine: Engine, *args: str) -> Any:
    return CliRunner().invoke(main, ["plugin", "lists", "--url", ENGINE_URLS[engine.flavor], *args])


def test_plugin_lists_shows_and_removes_only_lists_no_kept_calibration_names(
    engine: Engine, code_index: str, tmp_path: Path
) -> None:
    """Two calibrations' lists and an index of a lists name esqlog did not mark: listed
    with who names them; --remove deletes only the one no --keep calibration names."""
    made = []
    other = f"{PREFIX}{uuid.uuid4().hex[:16]}"
    call(engine, "PUT", f"/{other}", {"settings": {"number_of_shards": 1}})
    try:
        for name in ("old", "kept"):
            if name == "kept":  # other statistics: another snapshot, so other lists
                doc = {"id": 10_000, "body": "func esqlogKeptProbe() {}", "key": "10000"}
                bulk_index(engine, code_index, [doc])
            record = _calibrated(engine, code_index, tmp_path / f"{name}.json")
            assert record.word_lists
            made.append(record.word_lists)
        old, kept = made
        assert old != kept
        refused = _plugin_lists(engine, "--remove")
        assert refused.exit_code == 2 and "--keep" in refused.output
        assert "Traceback" not in refused.output

        shown = _plugin_lists(engine, "--keep", str(tmp_path / "kept.json"))
        assert shown.exit_code == 0, shown.output
        lines = {line.split()[0]: line for line in shown.output.splitlines() if line}
        assert "named by" in lines[kept] and str(tmp_path / "kept.json") in lines[kept]
        assert "no --keep calibration names it" in lines[old]
        assert "not made by esqlog" in lines[other]
        assert {kept, old, other} <= _lists(engine)

        pruned = _plugin_lists(engine, "--keep", str(tmp_path / "kept.json"), "--remove")
        assert pruned.exit_code == 0, pruned.output
        removed = [line.split()[0] for line in pruned.output.splitlines() if "; removed" in line]
        assert old in removed and kept not in removed and other not in removed
        left = _lists(engine)
        assert kept in left and other in left and old not in left
    finally:
        call(engine, "DELETE", f"/{other}")
        for name in made:
            found(engine, "DELETE", f"/{name}")
