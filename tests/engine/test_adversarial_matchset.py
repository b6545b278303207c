"""Issue 12's adversarial probes for the wrong-match-set bugs, on both real engines.

Items 1 (search-time analysis), 2 (min_score), 3 (operator and + minimum_should_match),
4 (a vocabulary snapshot with df > N) and 12 (identifier joins at the clause limit): every
probe asserts that the wrapped search finds exactly the documents native finds (ids and
hits.total), or, for a bad input, that esqlog answers with one clear line.

The Elasticsearch test node has no analysis-common, so its fields use the analyzers it has
(standard, whitespace, simple, keyword, a standard analyzer with stop words); OpenSearch adds
edge_ngram and synonym fields.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from esqlog.calibration.calibrate import calibrate, calibrate_with_vocabulary
from esqlog.calibration.cluster_store import install_script_plan
from esqlog.calibration.files import save_calibration, save_with_vocabulary
from esqlog.calibration.record import Calibration
from esqlog.cli import main
from esqlog.engine.client import Engine
from esqlog.scoring.clauses import max_clause_count_plan
from esqlog.statistics.term_keys import build_bloom, term_hash
from esqlog.statistics.terms import field_stats_plan, shard_routings_plan
from esqlog.statistics.vocabulary import (
    Vocabulary,
    load_vocabulary,
    save_vocabulary,
    vocabulary_from_scan,
)
from esqlog.statistics.vocabulary_scan import scan_vocabulary_plan
from esqlog.wrapper import wrap
from tests.support.engines import ENGINE_URLS, bulk_index, call, create_index
from tests.support.oracle import body_of, load_docs, total_of

N_DOCS = 1200
SHARDS = 3
# Crafted documents: the tokens the probes are about, whatever the sample corpus holds.
CRAFTED = [
    "Read-File reads the named file and returns its contents",
    "read_file opens a file; ReadFile is the exported name",
    "readfile helper: read file contents into a buffer",
    "rf is short for read file in this package",
    "read2file copies a reader into a file",
    "the file reader returns an error at end of file",
    "ReadFile wrapper",  # matched by "read file" only through an identifier join
    "fileError file_error errorReader error_reader readFileError",  # more joins
]
COMMON_FIELDS: dict[str, dict[str, Any]] = {
    "body": {"type": "text"},  # standard index and search analysis (default_search aside)
    "ws": {"type": "text", "analyzer": "standard", "search_analyzer": "whitespace"},
    "simple_s": {"type": "text", "analyzer": "standard", "search_analyzer": "simple"},
    "kw": {"type": "text", "analyzer": "standard", "search_analyzer": "keyword"},
    # default_search applies here on OpenSearch, not on Elasticsearch (engines disagree)
    "std": {"type": "text", "analyzer": "standard"},
    # standard for both index and search on both engines (the joins and min_score probes)
    "plain": {"type": "text", "analyzer": "standard", "search_analyzer": "standard"},
}
OPENSEARCH_FIELDS: dict[str, dict[str, Any]] = {
    "ngram": {"type": "text", "analyzer": "edge", "search_analyzer": "standard"},
    "syn_graph": {"type": "text", "analyzer": "standard", "search_analyzer": "syn_graph"},
    "syn": {"type": "text", "analyzer": "standard", "search_analyzer": "syn_flat"},
    "wdg": {"type": "text", "analyzer": "standard", "search_analyzer": "wdg"},
    "cgrams": {"type": "text", "analyzer": "standard", "search_analyzer": "cgrams"},
    "ngf": {"type": "text", "analyzer": "standard", "search_analyzer": "ngf"},
}
OPENSEARCH_ANALYSIS: dict[str, Any] = {
    "tokenizer": {
        "edge": {
            "type": "edge_ngram",
            "min_gram": 2,
            "max_gram": 10,
            "token_chars": ["letter", "digit"],
        }
    },
    "filter": {
        "rf_graph": {"type": "synonym_graph", "synonyms": ["rf, read file"]},
        "rf_flat": {"type": "synonym", "synonyms": ["rf, readfile"]},
        "cg": {"type": "common_grams", "common_words": ["the", "of"], "query_mode": True},
        "grams": {"type": "edge_ngram", "min_gram": 2, "max_gram": 5},
        "wdg_f": {"type": "word_delimiter_graph", "catenate_words": True},
    },
    "analyzer": {
        "edge": {"tokenizer": "edge", "filter": ["lowercase"]},
        "wdg": {"tokenizer": "whitespace", "filter": ["wdg_f", "lowercase"]},
        "cgrams": {"tokenizer": "standard", "filter": ["lowercase", "cg"]},
        "ngf": {"tokenizer": "standard", "filter": ["lowercase", "grams"]},
        "syn_graph": {"tokenizer": "standard", "filter": ["lowercase", "rf_graph"]},
        "syn_flat": {"tokenizer": "standard", "filter": ["lowercase", "rf_flat"]},
    },
}
# A search-only analyzer on every field without its own: "file" becomes a stop word.
DEFAULT_SEARCH = {"type": "standard", "stopwords": ["file", "the"]}
TEXTS = [
    "read file",
    "Read-File",
    "ReadFile",
    "read_file",
    "rf",
    "file",
    "the file reader",
    "read2file",
    "error handling of the reader",
    "rf error",
]


@dataclasses.dataclass
class Adversary:
    engine: Engine
    index: str
    fields: list[str]
    calibrations: dict[str, Calibration]
    total_docs: int

    @property
    def painless(self) -> bool:
        return self.engine.flavor == "opensearch"


def _build(engine: Engine) -> Adversary:
    fields = dict(COMMON_FIELDS)
    analysis: dict[str, Any] = {"analyzer": {"default_search": DEFAULT_SEARCH}}
    if engine.flavor == "opensearch":
        fields.update(OPENSEARCH_FIELDS)
        analysis = {
            **OPENSEARCH_ANALYSIS,
            "analyzer": {**OPENSEARCH_ANALYSIS["analyzer"], "default_search": DEFAULT_SEARCH},
        }
    index = create_index(
        engine, shards=SHARDS, mappings={"properties": fields}, settings={"analysis": analysis}
    )
    try:
        texts = [d["body"] for d in load_docs(N_DOCS)] + CRAFTED
        docs = [{"id": f"d{i}", **dict.fromkeys(fields, text)} for i, text in enumerate(texts)]
        bulk_index(engine, index, docs)
        if engine.flavor == "opensearch":
            engine.run(install_script_plan())
        cals = {f: calibrate(engine, index, f, sample=300) for f in fields}
    except BaseException:
        call(engine, "DELETE", f"/{index}")
        raise
    return Adversary(engine, index, list(fields), cals, len(docs))


@pytest.fixture(scope="module")
def adversary(engine: Engine) -> Iterator[Adversary]:
    built = _build(engine)
    try:
        yield built
    finally:
        call(engine, "DELETE", f"/{built.index}")


def _matches(adv: Adversary, client: Any, body: dict[str, Any], **kw: Any) -> tuple[set[str], int]:
    """(ids, hits.total) of every matching document."""
    full = {**body, "size": adv.total_docs + 10, "_source": False, "track_total_hits": True}
    response = client.search(index=adv.index, body=full, **kw)
    ids = {h["_id"] for h in body_of(response)["hits"]["hits"]}
    return ids, total_of(response)


def _modes(adv: Adversary) -> list[dict[str, Any]]:
    modes: list[dict[str, Any]] = [
        {"mode": "boost"},
        {"mode": "rerank"},
        {"mode": "rerank", "rerank_in": "client"},
    ]
    if adv.painless:
        modes.append({"mode": "script", "script_df_fraction": 1.0})
    return modes


def _clients(
    adv: Adversary, cals: list[Calibration], modes: list[dict[str, Any]]
) -> list[tuple[dict[str, Any], Any]]:
    """One wrapped client per mode, reused across a test's probes (as an app would)."""
    return [(mode, wrap(adv.engine.client, cals, **mode)) for mode in modes]


