"""Recall@B tokens on real engines: the metric scores what search_code actually answers.

1,500 real Go functions of the bundled sample (with path and symbol, as ``esqlog index``
stores them), calibrated with --vocabulary --identifiers. For each query the outcome the
evaluation computes is checked against the text CodeSearch.search (the MCP tool's logic)
returns at the same budget with detail="code" (the whole-chunk packing the metric scores;
these documents have no line fields, so each chunk's header still names its id), and the
identifiers mode's gold rank against the wrapped client's own answer.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

import pytest

from esqlog.agent.code_search import CodeSearch, search_kwargs
from esqlog.agent.queries import agent_query, named_symbols
from esqlog.agent.scope import Scope
from esqlog.agent.tokens import default_counter
from esqlog.calibration.calibrate import calibrate
from esqlog.calibration.files import save_calibration
from esqlog.calibration.record import Calibration
from esqlog.cli.demo_cmd import sample_path
from esqlog.engine.client import Engine
from esqlog.evaluation.corpus import load_queries, read_jsonl
from esqlog.identifiers.calibrate import calibrate_identifiers, save_identifier_calibration
from scripts.bench.budget_recall import budget_outcome, cached, search_chunks, summarize
from tests.support.engines import bulk_index, call, create_index

N_DOCS = 1500
BUDGETS = (1_000, 2_000, 4_000, 8_000)


@pytest.fixture(scope="module")
def indexed(
    engine: Engine, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Calibration, list[Any]]]:
    records = list(read_jsonl(sample_path("sample_go_docs.jsonl.gz")))[:N_DOCS]
    docs = [
        {"id": r["id"], "body": r["text"], "path": r["path"], "symbol": r["name"]} for r in records
    ]
    ids = {d["id"] for d in docs}
    queries = [q for q in load_queries(sample_path("sample_go_queries.jsonl")) if q.gold in ids][
        :25
    ]
    index = create_index(
        engine,
        shards=1,
        mappings={
            "properties": {
                "body": {"type": "text"},
                "path": {"type": "keyword"},
                "symbol": {"type": "keyword"},
            }
        },
    )
    try:
        bulk_index(engine, index, docs)
        found = calibrate_identifiers(engine, index, "body")
        record, _, _ = save_identifier_calibration(
            found, tmp_path_factory.mktemp("recall") / "cal.json"
        )
        yield index, record, queries
    finally:
        call(engine, "DELETE", f"/{index}")


def _untied_through_gold(chunks_scores: list[tuple[str, float]], gold: str) -> bool:
    """True when no two hits down to the gold share a score (their order is then fixed)."""
    ids = [i for i, _ in chunks_scores]
    if gold not in ids:
        return True
    scores = [s for _, s in chunks_scores[: ids.index(gold) + 2]]
    return len(set(scores)) == len(scores)


@pytest.mark.parametrize("mode", ["boost", "identifiers"])
def test_outcomes_match_search_code_answers(
    engine: Engine, indexed: Any, mode: Literal["boost", "identifiers"]
) -> None:
    """Also the ``esqlog mcp --mode identifiers`` path: CodeSearch in that mode."""
    import esqlog

    index, calibration, queries = indexed
    counter = cached(default_counter())
    tool = CodeSearch(engine, calibration, index, "body", counter, mode=mode)
    wrapped = esqlog.wrap(engine.client, calibration, mode=mode)
    checked = shown_somewhere = 0
    for query in queries:
        raw = wrapped.search(
            **search_kwargs(
                engine.flavor,
                index,
                "body",
                agent_query(query.text) or query.text,
                200,
                Scope(),
                named_symbols(query.text),
            )
        )
        if not _untied_through_gold(
            [(h["_id"], h["_score"]) for h in raw["hits"]["hits"]], query.gold
        ):
            continue  # equal scores: the engine's order and the metric's may differ
        chunks = search_chunks(wrapped, engine.flavor, index, "body", query.text, 200)
        outcome = budget_outcome(query.qid, chunks, query.gold, counter, BUDGETS)
        for budget in BUDGETS:
            answer = tool.search(query.text, budget, 200, detail="code")
            assert outcome.shown[budget] == (f" id={query.gold} " in answer), (query, budget)
            shown_somewhere += outcome.shown[budget]
        checked += 1
    assert checked >= 12 and shown_somewhere > 0


def test_three_systems_on_one_query_list(engine: Engine, indexed: Any) -> None:
    import esqlog

    index, calibration, queries = indexed
    counter = default_counter()
    clients = {
        "native": engine.client,
        "q-log": esqlog.wrap(engine.client, calibration),
        "identifiers": esqlog.wrap(engine.client, calibration, mode="identifiers"),
    }
    outcomes = {}
    for name, client in clients.items():
        rows = []
        for q in queries:
            chunks = search_chunks(client, engine.flavor, index, "body", q.text, 200)
            rows.append(budget_outcome(q.qid, chunks, q.gold, counter, BUDGETS))
            hits = client.search(
                **search_kwargs(
                    engine.flavor,
                    index,
                    "body",
                    agent_query(q.text) or q.text,
                    200,
                    Scope(),
                    named_symbols(q.text),
                )
            )["hits"]["hits"]
            ids = [h["_id"] for h in hits]
            assert {c.id for c in chunks} == set(ids)  # same hits, only ties reordered
            if q.gold in ids:
                gold_score = hits[ids.index(q.gold)]["_score"]
                above = sum(h["_score"] > gold_score for h in hits)
                tied = sum(h["_score"] == gold_score for h in hits)
                assert rows[-1].gold_rank is not None
                assert above < rows[-1].gold_rank <= above + tied
            else:
                assert rows[-1].gold_rank is None
        outcomes[name] = rows
    summary = summarize(outcomes, baseline="native", budgets=BUDGETS, n_resamples=200)
    for entry in summary.values():
        recalls = [entry["recall"][b][0] for b in BUDGETS]
        assert 0.0 < recalls[-1] <= 1.0
        for b in BUDGETS:  # search_code's skip-packing never does worse than the prefix
            assert entry["recall"][b][0] >= entry["prefix"][b][0] - 1e-12
    assert set(summary["q-log"]["gain"]) == set(BUDGETS)


def test_mcp_identifiers_mode_needs_identifier_statistics(
    engine: Engine, indexed: Any, tmp_path: Any
) -> None:
    """A calibration without --identifiers: one line naming the fix, no traceback."""
    from click.testing import CliRunner

    from esqlog.cli import main
    from tests.support.engines import ENGINE_URLS

    index = indexed[0]
    cal_file = save_calibration(calibrate(engine, index, "body"), tmp_path / "plain.json")
    result = CliRunner().invoke(
        main,
        [
            "mcp",
            "--url",
            ENGINE_URLS[engine.flavor],
            "--index",
            index,
            "--calibration",
            str(cal_file),
            "--mode",
            "identifiers",
        ],
    )
    assert result.exit_code != 0
    assert "--identifiers" in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) <= 2
