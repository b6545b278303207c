"""Identifiers queries planned on the node (``esqlog_identifiers``, esqlog-terms 1.9.0).

Calibrate writes each sub-word's compounds into an esqlog-owned word-lists index where every
data node runs a plugin that reads them (esqlog.identifiers.word_lists); the wrapper then
sends each word with its weight and the coordinating node chooses the compounds
(WordPlan.java, the steps of esqlog.identifiers.selection). The promise checked here, on
every engine and on 1 and 3 shards: the same match set, hits.total and scores as the query
the client plans itself, for every query text; the request sent is the small one; a lists
index that goes away falls back to the client's plan with one warning; and the node's word
lists show in the plugin's stats.
"""

from __future__ import annotations

import json
import logging
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from esqlog.calibration.files import load_calibration
from esqlog.calibration.plugin import whole_words_for
from esqlog.cli import main
from esqlog.engine.client import Engine
from esqlog.engine.failures import error_status
from esqlog.identifiers.calibrate import calibrate_identifiers, identifier_report
from esqlog.identifiers.files import load_with_vocabulary
from esqlog.identifiers.node_plan import QUERY_NAME
from esqlog.identifiers.settings import IdentifierSettings
from esqlog.identifiers.warm import candidates, warm_plan
from esqlog.identifiers.word_lists import STATE
from esqlog.wrapper import wrap
from tests.support.calibrated_go import mappings
from tests.support.engines import ENGINE_URLS, bulk_index, call, create_index, found
from tests.support.node_plans import EVERY, Planned, assert_every_compound, planned_index
from tests.support.node_plans import Sent as _Sent
from tests.support.node_plans import body as _body
from tests.support.node_plans import texts as _texts
from tests.support.oracle import hits_of, load_docs, total_of

QUERIES = 30  # as tests.support.node_plans
ON_CLIENT = IdentifierSettings(node_plan=False)
#: the budget's choice on the node: what the client's plan (ON_CLIENT) chooses
COVER = IdentifierSettings(select="cover")


@pytest.fixture(scope="module", params=[1, 3], ids=lambda s: f"{s}-shards")
def planned(
    engine: Engine, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Planned]:
    with planned_index(engine, tmp_path_factory.mktemp("node-plan"), int(request.param)) as found:
        yield found


def test_calibrate_writes_marked_complete_lists_and_names_them(planned: Planned) -> None:
    record = load_calibration(planned.path)
    assert record.word_lists == planned.lists and record.terms_plugin
    assert planned.lists in planned.note and "the nodes plan" in planned.note
    mapping = call(planned.engine, "GET", f"/{planned.lists}/_mapping")[planned.lists]
    own = mapping["mappings"]["_meta"]["esqlog"]
    assert own["state"] == STATE and own["complete"] is True and own["words"] > 100
    count = call(planned.engine, "GET", f"/{planned.lists}/_count")["count"]
    assert count == own["words"]


def test_the_node_plans_the_same_match_set_and_scores(planned: Planned) -> None:
    """Every text: the node's plan and the client's give the same hits (all of the match
    set), the same hits.total and the same scores."""
    node = wrap(planned.engine.client, planned.path, mode="identifiers", identifiers=COVER)
    client = wrap(planned.engine.client, planned.path, mode="identifiers", identifiers=ON_CLIENT)
    compared = 0
    for text in _texts():
        expected, got = (
            client.search(index=planned.index, body=_body(text)),
            node.search(index=planned.index, body=_body(text)),
        )
        assert total_of(got) == total_of(expected), text
        want, have = dict(hits_of(expected)), dict(hits_of(got))
        assert have.keys() == want.keys(), text
        for doc, score in want.items():
            assert have[doc] == pytest.approx(score, rel=1e-6), (text, doc)
        compared += len(want)
    assert compared > 5 * QUERIES


def test_the_wrapper_sends_the_words_and_not_the_terms(planned: Planned) -> None:
    text = _texts()[0]
    for settings, name in ((None, QUERY_NAME), (ON_CLIENT, "esqlog_terms")):
        client = wrap(planned.engine.client, planned.path, mode="identifiers", identifiers=settings)
        with _Sent(planned.engine.client) as sent:
            client.search(index=planned.index, body=_body(text, 10))
        assert len(sent.bodies) == 1
        assert name in sent.bodies[0]
        assert (QUERY_NAME in sent.bodies[0]) == (name == QUERY_NAME)


def test_a_filtered_match_is_planned_on_the_client(planned: Planned) -> None:
    """``operator: and`` filters on each token's chosen terms: the client plans it."""
    node = wrap(planned.engine.client, planned.path, mode="identifiers")
    body = {"query": {"match": {"body": {"query": _texts()[0], "operator": "and"}}}, "size": 10}
    with _Sent(planned.engine.client) as sent:
        node.search(index=planned.index, body=body)
    assert len(sent.bodies) == 1 and QUERY_NAME not in sent.bodies[0]
    assert "esqlog_terms" in sent.bodies[0]