def _assert_same(
    adv: Adversary, body: dict[str, Any], clients: list[tuple[dict[str, Any], Any]]
) -> None:
    native = _matches(adv, adv.engine.client, body)
    for mode, wrapped in clients:
        got = _matches(adv, wrapped, body)
        assert got[1] == native[1], (body, mode, "total", got[1], native[1])
        assert got[0] == native[0], (body, mode, "ids")


# --- item 1: search-time analysis ---------------------------------------------------------


def test_calibrate_records_and_warns_when_search_and_index_analyzers_differ(
    adversary: Adversary,
) -> None:
    assert adversary.calibrations["ws"].search_analyzer == "whitespace"
    assert adversary.calibrations["body"].search_analyzer == "default_search"
    warning = adversary.calibrations["simple_s"].analysis_warning
    assert warning is not None and "'simple'" in warning
    result = CliRunner().invoke(
        main,
        [
            "calibrate",
            "--url",
            ENGINE_URLS[adversary.engine.flavor],
            "--index",
            adversary.index,
            "--field",
            "ws",
            "--sample",
            "200",
        ],
    )
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(lines) == 1 and "'whitespace'" in lines[0], result.stderr


@pytest.mark.parametrize("field", [*COMMON_FIELDS, *OPENSEARCH_FIELDS])
def test_match_uses_the_fields_search_analyzer(adversary: Adversary, field: str) -> None:
    if field not in adversary.fields:
        pytest.skip("analysis-common field: OpenSearch only")
    cal = dataclasses.replace(adversary.calibrations[field], q=0.6)
    clients = _clients(adversary, [cal], _modes(adversary))
    for text in TEXTS:
        for spec in ({"query": text}, {"query": text, "operator": "and"}):
            _assert_same(adversary, {"query": {"match": {field: spec}}}, clients)


