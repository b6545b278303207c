"""``esqlog index --calibrate`` on real engines: it writes the calibration, the vocabulary
snapshot and the identifiers statistics; esqlog mcp's auto mode picks identifiers from them;
a rerun after an edit refreshes the three by the changed documents (the new and renamed
functions rank first by exact name, with no separate calibrate) with the same split
statistics a full calibration computes; esqlog's own files, an empty folder and files that
only mention "DO NOT EDIT" are handled as a user expects."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner, Result

from esqlog.agent.code_search import search_kwargs
from esqlog.agent.queries import named_symbols
from esqlog.calibration.files import load_calibration
from esqlog.cli import main
from esqlog.cli.mcp_cmd import mcp_command
from esqlog.engine.client import Engine
from esqlog.engine.failures import error_status
from esqlog.identifiers.calibrate import auto_mode, calibrate_identifiers
from esqlog.identifiers.files import load_for_calibration
from esqlog.statistics.vocabulary import load_vocabulary
from esqlog.wrapper import wrap
from tests.support.engines import ENGINE_URLS, call

VERBS = [
    "parse",
    "read",
    "write",
    "encode",
    "decode",
    "scan",
    "build",
    "merge",
    "split",
    "flush",
    "open",
    "close",
    "fetch",
    "store",
    "index",
    "match",
]
NOUNS = [
    "Header",
    "Block",
    "Token",
    "Buffer",
    "Stream",
    "Packet",
    "Record",
    "Frame",
    "Chunk",
    "Entry",
    "Table",
    "Value",
]
NEW_NAME = "frobnicateQuuxWidget"
RENAMED = "reticulateSplineHeader"


def _go_file(k: int) -> str:
    funcs = []
    for j in range(8):
        verb, noun = VERBS[(k + j) % len(VERBS)], NOUNS[(k * 3 + j) % len(NOUNS)]
        name = f"{verb}{noun}{k}x{j}"
        funcs.append(
            f"// {name} {verb}s the {noun.lower()} of the given reader.\n"
            f"func {name}(r *Reader, n int) ({noun}, error) {{\n"
            f"\tbuf := r.next{noun}(n)\n\treturn {verb}Into{noun}(buf)\n}}\n"
        )
    return f"package pkg{k % 5}\n\n" + "\n".join(funcs)


def _repo(root: Path, files: int = 40) -> Path:
    root.mkdir(parents=True)
    for k in range(files):
        (root / f"file{k:02d}.go").write_text(_go_file(k), encoding="utf-8")
    return root


def _index(engine: Engine, repo: Path, index: str, *args: str) -> dict[str, Any]:
    result = _run(engine, str(repo), "--index", index, "--json", *args)
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.stdout))


def _run(engine: Engine, *args: str) -> Result:
    return CliRunner().invoke(main, ["index", *args, "--url", ENGINE_URLS[engine.flavor]])


@pytest.fixture
def index_name(engine: Engine) -> Iterator[str]:
    name = f"esqlog-test-fresh-{uuid.uuid4().hex[:10]}"
    yield name
    call(engine, "DELETE", f"/{name}", ignore_unavailable="true")


def _rank(
    engine: Engine,
    calibration: Path,
    index: str,
    name: str,
    path: str,
    symbols: list[str] | None = None,
) -> int:
    """Where search_code's request lists ``path``'s symbol ``name`` (``symbols``: the names
    the query spells, as search_code passes them; None: search_code's own)."""
    client = wrap(engine.client, str(calibration), mode="identifiers")
    hits = client.search(
        **search_kwargs(
            engine.flavor,
            index,
            "content",
            name,
            10,
            None,
            named_symbols(name) if symbols is None else symbols,
        )
    )
    paths = [(h["_source"]["path"], h["_source"].get("symbol")) for h in hits["hits"]["hits"]]
    return next(
        (
            k
            for k, (p, s) in enumerate(paths, start=1)
            if p == path and s is not None and s.split(".")[-1] == name
        ),
        99,
    )


def _exists(engine: Engine, index: str) -> bool:
    try:
        call(engine, "GET", f"/{index}")
    except Exception as exc:
        if error_status(exc) == 404:
            return False
        raise
    return True


def test_calibrate_writes_all_three_and_auto_serves_identifiers(
    engine: Engine, index_name: str, tmp_path: Path
) -> None:
    repo = _repo(tmp_path / "repo")
    out = tmp_path / "cal" / "code.qlog.json"
    summary = _index(engine, repo, index_name, "--calibrate", str(out))
    assert summary["calibration"]["how"] == "calibrated"
    assert summary["calibration"]["identifiers_applies"] is True
    names = sorted(p.name for p in out.parent.iterdir())
    assert len(names) == 3 and names[1] == "code.qlog.json"
    assert names[0].startswith("code.qlog.idents.") and names[2].startswith("code.qlog.vocab.")
    record = load_calibration(out)
    assert record.identifiers_applies is True and record.vocabulary_terms > 100
    assert auto_mode(record)[0] == "identifiers"
    default = next(p for p in mcp_command.params if p.name == "mode").default
    assert default == "auto"


def test_a_rerun_refreshes_the_calibration_and_finds_new_names_first(
    engine: Engine, index_name: str, tmp_path: Path
) -> None:
    repo = _repo(tmp_path / "repo")
    out = tmp_path / "cal" / "code.qlog.json"
    _index(engine, repo, index_name, "--calibrate", str(out))
    written = out.read_bytes()
    again = _index(engine, repo, index_name, "--calibrate", str(out))["calibration"]
    assert again["how"] == "unchanged" and out.read_bytes() == written
    edited = repo / "file07.go"
    text = edited.read_text(encoding="utf-8")
    old_name = text.split("func ", 2)[2].split("(", 1)[0]  # the second function's name
    text = text.replace(old_name, RENAMED)
    text += (
        f"\n// {NEW_NAME} frobnicates the widget.\nfunc {NEW_NAME}(w *Widget) int "
        "{\n\treturn w.quuxCount()\n}\n"
    )
    edited.write_text(text, encoding="utf-8")
    summary = _index(engine, repo, index_name, "--calibrate", str(out))
    cal = summary["calibration"]
    assert summary["files_indexed"] == 1 and cal["how"] == "refreshed"
    assert 9 <= cal["changed_documents"] <= 20 and cal["refreshed_docs"] == cal["changed_documents"]
    assert _rank(engine, out, index_name, NEW_NAME, "file07.go") == 1
    assert _rank(engine, out, index_name, RENAMED, "file07.go") == 1
    record = load_calibration(out)
    vocab = load_vocabulary(record.vocabulary_path() or Path(), record.vocabulary_sha256)
    assert vocab.df_of([NEW_NAME.lower(), old_name.lower()]) == {
        NEW_NAME.lower(): 1,
        old_name.lower(): 0,
    }
    assert vocab.might_hold(NEW_NAME.lower())
    # the refreshed split statistics are those a full calibration of the index computes
    stats = load_for_calibration(record.vocabulary_path(), record.vocabulary_sha256)
    full = calibrate_identifiers(engine, index_name, "content").stats
    assert (
        stats.parts_of(NEW_NAME.lower())
        == full.parts_of(NEW_NAME.lower())
        == ("frobnicate", "quux", "widget")
    )
    shared = [w for w in full.words if full.split_df(w)]
    assert shared and {w: stats.split_df(w) for w in shared} == {
        w: full.split_df(w) for w in shared
    }
    assert stats.split_docs == full.split_docs
    assert int(np.count_nonzero(stats.df_split)) == int(np.count_nonzero(full.df_split))


def test_esqlog_own_files_are_never_indexed(
    engine: Engine, index_name: str, tmp_path: Path
) -> None:
    repo = _repo(tmp_path / "repo", files=6)
    out = repo / "code.qlog.json"  # inside the repository
    _index(engine, repo, index_name, "--calibrate", str(out))
    summary = _index(engine, repo, index_name)
    assert summary["skipped"]["esqlog's own file"] == 3
    assert sorted(summary["skipped_paths"]["esqlog's own file"]) == sorted(
        p.name for p in repo.glob("code.qlog.*")
    )
    assert summary["files_indexed"] == 0 and summary["files"] == 6


def test_an_empty_folder_creates_no_index(engine: Engine, index_name: str, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "blank").mkdir()
    (tmp_path / "blank" / "spaces.txt").write_text("  \n\n", encoding="utf-8")
    for folder in ("empty", "blank"):
        result = _run(engine, str(tmp_path / folder), "--index", index_name)
        assert result.exit_code == 2, result.output
        assert result.output.count("error:") == 1 and "nothing to index" in result.output
        assert not _exists(engine, index_name)
    (tmp_path / "empty" / "a.py").write_text("def a():\n    return 1\n", encoding="utf-8")
    assert _index(engine, tmp_path / "empty", index_name)["created"] is True


def test_prose_about_do_not_edit_is_indexed_a_generated_header_is_not(
    engine: Engine, index_name: str, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "walker.py").write_text(
        '"""Skip files whose first lines say DO NOT EDIT or @generated."""\n\n'
        "def skip_generated(head):\n    return b'DO NOT EDIT' in head\n",
        encoding="utf-8",
    )
    (repo / "zz_generated.go").write_text(
        "// Code generated by stringer; DO NOT EDIT.\n\npackage p\n\nfunc X() {}\n",
        encoding="utf-8",
    )
    summary = _index(engine, repo, index_name)
    assert summary["skipped_paths"] == {"generated": ["zz_generated.go"]}
    found = call(
        engine,
        "POST",
        f"/{index_name}/_search",
        body={"query": {"match_all": {}}, "_source": ["path"]},
    )
    assert {h["_source"]["path"] for h in found["hits"]["hits"]} == {"walker.py"}


def test_writes_the_calibration_did_not_see_bring_a_full_calibration(
    engine: Engine, index_name: str, tmp_path: Path
) -> None:
    repo = _repo(tmp_path / "repo")
    out = tmp_path / "cal" / "code.qlog.json"
    _index(engine, repo, index_name, "--calibrate", str(out))
    (repo / "file03.go").write_text(_go_file(3) + f"\nfunc {NEW_NAME}() {{}}\n", encoding="utf-8")
    assert _index(engine, repo, index_name)["files_indexed"] == 1  # no --calibrate
    (repo / "file04.go").write_text(_go_file(4) + f"\nfunc {RENAMED}() {{}}\n", encoding="utf-8")
    cal = _index(engine, repo, index_name, "--calibrate", str(out))["calibration"]
    assert cal["how"] == "calibrated" and cal["refreshed_docs"] == 0
    assert _rank(engine, out, index_name, NEW_NAME, "file03.go") == 1
    assert _rank(engine, out, index_name, RENAMED, "file04.go") == 1


def test_a_long_renamed_method_ranks_above_its_short_callers(
    engine: Engine, index_name: str, tmp_path: Path
) -> None:
    """By its exact name the definition comes first, though BM25's length norm puts the
    short callers that mention the name once above a long body that does too."""
    repo = _repo(tmp_path / "repo")
    body = "".join(f"\tstep{k} := w.advance({k}, n)\n\tw.total += step{k}\n" for k in range(60))
    long_method = f"func (w *Walker) {RENAMED}(n int) int {{\n{body}\treturn w.total\n}}\n"
    callers = "".join(
        f"\nfunc call{k}(w *Walker) int {{\n\treturn w.{RENAMED}({k})\n}}\n" for k in range(3)
    )
    (repo / "walker.go").write_text(f"package pkg0\n\n{long_method}{callers}", encoding="utf-8")
    out = tmp_path / "cal" / "code.qlog.json"
    _index(engine, repo, index_name, "--calibrate", str(out))
    assert _rank(engine, out, index_name, RENAMED, "walker.go", symbols=[]) > 1  # the match alone
    assert _rank(engine, out, index_name, RENAMED, "walker.go") == 1


def test_delete_indexed_deletes_only_what_esqlog_index_made(
    engine: Engine, index_name: str, tmp_path: Path
) -> None:
    from esqlog.errors import UsageError
    from esqlog.indexing.target import delete_indexed

    assert delete_indexed(engine, index_name) is False  # none yet
    call(engine, "PUT", f"/{index_name}")  # somebody else's index of that name
    with pytest.raises(UsageError, match="not made by esqlog index"):
        delete_indexed(engine, index_name)
    assert _exists(engine, index_name)
    call(engine, "DELETE", f"/{index_name}")
    _index(engine, _repo(tmp_path / "repo", files=2), index_name)
    assert delete_indexed(engine, index_name) is True and not _exists(engine, index_name)