def test_a_node_plans_from_lists_it_keeps(planned: Planned) -> None:
    node = wrap(planned.engine.client, planned.path, mode="identifiers")
    text = _texts()[1]
    node.search(index=planned.index, body=_body(text, 10))
    before = call(planned.engine, "GET", "/_esqlog/terms/stats")["word_lists"]
    node.search(index=planned.index, body=_body(text, 10))
    after = call(planned.engine, "GET", "/_esqlog/terms/stats")["word_lists"]
    assert after["hits"] > before["hits"] and after["misses"] == before["misses"]
    assert 0 < after["size_in_bytes"] <= after["limit_in_bytes"]


def _status(engine: Engine, index: str, inner: dict[str, Any]) -> tuple[int | None, str]:
    try:
        call(engine, "POST", f"/{index}/_search", {"query": {QUERY_NAME: inner}})
    except Exception as exc:  # the engine's answer: the status and its reason
        return error_status(exc), str(exc)
    return 200, ""


def test_bad_input_is_the_engines_400_naming_the_problem(planned: Planned) -> None:
    word = {"word": "read", "weight": 1.0}
    good = {"field": "body", "lists": planned.lists, "budget": 300, "words": [word]}
    assert _status(planned.engine, planned.index, good)[0] == 200
    cases = {
        "lists": {**good, "lists": planned.index},
        "budget": {**good, "budget": 0},
        "select": {**good, "select": "best"},
        "tier": {**good, "words": [{**word, "tier": 3}]},
        "weight": {**good, "words": [{"word": "read"}]},
        "colour": {**good, "colour": 1},
    }
    for name, inner in cases.items():
        status, reason = _status(planned.engine, planned.index, inner)
        assert status == 400 and name in reason, (name, status, reason)