def test_multi_match_over_fields_with_different_search_analyzers(adversary: Adversary) -> None:
    fields = [f for f in ("body", "ws", "simple_s", "ngram", "syn_graph") if f in adversary.fields]
    cals = [dataclasses.replace(adversary.calibrations[f], q=0.6) for f in fields]
    clients = _clients(adversary, cals, [{"mode": "boost"}])
    for kind in ("best_fields", "most_fields"):
        for text in ("Read-File", "read file", "rf error"):
            body = {"query": {"multi_match": {"query": text, "fields": fields, "type": kind}}}
            _assert_same(adversary, body, clients)


def test_a_search_analyzer_changed_after_calibration_is_followed(
    engine: Engine, tmp_path: Path
) -> None:
    """Calibrated (with a snapshot) under standard; then search_analyzer becomes whitespace:
    the wrapper must not analyze ASCII locally as standard any more."""
    index = create_index(
        engine,
        shards=2,
        mappings={
            "properties": {
                "body": {"type": "text", "analyzer": "standard", "search_analyzer": "standard"}
            }
        },
    )
    try:
        bulk_index(engine, index, [{"id": i, "body": t} for i, t in enumerate(CRAFTED * 5)])
        record, vocab = calibrate_with_vocabulary(engine, index, "body")
        assert record.standard_analysis
        record = save_with_vocabulary(record, vocab, tmp_path / "c.json")
        call(
            engine,
            "PUT",
            f"/{index}/_mapping",
            {
                "properties": {
                    "body": {
                        "type": "text",
                        "analyzer": "standard",
                        "search_analyzer": "whitespace",
                    }
                }
            },
        )
        for text in ("Read-File", "read file"):
            body = {"query": {"match": {"body": text}}, "track_total_hits": True}
            native = total_of(engine.client.search(index=index, body=body))
            wrapped = wrap(engine.client, tmp_path / "c.json", stats="snapshot")
            assert total_of(wrapped.search(index=index, body=body)) == native, text
    finally:
        call(engine, "DELETE", f"/{index}")


# --- item 2: min_score ----------------------------------------------------------------------


