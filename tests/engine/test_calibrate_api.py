"""``esqlog.calibrate`` on both real engines, through the application's own client: the
Calibration equals what ``esqlog calibrate`` writes for the same index, files appear only
with ``out``, and ``esqlog.wrap(client, esqlog.calibrate(client, ...))`` searches (a copy
of the wrapped client too)."""

from __future__ import annotations

import copy
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import esqlog
from esqlog.cli import main
from esqlog.engine.client import Engine
from tests.support.code_snippets import SNIPPETS
from tests.support.engines import ENGINE_URLS, bulk_index, call, create_index

#: what must agree between the CLI's file and the API's record (created_at, the
#: esqlog version and the file's folder may differ)
MEASURED = (
    "index",
    "index_uuid",
    "field",
    "doc_count",
    "live_docs",
    "sum_ttf",
    "shards",
    "analyzer",
    "splits_identifiers",
    "standard_analysis",
    "search_analyzer",
    "predictor",
    "predictor_version",
    "engine",
    "engine_version",
    "h_tok_method",
    "vocabulary_terms",
)
APPROXIMATE = ("q", "h_tok", "h_tok_low", "h_tok_high", "avgdl")


@pytest.fixture(scope="module")
def code_index(engine: Engine) -> Iterator[str]:
    """Two shards of code snippets (each twice), ten one-off words, one deleted document."""
    name = create_index(engine, shards=2)
    docs = [{"id": f"{c}{i}", "body": s} for c in ("a", "b") for i, s in enumerate(SNIPPETS)]
    docs += [{"id": f"u{i}", "body": f"unique{i}word appears once here"} for i in range(10)]
    try:
        bulk_index(engine, name, docs)
        call(engine, "DELETE", f"/{name}/_doc/u3")
        call(engine, "POST", f"/{name}/_refresh")
        yield name
    finally:
        call(engine, "DELETE", f"/{name}")


def _cli(engine: Engine, index: str, out: Path, *flags: str) -> esqlog.Calibration:
    result = CliRunner().invoke(
        main,
        [
            "calibrate",
            "--url",
            ENGINE_URLS[engine.flavor],
            "--index",
            index,
            "--field",
            "body",
            "--out",
            str(out),
            *flags,
        ],
    )
    assert result.exit_code == 0, result.output
    return esqlog.load_calibration(out)


def _assert_same(api: esqlog.Calibration, cli: esqlog.Calibration) -> None:
    for name in MEASURED:
        assert getattr(api, name) == getattr(cli, name), name
    for name in APPROXIMATE:
        assert getattr(api, name) == pytest.approx(getattr(cli, name), rel=1e-9), name


def _search(client: Any, index: str, query: dict[str, Any]) -> dict[str, Any]:
    """A search as an application writes it (body=: the form both clients take)."""
    response = client.search(index=index, body={"query": query})
    return dict(getattr(response, "body", response))


def _ids(body: dict[str, Any]) -> list[str]:
    return [hit["_id"] for hit in body["hits"]["hits"]]


def _scored(body: dict[str, Any]) -> list[tuple[str, float]]:
    return [(hit["_id"], hit["_score"]) for hit in body["hits"]["hits"]]