def test_missing_lists_fall_back_to_the_clients_plan_once(
    engine: Engine, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The lists index deleted after calibrate: the first search is sent again as the
    client plans it (one warning), the next ones are planned on the client straight away;
    the hits are the client's."""
    index = create_index(engine, shards=1, mappings=mappings())
    lists = None
    try:
        docs = [{"id": d["id"], "body": d["body"], "key": str(d["id"])} for d in load_docs(300)]
        bulk_index(engine, index, docs)
        path = tmp_path / "code.qlog.json"
        record, _ = identifier_report(calibrate_identifiers(engine, index, "body"), path, engine)
        lists = record.word_lists
        assert lists is not None
        call(engine, "DELETE", f"/{lists}")
        node = wrap(engine.client, path, mode="identifiers")
        client = wrap(engine.client, path, mode="identifiers", identifiers=ON_CLIENT)
        texts = _texts()[:3]
        with caplog.at_level(logging.WARNING, logger="esqlog"), _Sent(engine.client) as sent:
            answers = [node.search(index=index, body=_body(t)) for t in texts]
        assert [QUERY_NAME in b for b in sent.bodies] == [True, False, False, False]
        assert sum(QUERY_NAME in r.getMessage() for r in caplog.records) == 1
        for text, answer in zip(texts, answers, strict=True):
            assert hits_of(answer) == hits_of(client.search(index=index, body=_body(text)))
    finally:
        call(engine, "DELETE", f"/{index}")
        if lists is not None:
            found(engine, "DELETE", f"/{lists}")


def test_select_all_scores_as_the_clients_plan_of_every_compound(planned: Planned) -> None:
    assert_every_compound(planned, QUERIES, QUERIES // 2)


def test_select_all_reads_a_word_once_and_keeps_it(planned: Planned) -> None:
    node = wrap(planned.engine.client, planned.path, mode="identifiers", identifiers=EVERY)
    text = _texts()[2]
    node.search(index=planned.index, body=_body(text, 10))
    before = call(planned.engine, "GET", "/_esqlog/terms/stats")["word_postings"]
    again = node.search(index=planned.index, body=_body(text, 10))
    after = call(planned.engine, "GET", "/_esqlog/terms/stats")["word_postings"]
    assert after["hits"] > before["hits"] and after["misses"] == before["misses"]
    assert 0 < after["size_in_bytes"] <= after["limit_in_bytes"] and after["entries"] > 0
    assert hits_of(again)


def test_select_all_explains_each_word_with_the_score(planned: Planned) -> None:
    node = wrap(planned.engine.client, planned.path, mode="identifiers", identifiers=EVERY)
    body = {**_body(_texts()[3], 3), "explain": True}
    for hit in node.search(index=planned.index, body=body)["hits"]["hits"]:
        assert hit["_explanation"]["value"] == pytest.approx(hit["_score"], rel=1e-5)
        assert "its compounds" in json.dumps(hit["_explanation"])


def test_select_all_planned_on_the_client_takes_the_budgets_choice(planned: Planned) -> None:
    """Where the client plans (here: node_plan off; likewise spans, or a node before 1.11.0)
    select "all" is the budget's default choice ("cover"), with one warning: on texts whose
    "cover" and "multi" bodies differ, so that any other choice would show."""
    client = planned.engine.client

    def bodies(settings: IdentifierSettings, texts: list[str]) -> list[str]:
        searcher = wrap(client, planned.path, mode="identifiers", identifiers=settings)
        with _Sent(client) as sent:
            for text in texts:
                searcher.search(index=planned.index, body=_body(text, 10))
        return sent.bodies

    multi = IdentifierSettings(node_plan=False, select="multi")
    texts = [t for t in _texts() if bodies(ON_CLIENT, [t]) != bodies(multi, [t])][:3]
    assert texts
    every = IdentifierSettings(node_plan=False, select="all")
    with pytest.warns(RuntimeWarning, match="select='all'") as caught:
        sent = bodies(every, texts)
    assert sum("select='all'" in str(w.message) for w in caught) == 1
    assert sent == bodies(ON_CLIENT, texts)


def test_the_default_keeps_whole_words_where_every_node_does(planned: Planned) -> None:
    """select "auto": calibrate found esqlog-terms 1.11.1 or later on every data node (the
    test nodes run the repository's plugin), so wrap() with no argument sends select "all"
    and scores as the client's plan of every compound; a filtered match, which the nodes
    cannot plan whole, takes the budget's choice on the client without a warning."""
    record = load_calibration(planned.path)
    assert record.terms_plugin and whole_words_for([record])
    assert "select all" in planned.note
    node = wrap(planned.engine.client, planned.path, mode="identifiers")
    with _Sent(planned.engine.client) as sent:
        node.search(index=planned.index, body=_body(_texts()[0], 10))
    assert '"select": "all"' in sent.bodies[0]
    filtered = {"query": {"match": {"body": {"query": _texts()[0], "operator": "and"}}}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with _Sent(planned.engine.client) as sent:
            node.search(index=planned.index, body=filtered)
    assert "esqlog_terms" in sent.bodies[0] and QUERY_NAME not in sent.bodies[0]


def test_calibrate_warms_and_a_search_of_warmed_words_reads_nothing(planned: Planned) -> None:
    """calibrate read the most frequent words' whole groups (its report says so); warming
    again finds them kept, and a search of those words is answered from the nodes' caches:
    hits grow, misses do not."""
    assert "whole groups read" in planned.note
    record = load_calibration(planned.path)
    assert record.word_lists
    stats, vocab = load_with_vocabulary(record)
    top = [w for w, _ in candidates(stats)[:12]]
    done = planned.engine.run(
        warm_plan(
            record.index,
            record.field,
            record.word_lists,
            stats,
            vocab,
            IdentifierSettings(),
            most=12,
        )
    )
    assert list(done.words.values()) == [len(top)] and done.searches == 1
    assert done.grown_bytes == 0  # calibrate's warm read them already
    node = wrap(
        planned.engine.client,
        planned.path,
        mode="identifiers",
        identifiers=IdentifierSettings(family_excess=None),
    )
    before = call(planned.engine, "GET", "/_esqlog/terms/stats")["word_postings"]
    got = node.search(index=planned.index, body=_body(" ".join(top), 10))
    after = call(planned.engine, "GET", "/_esqlog/terms/stats")["word_postings"]
    assert hits_of(got)
    assert after["misses"] == before["misses"] and after["hits"] >= before["hits"] + len(top)


def _warm_cli(planned: Planned, *args: str) -> Any:
    url = ENGINE_URLS[planned.engine.flavor]
    return CliRunner().invoke(
        main, ["plugin", "warm", "--url", url, "--calibration", str(planned.path), *args]
    )


def test_plugin_warm_says_what_it_read(planned: Planned) -> None:
    result = _warm_cli(planned, "--words", "20")
    assert result.exit_code == 0, result.output
    assert "20 words read on 1 node" in result.output and "whole words:" in result.output
    bad = _warm_cli(planned, "--share", "0")
    assert bad.exit_code == 2 and "--share" in bad.output
    # no --words: every word with compounds, each node's bar on stderr with --progress
    every = len(candidates(load_with_vocabulary(load_calibration(planned.path))[0]))
    assert every > 20
    result = _warm_cli(planned, "--progress")
    assert result.exit_code == 0, result.output
    assert f"{every:,} words read on 1 node" in result.output
    assert f"warm {planned.index} on node" in result.output