def _threshold(adv: Adversary, query: dict[str, Any]) -> float:
    """A native score that splits the matching documents (about the 30th best)."""
    hits = body_of(
        adv.engine.client.search(
            index=adv.index, body={"query": query, "size": 30, "_source": False}
        )
    )["hits"]["hits"]
    assert len(hits) == 30
    return float(hits[-1]["_score"])


@pytest.mark.parametrize("where", ["top", "function_score"])
def test_min_score_keeps_the_native_match_set(adversary: Adversary, where: str) -> None:
    match = {"match": {"plain": "read file error reader"}}
    threshold = _threshold(adversary, match)
    if where == "top":
        body: dict[str, Any] = {"query": match, "min_score": threshold}
    else:
        body = {"query": {"function_score": {"query": match, "min_score": threshold}}}
    cal = dataclasses.replace(adversary.calibrations["plain"], q=0.4)
    native = _matches(adversary, adversary.engine.client, body)
    assert 0 < native[1] < _matches(adversary, adversary.engine.client, {"query": match})[1]
    modes = [*_modes(adversary), {"mode": "boost", "joins": True}]
    _assert_same(adversary, body, _clients(adversary, [cal], modes))


def test_script_score_min_score_keeps_the_native_match_set(adversary: Adversary) -> None:
    if not adversary.painless:
        pytest.skip("script_score needs Painless")
    match = {"match": {"plain": "read file error reader"}}
    threshold = _threshold(adversary, match)
    body = {
        "query": {
            "script_score": {"query": match, "min_score": threshold, "script": {"source": "_score"}}
        }
    }
    cal = dataclasses.replace(adversary.calibrations["plain"], q=0.4)
    _assert_same(adversary, body, _clients(adversary, [cal], _modes(adversary)))


# --- item 3: operator and with minimum_should_match --------------------------------------------

MSM = [1, "1", 2, "2", 3, "50%", "100%", "-1", "1<-1", "2<75%"]


@pytest.mark.parametrize("msm", MSM, ids=str)
def test_operator_and_with_msm_keeps_the_native_match_set(adversary: Adversary, msm: Any) -> None:
    cals = [dataclasses.replace(adversary.calibrations[f], q=0.6) for f in ("std", "ws")]
    modes = [{"mode": "boost"}] + (
        [{"mode": "script", "script_df_fraction": 1.0}] if adversary.painless else []
    )
    clients = _clients(adversary, cals, modes)
    for text in ("read file error", "read file", "file"):
        for operator in ("and", "AND", "or"):
            spec = {"query": text, "operator": operator, "minimum_should_match": msm}
            bodies: list[dict[str, Any]] = [{"query": {"match": {"std": spec}}}]
            for kind in ("best_fields", "most_fields"):
                bodies.append(
                    {
                        "query": {
                            "multi_match": {
                                "query": text,
                                "fields": ["std", "ws^2"],
                                "type": kind,
                                "operator": operator,
                                "minimum_should_match": msm,
                            }
                        }
                    }
                )
            for body in bodies:
                _assert_same(adversary, body, clients)


# --- item 4: a snapshot whose df exceeds its N ------------------------------------------------


def test_a_scan_while_documents_arrive_gives_a_consistent_snapshot(engine: Engine) -> None:
    """N read before the scan, documents indexed, then the scan: N must come with the df."""
    index = create_index(engine, shards=2)
    try:
        bulk_index(engine, index, [{"id": i, "body": "commonword alpha"} for i in range(50)])
        routings = engine.run(shard_routings_plan(index, 2))
        before = engine.run(field_stats_plan(index, "body", routings))
        bulk_index(engine, index, [{"id": 1000 + i, "body": "commonword beta"} for i in range(150)])
        scan = engine.run(scan_vocabulary_plan(index, "body", 2))
        assert scan.df["commonword"] == 200 and before.doc_count == 50
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # consistent: nothing to clamp, no warning
            vocab = vocabulary_from_scan(
                scan,
                index=index,
                index_uuid="u",
                field="body",
                doc_count=before.doc_count,
                sum_ttf=before.sum_ttf,
                live_docs=200,
                created_at="t",
            )
        assert vocab.doc_count == 200
        assert vocab.df_of(["commonword"]) == {"commonword": 200}
    finally:
        call(engine, "DELETE", f"/{index}")