def test_the_sampled_calibration_equals_the_cli_s_and_writes_nothing(
    engine: Engine,
    code_index: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cli = _cli(engine, code_index, tmp_path / "cli.json")
    here = tmp_path / "cwd"
    here.mkdir()
    monkeypatch.chdir(here)
    api = esqlog.calibrate(engine.client, code_index, "body")
    assert os.listdir(here) == [] and sorted(os.listdir(tmp_path)) == ["cli.json", "cwd"]
    assert api.h_tok_method == "sample" and api.live_docs == api.doc_count - 1
    _assert_same(api, cli)
    # out= writes the same record, atomically, and load_calibration reads it back equal
    written = esqlog.calibrate(engine.client, code_index, "body", out=here / "api.json")
    assert os.listdir(here) == ["api.json"]
    assert esqlog.load_calibration(here / "api.json") == written
    _assert_same(written, cli)


def test_exact_ignores_the_sample_size_and_matches_the_cli(
    engine: Engine, code_index: str, tmp_path: Path
) -> None:
    cli = _cli(engine, code_index, tmp_path / "cli.json", "--exact")
    api = esqlog.calibrate(engine.client, code_index, "body", exact=True, sample=10**9)
    assert api.h_tok_method == "exact" and api.h_tok_low == api.h_tok == api.h_tok_high
    _assert_same(api, cli)


def test_the_vocabulary_snapshot_equals_the_cli_s_and_wrapped_searches_use_it(
    engine: Engine, code_index: str, tmp_path: Path
) -> None:
    cli = _cli(engine, code_index, tmp_path / "cli" / "c.json", "--vocabulary")
    api = esqlog.calibrate(
        engine.client, code_index, "body", vocabulary=True, out=tmp_path / "api" / "c.json"
    )
    _assert_same(api, cli)
    # the same df of every term (the files' checksums differ by their creation time, which
    # each snapshot records to the second)
    from esqlog.statistics.vocabulary import load_vocabulary

    api_path, cli_path = api.vocabulary_path(), cli.vocabulary_path()
    assert api_path is not None and cli_path is not None
    api_vocab = load_vocabulary(api_path, api.vocabulary_sha256)
    cli_vocab = load_vocabulary(cli_path, cli.vocabulary_sha256)
    assert api_vocab.hashes.tolist() == cli_vocab.hashes.tolist()
    assert api_vocab.df.tolist() == cli_vocab.df.tolist()
    assert api.vocabulary and api.vocabulary_terms > 0
    path = api.vocabulary_path()
    assert path is not None and path.parent == tmp_path / "api" and path.is_file()
    wrapped = esqlog.wrap(engine.client, api, stats="snapshot")
    found = _ids(_search(wrapped, code_index, {"match": {"body": "ReadFile"}}))
    assert found[:2] and set(found[:2]) == {"a0", "b0"}


def test_wrap_of_calibrate_searches_and_a_copy_searches_alike(
    engine: Engine, code_index: str
) -> None:
    calibration = esqlog.calibrate(engine.client, code_index, "body")
    wrapped = esqlog.wrap(engine.client, calibration)
    query = {"match": {"body": "handleWebSocketUpgrade writer"}}
    hits = _search(wrapped, code_index, query)
    native = _search(engine.client, code_index, query)
    assert set(_ids(hits)[:2]) == {"a2", "b2"}
    # rewritten: same documents, other scores (q-log weights, not the engine's own idf)
    assert sorted(_ids(hits)) == sorted(_ids(native))
    assert [score for _, score in _scored(hits)] != [score for _, score in _scored(native)]
    assert _scored(_search(copy.copy(wrapped), code_index, query)) == _scored(hits)
    # a wrapped client calibrates as its client does
    assert esqlog.calibrate(wrapped, code_index, "body").q == calibration.q


def test_identifiers_calibration_serves_the_identifiers_mode(
    engine: Engine, code_index: str, tmp_path: Path
) -> None:
    out = tmp_path / "c.json"
    calibration = esqlog.calibrate(
        engine.client, code_index, "body", vocabulary=True, identifiers=True, out=out
    )
    assert calibration.vocabulary_terms > 0
    assert sorted(p.name.split(".")[1] for p in tmp_path.iterdir()) == ["idents", "json", "vocab"]
    wrapped = esqlog.wrap(engine.client, calibration, mode="identifiers")
    query = {"match": {"body": "web socket upgrade"}}
    # the words live only inside handleWebSocketUpgrade: native BM25 finds nothing
    assert _ids(_search(engine.client, code_index, query)) == []
    found = _ids(_search(wrapped, code_index, query))
    assert set(found[:2]) == {"a2", "b2"}
