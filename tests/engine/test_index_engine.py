"""esqlog index on both real engines: what it writes, incremental runs, and what it refuses.

Each test builds a small repository in a temp folder (real code: this package's own
sources and the Go snippet of test_index_chunk), runs the command through click's
CliRunner, and reads the index back: ids, fields and contents must be exactly what the
chunker makes of the files on disk, and an unchanged file's documents must not be
rewritten (their ``_seq_no`` stays).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from esqlog.cli import main
from esqlog.engine.client import Engine
from esqlog.indexing.bulk import doc_id
from esqlog.indexing.chunk import chunk_text
from esqlog.indexing.languages import language_of
from tests.support.engines import ENGINE_URLS, bulk_index, call, create_index
from tests.support.repos import make_repo
from tests.support.sources import GO


def run(engine: Engine, *args: str) -> Result:
    return CliRunner().invoke(main, ["index", *args, "--url", ENGINE_URLS[engine.flavor]])


def run_json(engine: Engine, repo: Path, index: str, *args: str) -> dict[str, Any]:
    result = run(engine, str(repo), "--index", index, "--json", *args)
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.stdout))


def expected_docs(repo: Path) -> dict[str, dict[str, Any]]:
    """What the index must hold: the chunker's view of every indexable file on disk."""
    out: dict[str, dict[str, Any]] = {}
    for path in sorted(repo.rglob("*")):
        rel = path.relative_to(repo).as_posix()
        if not path.is_file() or rel.endswith((".log", ".bin")) or rel.startswith("vendor/"):
            continue
        chunks = chunk_text(path.read_text(encoding="utf-8"), language_of(rel))
        for number, chunk in enumerate(chunks):
            out[doc_id(rel, number)] = {
                "path": rel,
                "language": language_of(rel),
                "symbol": chunk.symbol,
                "kind": chunk.kind,
                "start_line": chunk.start_line,
                "end_line": chunk.end_line,
                "chunk": number,
                "chunks": len(chunks),
                "content": chunk.content,
            }
    return out


def stored(engine: Engine, index: str) -> dict[str, dict[str, Any]]:
    hits = call(
        engine,
        "POST",
        f"/{index}/_search",
        {"size": 1000, "seq_no_primary_term": True, "query": {"exists": {"field": "file_hash"}}},
    )["hits"]["hits"]
    return {h["_id"]: {**h["_source"], "_seq_no": h["_seq_no"]} for h in hits}


def same_docs(engine: Engine, index: str, repo: Path) -> dict[str, dict[str, Any]]:
    docs = stored(engine, index)
    expected = expected_docs(repo)
    assert set(docs) == set(expected)
    for _id, want in expected.items():
        got = {k: docs[_id].get(k) for k in want}
        assert got == want, _id
    return docs


@pytest.fixture
def index_name(engine: Engine) -> Iterator[str]:
    name = f"esqlog-test-{uuid.uuid4().hex[:10]}"
    yield name
    call(engine, "DELETE", f"/{name}", ignore_unavailable="true")