@pytest.fixture(scope="module")
def standard_index(engine: Engine) -> Iterator[str]:
    """A 2-shard index analyzed with the built-in standard analyzer only: the wrapper then
    answers from the vocabulary snapshot alone (the path an inconsistent snapshot broke)."""
    index = create_index(engine, shards=2)
    try:
        bulk_index(
            engine, index, [{"id": f"s{i}", "body": text} for i, text in enumerate(CRAFTED * 20)]
        )
        yield index
    finally:
        call(engine, "DELETE", f"/{index}")


def _stale_snapshot_calibration(engine: Engine, index: str, tmp_path: Path) -> Path:
    """A calibration whose snapshot says df > N, as an older esqlog wrote when documents
    arrived during the scan (written here without any clamping)."""
    record, vocab = calibrate_with_vocabulary(engine, index, "body")
    assert record.standard_analysis
    terms = ["file", "read", "error", "reader"]
    keys = np.array(sorted(term_hash(t) for t in terms), dtype=np.uint64)
    bad = Vocabulary(
        vocab.index,
        vocab.index_uuid,
        "body",
        5,
        vocab.sum_ttf,
        vocab.live_docs,
        vocab.created_at,
        keys,
        np.full(len(terms), 400, dtype=np.uint32),
        build_bloom(terms),
    )
    snap, digest = save_vocabulary(bad, tmp_path / "stale.vocab.npz")
    path = tmp_path / "stale.json"
    save_calibration(
        dataclasses.replace(record, vocabulary=snap.name, vocabulary_sha256=digest, q=0.6), path
    )
    return path


def test_a_stale_snapshot_never_crashes_a_wrapped_search(
    engine: Engine, standard_index: str, tmp_path: Path
) -> None:
    path = _stale_snapshot_calibration(engine, standard_index, tmp_path)
    body = {"query": {"match": {"body": "read file error"}}, "size": 500, "track_total_hits": True}
    native = engine.client.search(index=standard_index, body=body)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        wrapped = wrap(engine.client, path, stats="snapshot")
        got = wrapped.search(index=standard_index, body=body)
    assert total_of(got) == total_of(native)
    assert {h["_id"] for h in body_of(got)["hits"]["hits"]} == {
        h["_id"] for h in body_of(native)["hits"]["hits"]
    }
    assert sum("above its document count" in str(w.message) for w in seen) == 1
    with pytest.warns(RuntimeWarning, match="above its document count"):
        vocab = load_vocabulary(tmp_path / "stale.vocab.npz")
    assert int(vocab.df.max()) <= vocab.doc_count


