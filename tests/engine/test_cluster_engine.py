"""esqlog on a real three-node OpenSearch cluster (scripts/engines/cluster.sh).

One index of real Go functions, 6 shards with one replica each, so every shard has two
copies on two different nodes, and a few documents deleted and not merged away. On it:

- calibrate's global statistics and every vocabulary snapshot equal what ``explain`` reports
  under ``dfs_query_then_fetch``, whichever node's copies answer;
- the parallel scans (esqlog.engine.shard_scan) give exactly the sequential scans' results;
- every wrapper mode returns the independent oracle's scores (tests/support/oracle.py);
- a node stopped during a load run (threads and async tasks) costs no wrong result; calibrate
  during the outage finishes exactly or fails with one line and writes nothing; the node
  rejoining changes nothing esqlog answers.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from esqlog.calibration.calibrate import calibrate, calibrate_with_vocabulary
from esqlog.calibration.cluster_store import install_script_plan
from esqlog.engine.client import Engine
from esqlog.engine.steps import Request
from esqlog.statistics.hapax import exact_hapax
from esqlog.statistics.terms import shard_routings_plan, term_stats_plan
from esqlog.statistics.vocabulary_scan import scan_vocabulary, scan_vocabulary_plan
from esqlog.wrapper import wrap
from tests.support.cluster_outage import run_outage
from tests.support.engines import bulk_index, call, create_index, wait_green
from tests.support.explain import explain_n_N as _explain_n_N
from tests.support.modes import Q_LOW
from tests.support.modes import check_against_oracle as _check_against_oracle
from tests.support.oracle import (
    DELETE_EVERY,
    MAPPINGS,
    Corpus,
    hits_of,
    load_docs,
    load_query_texts,
    qlog_match_scores,
)

SHARDS = 6
DFS = "dfs_query_then_fetch"


@pytest.fixture(scope="module")
def corpus(cluster: Engine) -> Iterator[Corpus]:
    docs = load_docs()
    index = create_index(
        cluster, shards=SHARDS, mappings=MAPPINGS, settings={"number_of_replicas": 1}
    )
    try:
        wait_green(cluster, index)
        bulk_index(cluster, index, docs)
        deleted = [d["id"] for d in docs[::DELETE_EVERY]]
        lines = "".join(f'{{"delete": {{"_index": "{index}", "_id": "{i}"}}}}\n' for i in deleted)
        assert not call(cluster, "POST", "/_bulk", lines, refresh="true").get("errors")
        cluster.run(install_script_plan())
        cals = {f: calibrate(cluster, index, f, sample=500) for f in ("body", "title")}
        routings = cluster.run(shard_routings_plan(index, SHARDS))
        gone = set(deleted)
        live = {d["id"]: d for d in docs if d["id"] not in gone}
        yield Corpus(cluster, index, live, deleted, cals, routings, cluster.bm25_scale)
    finally:
        call(cluster, "DELETE", f"/{index}")


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return load_query_texts()


def node_ids(engine: Engine) -> dict[str, str]:
    """{node name: node id}."""
    nodes = call(engine, "GET", "/_nodes/_all/none")["nodes"]
    return {n["name"]: node_id for node_id, n in nodes.items()}


def query_terms(corpus: Corpus, texts: list[str], field_name: str, count: int) -> list[str]:
    """Distinct analyzed terms of real query texts that some live document holds."""
    held = {t for tf in corpus.vectors(field_name).values() for t in tf}
    out: list[str] = []
    for text in texts:
        out += [t for t in corpus.analyze(field_name, text) if t in held and t not in out]
        if len(out) >= count:
            break
    return out[:count]


def explain_n_N(corpus: Corpus, field_name: str, term: str, preference: str) -> tuple[int, int]:
    body = call(
        corpus.engine,
        "POST",
        f"/{corpus.index}/_search",
        {"query": {"term": {field_name: term}}, "explain": True, "size": 1},
        search_type=DFS,
        preference=preference,
    )
    hits = body["hits"]["hits"]
    assert hits and body["_shards"]["failed"] == 0, (term, body["_shards"])
    found = _explain_n_N(hits[0]["_explanation"])
    assert found is not None, term
    return found


# --- the cluster itself --------------------------------------------------------------------


def test_shards_and_replicas_live_on_different_nodes(corpus: Corpus) -> None:
    copies = call(corpus.engine, "GET", f"/_cat/shards/{corpus.index}", format="json")
    assert len(copies) == 2 * SHARDS and all(c["state"] == "STARTED" for c in copies)
    by_shard: dict[str, set[str]] = {}
    for c in copies:
        by_shard.setdefault(c["shard"], set()).add(c["node"])
    assert all(len(nodes) == 2 for nodes in by_shard.values())  # two copies, two nodes
    assert {c["node"] for c in copies} == set(node_ids(corpus.engine))  # all three hold some
    assert len({c["node"] for c in copies if c["prirep"] == "p"}) >= 2
    docs = call(corpus.engine, "GET", f"/{corpus.index}/_stats/docs")["_all"]["primaries"]
    assert docs["docs"]["deleted"] >= len(corpus.deleted) > 0  # deletions not merged away


# --- statistics and snapshots equal explain under dfs --------------------------------------


@pytest.mark.parametrize("field_name", ["body", "title"])
def test_global_statistics_equal_dfs_explain_on_every_node(
    corpus: Corpus, texts: list[str], field_name: str
) -> None:
    """N and n(t) from calibrate / esqlog.statistics.terms equal explain's, whichever node's copies
    run the dfs phase (each node preferred in turn: primaries and replicas both answer)."""
    cal = corpus.calibrations[field_name]
    assert cal.doc_count == len(corpus.docs) + len(corpus.deleted)  # deletions still count
    assert cal.shards == SHARDS
    terms = query_terms(corpus, texts, field_name, 12)
    assert len(terms) >= 8
    fstats, df = corpus.engine.run(
        term_stats_plan(corpus.index, field_name, terms, corpus.routings)
    )
    assert fstats.doc_count == cal.doc_count and fstats.sum_ttf == cal.sum_ttf
    for node_id in node_ids(corpus.engine).values():
        for term in terms:
            assert explain_n_N(corpus, field_name, term, f"_prefer_nodes:{node_id}") == (
                df[term],
                cal.doc_count,
            ), (node_id, term)


@pytest.mark.parametrize("field_name", ["body", "title"])
def test_vocabulary_snapshots_equal_dfs_explain(
    corpus: Corpus, texts: list[str], field_name: str
) -> None:
    record, vocab = calibrate_with_vocabulary(corpus.engine, corpus.index, field_name)
    assert vocab.doc_count == record.doc_count == corpus.calibrations[field_name].doc_count
    terms = query_terms(corpus, texts, field_name, 40)
    snapshot = vocab.df_of(terms)
    node = next(iter(node_ids(corpus.engine).values()))
    for term in terms:
        assert explain_n_N(corpus, field_name, term, f"_prefer_nodes:{node}") == (
            snapshot[term],
            vocab.doc_count,
        ), term
    held = {t for tf in corpus.vectors(field_name).values() for t in tf}
    assert len(vocab) == len(held)  # every term of a live document, no other


# --- parallel scans equal sequential ones ---------------------------------------------------


def test_parallel_vocabulary_scan_equals_the_sequential_scan(corpus: Corpus) -> None:
    sequential = corpus.engine.run(scan_vocabulary_plan(corpus.index, "body", SHARDS, batch=97))
    counted: list[int] = []
    parallel = scan_vocabulary(
        corpus.engine, corpus.index, "body", SHARDS, parallel=SHARDS, progress=counted.append
    )
    assert sum(counted) == parallel.docs == sequential.docs == len(corpus.docs)
    assert parallel.df == sequential.df and parallel.ttf == sequential.ttf
    assert (parallel.doc_count, parallel.sum_ttf) == (sequential.doc_count, sequential.sum_ttf)
    for a, b in zip(parallel.arrays(), sequential.arrays(), strict=True):
        assert np.array_equal(a, b)


def test_parallel_exact_hapax_equals_the_sequential_one(corpus: Corpus) -> None:
    one = exact_hapax(corpus.engine, corpus.index, "body", corpus.routings, parallel=1)
    many = exact_hapax(corpus.engine, corpus.index, "body", corpus.routings, parallel=4)
    assert (one.docs, one.tokens) == (many.docs, many.tokens)
    assert one.docs == len(corpus.docs)
    assert many.h_tok == pytest.approx(one.h_tok, abs=1e-15) and 0 < one.h_tok < 1
    _, vocab = calibrate_with_vocabulary(corpus.engine, corpus.index, "body", parallel=3)
    exact = calibrate(corpus.engine, corpus.index, "body", exact=True, parallel=SHARDS)
    assert exact.h_tok == pytest.approx(one.h_tok, abs=1e-15)
    assert vocab.doc_count == exact.doc_count


def test_a_failing_shard_stops_the_parallel_scan_and_clears_every_scroll(corpus: Corpus) -> None:
    """The third term-vector batch fails: the scan raises that failure, the other shards
    stop at their next request, and every scroll context is released."""
    lock = threading.Lock()

    class Failing(Engine):
        batches = 0

        def perform(self, request: Request) -> Any:
            if request.path.endswith("/_mtermvectors"):
                with lock:
                    Failing.batches += 1
                    if Failing.batches == 3:
                        raise RuntimeError("injected failure")
            return super().perform(request)

    with pytest.raises(RuntimeError, match="injected failure"):
        scan_vocabulary(Failing(corpus.engine.client), corpus.index, "body", SHARDS, parallel=3)
    stats = call(corpus.engine, "GET", "/_nodes/stats/indices/search")["nodes"].values()
    assert sum(n["indices"]["search"]["scroll_current"] for n in stats) == 0
    assert Failing.batches < SHARDS  # stopped early: some shard never had its batch read


# --- every wrapper mode returns the oracle's scores -----------------------------------------


@pytest.mark.parametrize("mode", ["boost", "script", "rerank-engine", "rerank-client"])
def test_wrapper_modes_equal_the_oracle(corpus: Corpus, texts: list[str], mode: str) -> None:
    name, _, where = mode.partition("-")
    options: dict[str, Any] = {"rerank_in": where, "top_n": 30} if where else {}
    client = wrap(corpus.engine.client, corpus.cals(Q_LOW), mode=name, **options)
    checked = 0
    for text in texts[:10]:
        oracle = qlog_match_scores(corpus, "body", text, Q_LOW)
        got = client.search(
            index=corpus.index,
            body={"query": {"match": {"body": text}}, "size": 10, "track_total_hits": True},
        )
        if name == "rerank":  # rerank keeps the native match set and moves the top hits
            for doc_id, score in hits_of(got):
                assert score == pytest.approx(oracle[doc_id], rel=1e-4), (mode, text, doc_id)
        else:
            _check_against_oracle(corpus, got, oracle, 10, (mode, text))
        checked += len(hits_of(got))
    assert checked >= 80


def test_snapshot_backed_wrapper_equals_the_oracle(
    corpus: Corpus, texts: list[str], tmp_path: Path
) -> None:
    from esqlog.calibration.files import save_with_vocabulary

    record, vocab = calibrate_with_vocabulary(corpus.engine, corpus.index, "body")
    path = tmp_path / "body.json"
    save_with_vocabulary(dataclasses.replace(record, q=Q_LOW), vocab, path)
    client = wrap(corpus.engine.client, [path], mode="boost")
    for text in texts[10:18]:
        oracle = qlog_match_scores(corpus, "body", text, Q_LOW)
        got = client.search(
            index=corpus.index,
            body={"query": {"match": {"body": text}}, "size": 10, "track_total_hits": True},
        )
        _check_against_oracle(corpus, got, oracle, 10, ("snapshot", text))


@pytest.mark.parametrize("engine_query", ["span", "plugin", "node"])
def test_identifiers_mode_equals_its_oracle(
    cluster: Engine, engine_query: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Spans (one request per shard), the esqlog-terms plugin's query (one plain search:
    the coordinating node sends it over the wire to the shard copies on the other nodes,
    which read it back) and the same planned on the node (``node``: the coordinating node
    reads the word lists, a copy on every node, and sends the groups it chose) all score as
    the oracle, shard by shard, on three nodes."""
    from esqlog.calibration.files import load_calibration, save_calibration
    from esqlog.identifiers.query import plan_identifier_query
    from esqlog.identifiers.settings import IdentifierSettings
    from esqlog.identifiers.word_lists import write_for_record
    from tests.support.identifiers_fixture import search as _search
    from tests.support.identifiers_fixture import texts as _texts
    from tests.support.identifiers_fixture import wrapped_fixture
    from tests.support.oracle import body_of

    fixture = wrapped_fixture(cluster, tmp_path_factory, shards=SHARDS, replicas=1)
    w = next(fixture)
    lists = None
    try:
        if engine_query == "node":  # calibrate's word lists, which the nodes plan from
            record, _ = write_for_record(w.engine, w.stats, load_calibration(w.path))
            lists = record.word_lists
            assert lists is not None
            save_calibration(record, w.path)
        client = wrap(
            w.engine.client,
            w.path,
            mode="identifiers",
            identifiers=IdentifierSettings(
                engine_query="plugin" if engine_query == "node" else engine_query,
                node_plan=engine_query == "node",
                select="cover",  # the budget's plan, the oracle's (select all: node_plans)
            ),
        )
        if engine_query != "span":  # calibrate found it on every node of the cluster
            assert load_calibration(w.path).terms_plugin
        checked = 0
        alone = w.common_words(IdentifierSettings())
        for text in _texts(w, 12, IdentifierSettings()):
            words = w.plan_words(text, IdentifierSettings())
            plan = plan_identifier_query(text, w.stats, w.vocab.df_of)
            response = body_of(_search(client, w, {"match": {"body": text}}))
            assert response["hits"]["total"]["value"] == len(w.oracle.matching(words)), text
            for hit in response["hits"]["hits"]:  # one request per shard, any copy
                expected = (
                    w.oracle.score(
                        hit["_id"], words, plan.q, grouped=False, alone=alone, local=True
                    )
                    * w.scale
                )
                assert hit["_score"] == pytest.approx(expected, rel=1e-4), (text, hit["_id"])
                checked += 1
        assert checked > 80
    finally:
        fixture.close()
        if lists is not None:
            w.engine.perform(Request("DELETE", f"/{lists}"))


# --- a node stops during a load run --------------------------------------------------------


def test_node_outage_during_load(corpus: Corpus, texts: list[str], tmp_path: Path) -> None:
    report = run_outage(corpus, texts[:30], tmp_path)
    print("\n" + report.describe())
    assert report.queries_during_outage > 0 and report.queries_after_rejoin > 0
    assert report.mismatches == 0, report.mismatch_examples[:3]  # complete answers
    # failed shards only while the node leaves or comes back, never with all three up
    assert not any(k.startswith(("before", "after")) for k in report.partial), report.partial
    assert report.foreign_errors == [], report.foreign_errors[:3]  # only the client's own
    assert report.calibrate_ok or report.calibrate_error_lines == 1
    assert report.partial_files == []
    assert report.answers_after_rejoin_unchanged
    assert report.calibration_after_rejoin_unchanged
