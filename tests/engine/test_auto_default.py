"""wrap(client, calibration) with no option: the identifiers mode on code, through the
esqlog-terms plugin where calibrate found it, and boost on prose; on real nodes.

Both test nodes start with the plugin installed by the engine's own plugin tool
(scripts/engines/build-plugin.sh), so calibrate must find it there. A node that does not
know the query is made real by renaming the query the wrapper sends: the engine then
refuses it exactly as a node without the plugin refuses ``esqlog_terms`` (an unknown query
at parse time), and the wrapper must answer with spans, warn once and keep to spans.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from esqlog.calibration.files import load_calibration
from esqlog.engine.client import Engine
from esqlog.identifiers import synonym
from esqlog.identifiers.calibrate import (
    auto_mode,
    calibrate_identifiers,
    save_identifier_calibration,
)
from esqlog.identifiers.settings import IdentifierSettings
from esqlog.wrapper import SearchDecision, wrap
from tests.support.calibrated_go import N_DOCS, calibrated_index
from tests.support.engines import bulk_index, call, create_index
from tests.support.oracle import body_of, hits_of, load_query_texts, total_of

PLUGIN = IdentifierSettings(engine_query="plugin")
SPANS = IdentifierSettings(engine_query="span")
SAMPLE_QUERIES = Path(__file__).parents[2] / "esqlog" / "data" / "sample_go_queries.jsonl"


@pytest.fixture(scope="module")
def code(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """Real Go functions on 3 shards, calibrated with the identifiers statistics."""
    with calibrated_index(engine, 3, tmp_path_factory.mktemp("auto")) as found:
        yield found


def _texts(n: int = 8) -> list[str]:
    return [t for t in load_query_texts() if t.isascii()][:n]


def _body(text: str, **extra: Any) -> dict[str, Any]:
    return {
        "query": {"match": {"body": text}},
        "size": N_DOCS,
        "track_total_hits": True,
        "_source": False,
        **extra,
    }


def _answer(client: Any, index: str, text: str) -> tuple[int, dict[str, float]]:
    answer = client.search(index=index, body=_body(text))
    return total_of(answer), dict(hits_of(answer))


def _same(
    got: tuple[int, dict[str, float]], expected: tuple[int, dict[str, float]], text: str
) -> None:
    assert got[0] == expected[0], text
    assert got[1].keys() == expected[1].keys(), text
    for doc, score in expected[1].items():
        assert got[1][doc] == pytest.approx(score, rel=1e-4), (text, doc)


def _plugin_versions(engine: Engine) -> set[str]:
    """What the nodes API says, read here on its own (not through esqlog's reader)."""
    nodes = call(engine, "GET", "/_nodes/plugins")["nodes"]
    return {
        p["version"] for n in nodes.values() for p in n["plugins"] if p["name"] == "esqlog-terms"
    }


def test_calibrate_records_the_plugin_every_data_node_runs(
    engine: Engine, code: tuple[str, Path]
) -> None:
    record = load_calibration(code[1])
    versions = _plugin_versions(engine)
    assert len(versions) == 1 and record.terms_plugin == versions.pop()
    assert record.identifiers_applies is True and record.code_share is not None
    assert auto_mode(record)[0] == "identifiers"


def test_no_option_ranks_code_as_identifiers_with_the_plugin(
    code: tuple[str, Path], engine: Engine
) -> None:
    index, path = code
    decisions: list[SearchDecision] = []
    default = wrap(engine.client, path, on_decision=decisions.append)
    explicit = wrap(engine.client, path, mode="identifiers", identifiers=PLUGIN)
    for text in _texts():
        _same(_answer(default, index, text), _answer(explicit, index, text), text)
    assert {(d.requested, d.mode) for d in decisions} == {("auto", "identifiers")}
    profile = body_of(default.search(index=index, body=_body(_texts()[0], profile=True)))
    described = json.dumps(profile["profile"])
    assert "Synonym(body:" in described and "spanOr(" not in described


def test_a_refused_query_goes_again_as_spans_and_spans_stay(
    code: tuple[str, Path],
    engine: Engine,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    index, path = code
    spans = wrap(engine.client, path, mode="identifiers", identifiers=SPANS)
    expected = {text: _answer(spans, index, text) for text in _texts(4)}
    monkeypatch.setattr(synonym, "QUERY_NAME", "esqlog_terms_absent")  # a node without it
    sent: list[str] = []
    transport = engine.client.transport
    perform = transport.perform_request

    def spy(method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        sent.append(url)
        return perform(method, url, *args, **kwargs)

    monkeypatch.setattr(transport, "perform_request", spy)
    default = wrap(engine.client, path)
    with caplog.at_level(logging.WARNING, logger="esqlog"):
        for text, answer in expected.items():
            sent.clear()
            _same(_answer(default, index, text), answer, text)
        # the last search went once, as spans (per shard, in one _msearch on 3 shards),
        # with no refused try before it
        assert len([u for u in sent if "search" in u]) == 1, sent
    warned = [r for r in caplog.records if "refused the esqlog_terms query" in r.getMessage()]
    assert len(warned) == 1
    texts = list(expected)[:2]
    fresh = wrap(engine.client, path)  # msearch too: the whole batch again, as spans
    lines: list[Any] = []
    for text in texts:
        lines += [{"index": index}, _body(text)]
    answers = body_of(fresh.msearch(body=lines))["responses"]
    for text, answer in zip(texts, answers, strict=True):
        _same((total_of(answer), dict(hits_of(answer))), expected[text], text)


def test_an_explicit_plugin_is_a_promise_its_error_stands(
    code: tuple[str, Path], engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    index, path = code
    monkeypatch.setattr(synonym, "QUERY_NAME", "esqlog_terms_absent")
    forced = wrap(engine.client, path, mode="identifiers", identifiers=PLUGIN)
    with pytest.raises(Exception, match="esqlog_terms_absent"):
        forced.search(index=index, body=_body(_texts()[0]))


@pytest.fixture(scope="module")
def prose(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """Real English sentences (the doc comments of Go functions), calibrated alike."""
    texts = [json.loads(line)["text"] for line in SAMPLE_QUERIES.open(encoding="utf-8")]
    index = create_index(engine, shards=1, mappings={"properties": {"body": {"type": "text"}}})
    try:
        bulk_index(engine, index, [{"id": i, "body": t} for i, t in enumerate(texts)])
        path = tmp_path_factory.mktemp("prose") / "prose.qlog.json"
        save_identifier_calibration(calibrate_identifiers(engine, index, "body"), path)
        yield index, path
    finally:
        call(engine, "DELETE", f"/{index}")


def test_no_option_ranks_prose_as_boost(prose: tuple[str, Path], engine: Engine) -> None:
    index, path = prose
    record = load_calibration(path)
    assert record.identifiers_applies is False
    mode, why = auto_mode(record)
    assert mode == "boost" and "reads as prose" in why
    decisions: list[SearchDecision] = []
    default = wrap(engine.client, path, on_decision=decisions.append)
    boost = wrap(engine.client, path, mode="boost")
    for text in ("returns the number of bytes written", "reports whether the file exists"):
        _same(_answer(default, index, text), _answer(boost, index, text), text)
    assert {(d.requested, d.mode) for d in decisions} == {("auto", "boost")}


def test_one_wrapper_gives_each_index_its_mode_in_search_and_msearch(
    code: tuple[str, Path], prose: tuple[str, Path], engine: Engine
) -> None:
    decisions: list[SearchDecision] = []
    both = wrap(engine.client, [code[1], prose[1]], on_decision=decisions.append)
    assert both.esqlog_core.modes is not None
    assert {i: m for i, (m, _) in both.esqlog_core.modes.why.items()} == {
        code[0]: "identifiers",
        prose[0]: "boost",
    }
    identifiers = wrap(engine.client, code[1], mode="identifiers", identifiers=PLUGIN)
    boost = wrap(engine.client, prose[1], mode="boost")
    code_text, prose_text = _texts()[0], "returns the number of bytes written"
    _same(_answer(both, code[0], code_text), _answer(identifiers, code[0], code_text), "code")
    _same(_answer(both, prose[0], prose_text), _answer(boost, prose[0], prose_text), "prose")
    answers = body_of(
        both.msearch(
            body=[{"index": code[0]}, _body(code_text), {"index": prose[0]}, _body(prose_text)]
        )
    )["responses"]
    _same(
        (total_of(answers[0]), dict(hits_of(answers[0]))),
        _answer(identifiers, code[0], code_text),
        "msearch code",
    )
    _same(
        (total_of(answers[1]), dict(hits_of(answers[1]))),
        _answer(boost, prose[0], prose_text),
        "msearch prose",
    )
    assert [(d.index, d.mode) for d in decisions[:2]] == [
        (code[0], "identifiers"),
        (prose[0], "boost"),
    ]


def test_with_a_language_field_only_code_documents_are_read(engine: Engine) -> None:
    """A repository mostly docs by volume (its changelog, its guides) still reads as code:
    the rule samples only the documents whose language is not documentation."""
    from esqlog.identifiers.code_rule import code_share_plan
    from tests.support.oracle import load_docs

    functions = [d["body"] for d in load_docs(60)]
    prose = [json.loads(line)["text"] for line in SAMPLE_QUERIES.open(encoding="utf-8")]
    docs = [{"id": f"go{i}", "content": t, "language": "go"} for i, t in enumerate(functions)]
    docs += [
        {"id": f"md{i}", "content": " ".join(prose[i * 20 : (i + 1) * 20]), "language": "markdown"}
        for i in range(40)
    ]
    index = create_index(
        engine,
        shards=1,
        mappings={"properties": {"content": {"type": "text"}, "language": {"type": "keyword"}}},
    )
    try:
        bulk_index(engine, index, docs)
        rule = engine.run(code_share_plan(index, "content"))
        assert rule.basis == f"{len(functions)} sampled code documents (language field)"
        assert rule.applies
        everything = engine.run(code_share_plan(index, "content.none"))  # no such field
        assert not everything.applies
    finally:
        call(engine, "DELETE", f"/{index}")