def test_a_stale_snapshot_never_crashes_esqlog_search(
    engine: Engine, standard_index: str, tmp_path: Path
) -> None:
    path = _stale_snapshot_calibration(engine, standard_index, tmp_path)
    result = CliRunner().invoke(
        main,
        [
            "search",
            "--url",
            ENGINE_URLS[engine.flavor],
            standard_index,
            "read file error",
            "--field",
            "body",
            "--calibration",
            str(path),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    assert re.search(r"^\s+1\s+s\d+", result.stdout, re.MULTILINE), result.stdout


# --- item 12: identifier joins at the clause limit -------------------------------------------


def test_the_clause_limit_read_from_the_cluster_is_never_above_what_it_enforces(
    engine: Engine,
) -> None:
    """OpenSearch enforces 1,024 by default; Elasticsearch 8 reports 4,096 for a setting it
    ignores and enforces at least 1,024: the bound must be 1,024 on both."""
    assert engine.run(max_clause_count_plan(engine.flavor)) == 1024


def _enforced_limit(adv: Adversary) -> int:
    """The limit the engine enforces, from its own refusal of a huge query."""
    words = " ".join(f"zq{i}x" for i in range(20_000))
    with pytest.raises(Exception, match="maxClauseCount") as failure:
        adv.engine.client.search(index=adv.index, body={"query": {"match": {"body": words}}})
    found = re.search(r"maxClauseCount is set to (\d+)", str(failure.value))
    assert found is not None, failure.value
    return int(found.group(1))


@pytest.mark.parametrize("extra", [0, 4, 8])
def test_joins_never_break_a_query_native_answers(adversary: Adversary, extra: int) -> None:
    """A query of (limit - extra) terms starting with "read file": native answers it; with
    joins the wrapper must too, with joins only where they fit."""
    limit = _enforced_limit(adversary)
    assert limit >= 1024
    size = min(limit, 1024) - extra
    text = "read file error reader " + " ".join(f"zq{i}x" for i in range(size - 4))
    body = {"query": {"match": {"plain": text}}}
    native = _matches(adversary, adversary.engine.client, body)
    cal = dataclasses.replace(adversary.calibrations["plain"], q=0.6)
    modes: list[dict[str, Any]] = [{"mode": "boost"}, {"mode": "rerank"}]
    if extra:  # a client rerank also sends one clause per distinct term plus an ids filter
        modes.append({"mode": "rerank", "rerank_in": "client"})
    for mode in modes:
        wrapped = wrap(adversary.engine.client, [cal], joins=True, **mode)
        ids, total = _matches(adversary, wrapped, body)
        assert native[0] <= ids  # joins may add documents, never lose one
        if extra == 0:  # no room for any join clause: exactly native
            assert (ids, total) == native


def test_joins_at_the_engines_own_limit(adversary: Adversary) -> None:
    """Elasticsearch's real limit is above 1,024 here: a query just under it still runs."""
    limit = _enforced_limit(adversary)
    text = "read file " + " ".join(f"zq{i}x" for i in range(limit - 2))
    body = {"query": {"match": {"plain": text}}}
    native = _matches(adversary, adversary.engine.client, body)
    cal = dataclasses.replace(adversary.calibrations["plain"], q=0.6)
    wrapped = wrap(adversary.engine.client, [cal], joins=True)
    assert _matches(adversary, wrapped, body) == native


def test_joins_below_the_limit_are_still_added(adversary: Adversary) -> None:
    """The cap drops joins only where they do not fit: a short query keeps them."""
    body = {"query": {"match": {"plain": "read file"}}}
    native = _matches(adversary, adversary.engine.client, body)
    cal = dataclasses.replace(adversary.calibrations["plain"], q=0.6)
    wrapped = wrap(adversary.engine.client, [cal], joins=True)
    ids, _ = _matches(adversary, wrapped, body)
    assert native[0] < ids  # the readfile / read_file documents that lack "read"/"file"


# --- the async wrapper takes the same decisions -------------------------------------------------


def _async_client(flavor: str) -> Any:
    if flavor == "elasticsearch":
        from elasticsearch import AsyncElasticsearch

        return AsyncElasticsearch(ENGINE_URLS[flavor], request_timeout=60)
    from opensearchpy import AsyncOpenSearch

    return AsyncOpenSearch(hosts=[ENGINE_URLS[flavor]], timeout=60)


def test_the_async_wrapper_keeps_the_native_match_sets(adversary: Adversary) -> None:
    pytest.importorskip("aiohttp")
    match = {"match": {"plain": "read file error reader"}}
    bodies: list[dict[str, Any]] = [
        {"query": {"match": {"ws": "Read-File"}}},
        {"query": {"match": {"body": "read file"}}},  # default_search drops "file"
        {"query": match, "min_score": _threshold(adversary, match)},
        {
            "query": {
                "match": {
                    "std": {"query": "read file", "operator": "and", "minimum_should_match": 1}
                }
            }
        },
    ]
    cals = [
        dataclasses.replace(adversary.calibrations[f], q=0.5)
        for f in ("ws", "body", "plain", "std")
    ]
    native = [_matches(adversary, adversary.engine.client, body) for body in bodies]

    async def run() -> list[tuple[set[str], int]]:
        client = _async_client(adversary.engine.flavor)
        try:
            wrapped = wrap(client, cals)
            out = []
            for body in bodies:
                full = {
                    **body,
                    "size": adversary.total_docs + 10,
                    "_source": False,
                    "track_total_hits": True,
                }
                response = await wrapped.search(index=adversary.index, body=full)
                out.append(
                    ({h["_id"] for h in body_of(response)["hits"]["hits"]}, total_of(response))
                )
            return out
        finally:
            await client.close()

    assert asyncio.run(run()) == native


# --- the identifiers mode: its own match set, and only where it is documented --------------


def _identifiers_client(adv: Adversary, field: str, folder: Path, **options: Any) -> Any:
    from esqlog.identifiers.calibrate import calibrate_identifiers, save_identifier_calibration

    path = folder / f"{field}.json"
    if not path.exists():
        save_identifier_calibration(calibrate_identifiers(adv.engine, adv.index, field), path)
    return wrap(adv.engine.client, path, mode="identifiers", **options)


@pytest.mark.parametrize("field", ["body", "ws", "simple_s", "kw", *OPENSEARCH_FIELDS])
def test_identifiers_mode_leaves_other_search_analysis_native(
    adversary: Adversary, field: str, tmp_path: Path
) -> None:
    """The identifiers mode changes the match set only for fields indexed and searched with
    the built-in standard analyzer: stop words (body's default_search), whitespace, simple,
    keyword, edge n-grams, synonyms (graph or flat), word_delimiter_graph and common_grams
    fields keep the native match set."""
    if field not in adversary.fields:
        pytest.skip("analysis-common field: OpenSearch only")
    client = [({"mode": "identifiers"}, _identifiers_client(adversary, field, tmp_path))]
    for text in TEXTS:
        for spec in ({"query": text}, {"query": text, "operator": "and"}):
            _assert_same(adversary, {"query": {"match": {field: spec}}}, client)


def test_identifiers_mode_changes_only_what_it_documents(
    adversary: Adversary, tmp_path: Path
) -> None:
    """On a standard field: min_score, multi_match and filter clauses keep the native match
    set; a scoring match widens it (a superset: every native match still matches, with
    operator or) and "read file" then also finds ReadFile and read_file documents."""
    client = _identifiers_client(adversary, "plain", tmp_path)
    probes: list[dict[str, Any]] = [
        {"query": {"multi_match": {"query": "read file", "fields": ["plain"]}}},
        {"query": {"bool": {"filter": [{"match": {"plain": "read file"}}]}}},
        {"query": {"bool": {"must_not": [{"match": {"plain": "read file"}}]}}},
    ]
    match = {"match": {"plain": "read file error reader"}}
    probes.append({"query": match, "min_score": _threshold(adversary, match)})
    for body in probes:
        _assert_same(adversary, body, [({"mode": "identifiers"}, client)])
    for text in ("read file", "file reader", "error"):
        body = {"query": {"match": {"plain": text}}}
        native = _matches(adversary, adversary.engine.client, body)[0]
        widened = _matches(adversary, client, body)[0]
        assert native <= widened, text
    from esqlog.identifiers.settings import IdentifierSettings

    every = _identifiers_client(
        adversary,
        "plain",
        tmp_path,  # compounds for every word
        identifiers=IdentifierSettings(span_max_df=1.0),
    )
    first = adversary.total_docs - len(CRAFTED)
    crafted = {
        f"d{first + i}" for i, t in enumerate(CRAFTED) if "ReadFile" in t or "read_file" in t
    }
    body = {"query": {"match": {"plain": {"query": "read file", "operator": "and"}}}}
    found = _matches(adversary, every, body)[0]
    assert crafted and crafted <= found
    assert not crafted <= _matches(adversary, adversary.engine.client, body)[0]