def test_first_run_writes_one_document_per_chunk(
    engine: Engine, index_name: str, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    summary = run_json(engine, repo, index_name)
    docs = same_docs(engine, index_name, repo)
    assert summary["created"] and summary["documents"] == len(docs) == summary["chunks_indexed"]
    assert summary["files"] == 8 and summary["files_indexed"] == 8  # incl. .gitignore
    assert summary["skipped"] == {"binary": 1, "gitignored": 1, "vendored folder": 1}
    symbols = {d.get("symbol") for d in docs.values()}
    assert {"Builder.WriteRune", "OrderService.ordersOf", "atomic_write"} <= symbols
    mapping = call(engine, "GET", f"/{index_name}/_mapping")[index_name]["mappings"]
    assert mapping["properties"]["content"] == {"type": "text"}  # the standard analyzer
    assert mapping["_meta"]["esqlog_index"]["root"] == str(repo.resolve())
    settings = call(engine, "GET", f"/{index_name}/_settings")[index_name]["settings"]
    assert "refresh_interval" not in settings["index"]  # paused during the run, then reset


def test_second_run_rewrites_only_what_changed(
    engine: Engine, index_name: str, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    run_json(engine, repo, index_name)
    before = stored(engine, index_name)
    # modify (fewer chunks), add, delete; the other files stay as they are
    (repo / "go" / "builder.go").write_text(GO.split("const maxInt")[0], encoding="utf-8")
    (repo / "go" / "new.go").write_text(
        "package strings\n\n// Fresh is new.\nfunc Fresh() {}\n", encoding="utf-8"
    )
    (repo / "go" / "other.go").unlink()
    summary = run_json(engine, repo, index_name)
    after = same_docs(engine, index_name, repo)
    assert (summary["files_indexed"], summary["files_deleted"]) == (2, 1)
    assert summary["files_unchanged"] == 6
    gone = {_id for _id, d in before.items() if d["path"] == "go/other.go"}
    gone |= {doc_id("go/builder.go", n) for n in (4, 5)}  # the two chunks cut off
    assert gone and gone.isdisjoint(after) and summary["chunks_deleted"] == len(gone)
    for _id, doc in after.items():
        if doc["path"].startswith("go/"):
            continue
        assert doc["_seq_no"] == before[_id]["_seq_no"], doc["path"]  # not rewritten
    assert all(
        after[_id]["_seq_no"] > before[_id]["_seq_no"]
        for _id in after
        if after[_id]["path"] == "go/builder.go"
    )
    stats = call(engine, "GET", f"/{index_name}/_stats/indexing")["_all"]["primaries"]
    third = run_json(engine, repo, index_name)
    assert (third["chunks_indexed"], third["chunks_deleted"], third["files_unchanged"]) == (0, 0, 8)
    again = call(engine, "GET", f"/{index_name}/_stats/indexing")["_all"]["primaries"]
    assert again["indexing"]["index_total"] == stats["indexing"]["index_total"]
    assert again["indexing"]["delete_total"] == stats["indexing"]["delete_total"]


def test_an_interrupted_run_is_finished_by_the_next(
    engine: Engine, index_name: str, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    run_json(engine, repo, index_name)
    some = doc_id("qlog.py", 1)
    call(engine, "DELETE", f"/{index_name}/_doc/{some}", refresh="true")  # a half-done state
    summary = run_json(engine, repo, index_name)
    assert summary["files_indexed"] == 1 and some in same_docs(engine, index_name, repo)


def _one_error_line(result: Result, *words: str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert all(w in lines[0] for w in words), lines[0]
    assert "Traceback" not in result.output


def test_refuses_an_index_it_did_not_create(engine: Engine, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    index = create_index(engine, shards=1, settings={"refresh_interval": "5s"})
    try:
        bulk_index(engine, index, [{"id": "mine", "body": "the user's own document"}])
        stats = call(engine, "GET", f"/{index}/_stats/indexing")["_all"]["primaries"]
        _one_error_line(
            run(engine, str(repo), "--index", index), "not created by esqlog index", "--adopt"
        )
        again = call(engine, "GET", f"/{index}/_stats/indexing")["_all"]["primaries"]
        for key in ("index_total", "delete_total"):
            assert again["indexing"][key] == stats["indexing"][key]
        assert (
            "content"
            not in call(engine, "GET", f"/{index}/_mapping")[index]["mappings"]["properties"]
        )
        # --adopt: esqlog's documents go in beside the user's, which is never touched
        run_json(engine, repo, index, "--adopt")
        (repo / "README.md").unlink()
        summary = run_json(engine, repo, index, "--adopt")
        assert summary["adopted"] and summary["files_deleted"] == 1
        same_docs(engine, index, repo)
        mine = call(engine, "GET", f"/{index}/_doc/mine")
        assert mine["_source"] == {"body": "the user's own document"} and mine["_version"] == 1
        settings = call(engine, "GET", f"/{index}/_settings")[index]["settings"]["index"]
        assert settings["refresh_interval"] == "5s"  # an adopted index's settings stay
    finally:
        call(engine, "DELETE", f"/{index}")


def test_refuses_an_index_of_another_folder(
    engine: Engine, index_name: str, tmp_path: Path
) -> None:
    first = make_repo(tmp_path / "first")
    run_json(engine, first, index_name)
    second = tmp_path / "second"
    second.mkdir()
    (second / "only.py").write_text("def only():\n    return 1\n", encoding="utf-8")
    before = stored(engine, index_name)
    _one_error_line(
        run(engine, str(second), "--index", index_name), str(first.resolve()), "--adopt"
    )
    assert stored(engine, index_name) == before
    summary = run_json(engine, second, index_name, "--adopt")  # the folder "moved"
    assert summary["files_deleted"] == 8 and not summary["adopted"]
    same_docs(engine, index_name, second)
    assert run_json(engine, second, index_name)["files_unchanged"] == 1  # now its folder


def test_refuses_an_alias_of_two_indices(engine: Engine, tmp_path: Path) -> None:
    a, b = create_index(engine, shards=1), create_index(engine, shards=1)
    alias = f"esqlog-test-alias-{uuid.uuid4().hex[:8]}"
    try:
        call(
            engine,
            "POST",
            "/_aliases",
            {
                "actions": [
                    {"add": {"index": a, "alias": alias}},
                    {"add": {"index": b, "alias": alias}},
                ]
            },
        )
        _one_error_line(
            run(engine, str(make_repo(tmp_path)), "--index", alias), "alias of 2 indices"
        )
    finally:
        call(engine, "DELETE", f"/{a},{b}")


def test_calibrate_writes_a_calibration_of_the_index(
    engine: Engine, index_name: str, tmp_path: Path
) -> None:
    from esqlog.calibration.files import load_calibration

    out = tmp_path / "code.qlog.json"
    summary = run_json(engine, make_repo(tmp_path / "repo"), index_name, "--calibrate", str(out))
    record = load_calibration(out)
    assert (record.index, record.field, record.live_docs) == (
        index_name,
        "content",
        summary["documents"],
    )
    assert summary["calibration"]["q"] == pytest.approx(record.q)


def test_calibrating_an_empty_folder_is_one_line(
    engine: Engine, index_name: str, tmp_path: Path
) -> None:
    (tmp_path / "empty.txt").write_text("\n", encoding="utf-8")
    out = tmp_path / "cal.json"
    _one_error_line(
        run(engine, str(tmp_path), "--index", index_name, "--calibrate", str(out)),
        "nothing to index",
    )
    assert not out.exists()
    assert not engine.client.indices.exists(index=index_name)  # no empty index left behind
