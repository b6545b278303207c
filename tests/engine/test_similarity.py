"""esqlog similarity apply/revert: q-log BM25 as the index default, and back, on real engines.

OpenSearch runs Painless, so the round trip is checked there against the pure-Python
oracle; Elasticsearch here has no Painless, which is the failure path: a one-line error and
the index left open with its settings unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner, Result

from esqlog.cli import main
from esqlog.engine.client import Engine
from esqlog.errors import ClusterError
from esqlog.scoring.similarity import SimilarityParams, apply_plan, read_state_plan
from esqlog.scoring.similarity_backup import BACKUP_INDEX
from tests.support.code_snippets import SNIPPETS
from tests.support.engines import ENGINE_URLS, bulk_index, call, create_index, found
from tests.support.lucene_bm25 import bm25_term

QUERIES = ("read file", "error string name", "reader", "func data error")
#: Keys the engine maintains itself; they never change across close/open anyway.
BOOKKEEPING = (
    "index.creation_date",
    "index.uuid",
    "index.version.",
    "index.provided_name",
    "index.verified_before_close",
)


def _cli(engine: Engine, *args: str) -> Result:
    url = ENGINE_URLS[engine.flavor]
    return CliRunner().invoke(main, ["similarity", args[0], "--url", url, *args[1:]])


def _one_line_error(result: Result, code: int) -> str:
    assert result.exit_code == code, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.output
    return lines[0]


def _settings(engine: Engine, index: str) -> dict[str, Any]:
    flat = call(engine, "GET", f"/{index}/_settings", flat_settings="true")[index]["settings"]
    return {k: v for k, v in flat.items() if not k.startswith(BOOKKEEPING)}


def _status(engine: Engine, index: str) -> str:
    rows = call(engine, "GET", f"/_cat/indices/{index}", format="json", h="status")
    return str(rows[0]["status"])


def _backup_exists(engine: Engine, uuid: str) -> bool:
    """Whether the backup document exists; absent only on the engine's 404."""
    answer = found(engine, "GET", f"/{BACKUP_INDEX}/_doc/{uuid}")
    return bool(answer is not None and answer.get("found"))


def _scores(engine: Engine, index: str, query: str) -> dict[str, float]:
    result = call(
        engine,
        "POST",
        f"/{index}/_search",
        {"query": {"match": {"body": query}}, "size": 100},
        search_type="dfs_query_then_fetch",
    )
    return {h["_id"]: h["_score"] for h in result["hits"]["hits"]}


def _make_index(engine: Engine, **kwargs: Any) -> str:
    name = create_index(engine, shards=2, **kwargs)
    bulk_index(engine, name, [{"id": i, "body": s} for i, s in enumerate(SNIPPETS)])
    return name


@pytest.fixture
def sim_index(request: pytest.FixtureRequest) -> Iterator[tuple[Engine, str]]:
    """A 2-shard snippet index on the engine named by the test's parameter, cleaned up."""
    from tests.support.engines import connect_engine

    engine = connect_engine(request.param)
    name = _make_index(engine)
    uuid = engine.run(read_state_plan(name)).uuid
    yield engine, name
    call(engine, "DELETE", f"/{name}")
    if _backup_exists(engine, uuid):
        call(engine, "DELETE", f"/{BACKUP_INDEX}/_doc/{uuid}")


def _oracle(
    engine: Engine, index: str, query: str, q: float, k1: float = 1.2, b: float = 0.75
) -> dict[str, float]:
    """q-log BM25 of every matching document by the independent pure-Python formula."""
    tokens = {
        str(i): [
            t["token"]
            for t in call(engine, "POST", f"/{index}/_analyze", {"field": "body", "text": s})[
                "tokens"
            ]
        ]
        for i, s in enumerate(SNIPPETS)
    }
    N = len(tokens)
    avgdl = sum(len(t) for t in tokens.values()) / N
    terms = [
        t["token"]
        for t in call(engine, "POST", f"/{index}/_analyze", {"field": "body", "text": query})[
            "tokens"
        ]
    ]
    out: dict[str, float] = {}
    for doc_id, toks in tokens.items():
        score = 0.0
        for term in terms:
            if term in toks:
                n = sum(1 for other in tokens.values() if term in other)
                score += bm25_term(toks.count(term), len(toks), avgdl, n, N, q, k1, b)
        if score:
            out[doc_id] = score
    return out


# --- OpenSearch: the round trip -------------------------------------------------------------


@pytest.mark.parametrize("sim_index", ["opensearch"], indirect=True)
def test_apply_then_revert_round_trip(sim_index: tuple[Engine, str]) -> None:
    engine, index = sim_index
    before_settings = _settings(engine, index)
    native = {query: _scores(engine, index, query) for query in QUERIES}
    uuid = engine.run(read_state_plan(index)).uuid

    result = _cli(engine, "apply", index, "--q", "0.6", "--yes")
    assert result.exit_code == 0, result.output
    assert "q=0.6" in result.output and _status(engine, index) == "open"
    assert _backup_exists(engine, uuid)
    state = engine.run(read_state_plan(index))
    assert state.esqlog_applied and state.applied_q == 0.6
    for query in QUERIES:
        got = _scores(engine, index, query)
        expected = _oracle(engine, index, query, 0.6)
        assert got.keys() == expected.keys(), query
        for doc_id, score in expected.items():
            assert got[doc_id] == pytest.approx(score, rel=1e-4, abs=1e-4), (query, doc_id)

    refused = _cli(engine, "revert", index)
    assert "--yes" in _one_line_error(refused, 2)
    assert "restore no index.similarity settings" in refused.stdout
    assert engine.run(read_state_plan(index)).esqlog_applied

    result = _cli(engine, "revert", index, "--yes")
    assert result.exit_code == 0, result.output
    assert _status(engine, index) == "open"
    assert _settings(engine, index) == before_settings
    assert not _backup_exists(engine, uuid)
    for query in QUERIES:
        assert _scores(engine, index, query) == native[query]  # exactly the native scores


@pytest.mark.parametrize("sim_index", ["opensearch"], indirect=True)
def test_round_trip_restores_a_custom_similarity_and_keeps_the_first_backup(
    sim_index: tuple[Engine, str],
) -> None:
    engine, index = sim_index
    call(engine, "POST", f"/{index}/_close")
    call(
        engine,
        "PUT",
        f"/{index}/_settings",
        {
            "index.similarity.default.type": "BM25",
            "index.similarity.default.k1": "1.6",
            "index.similarity.default.b": "0.5",
        },
    )
    call(engine, "POST", f"/{index}/_open", wait_for_active_shards="all")
    before_settings = _settings(engine, index)
    native = _scores(engine, index, "read file")

    assert (
        _cli(engine, "apply", index, "--q", "0.8", "--k1", "2.0", "--b", "0.3", "--yes").exit_code
        == 0
    )
    got = _scores(engine, index, "read file")
    for doc_id, score in _oracle(engine, index, "read file", 0.8, 2.0, 0.3).items():
        assert got[doc_id] == pytest.approx(score, rel=1e-4, abs=1e-4)
    again = _cli(engine, "apply", index, "--q", "0.5", "--yes")
    assert again.exit_code == 0 and "backup from the first apply was kept" in again.output
    assert engine.run(read_state_plan(index)).applied_q == 0.5

    assert _cli(engine, "revert", index, "--yes").exit_code == 0
    assert _settings(engine, index) == before_settings
    assert _scores(engine, index, "read file") == native


@pytest.mark.parametrize("sim_index", ["opensearch"], indirect=True)
def test_refuses_without_yes_and_says_what_would_happen(sim_index: tuple[Engine, str]) -> None:
    engine, index = sim_index
    before = _settings(engine, index)
    uuid = engine.run(read_state_plan(index)).uuid
    result = _cli(engine, "apply", index, "--q", "0.7")
    line = _one_line_error(result, 2)
    assert "--yes" in line
    assert "CLOSE the index" in result.stdout and "fail while it is closed" in result.stdout
    assert _status(engine, index) == "open" and _settings(engine, index) == before
    assert not _backup_exists(engine, uuid)
    line = _one_line_error(_cli(engine, "revert", index, "--yes"), 2)
    assert "no similarity backup" in line


def test_refuses_a_mapping_with_its_own_similarity(opensearch: Engine) -> None:
    index = create_index(
        opensearch,
        shards=1,
        mappings={
            "properties": {
                "body": {"type": "text"},
                "title": {"type": "text", "similarity": "boolean"},
            }
        },
    )
    try:
        before = _settings(opensearch, index)
        line = _one_line_error(_cli(opensearch, "apply", index, "--q", "0.7", "--yes"), 2)
        assert "'title'" in line or "title" in line
        assert _status(opensearch, index) == "open" and _settings(opensearch, index) == before
    finally:
        call(opensearch, "DELETE", f"/{index}")


def test_bad_q_is_a_usage_error(opensearch: Engine) -> None:
    line = _one_line_error(_cli(opensearch, "apply", "whatever", "--q", "3", "--yes"), 2)
    assert "q must be" in line


# --- Elasticsearch without Painless: the failure path ---------------------------------------


@pytest.mark.parametrize("sim_index", ["elasticsearch"], indirect=True)
def test_elasticsearch_without_painless_leaves_the_index_open_and_unchanged(
    sim_index: tuple[Engine, str],
) -> None:
    engine, index = sim_index
    before = _settings(engine, index)
    native = _scores(engine, index, "read file")
    uuid = engine.run(read_state_plan(index)).uuid

    line = _one_line_error(_cli(engine, "apply", index, "--q", "0.7", "--yes"), 3)
    assert "painless" in line.lower() and "unchanged" in line
    assert _status(engine, index) == "open" and _settings(engine, index) == before
    assert not _backup_exists(engine, uuid)

    # Without the pre-flight check the engine rejects the update itself, after the close:
    # the index must be re-opened, unchanged, and the fresh backup removed again.
    with pytest.raises(ClusterError) as failure:
        engine.run(apply_plan(index, SimilarityParams(0.7), preflight=False))
    message = str(failure.value)
    assert "while updating the settings" in message
    assert "is open with its settings unchanged" in message and "\n" not in message
    assert _status(engine, index) == "open" and _settings(engine, index) == before
    assert not _backup_exists(engine, uuid)
    assert _scores(engine, index, "read file") == native
