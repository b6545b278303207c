"""The query modes (boost, script, auto, rerank) against real OpenSearch and Elasticsearch.

One 3-shard index of real Go functions per engine (a few documents deleted and not merged),
calibrated with calibrate() and then forced to a chosen q. At q = 1 every mode must reproduce
the engine's own BM25 under dfs_query_then_fetch; below 1 every mode must agree with an
independent pure-Python q-log BM25 built from the engine's statistics and term vectors.
"""

from __future__ import annotations

import copy
import json
import warnings
from typing import Any

import pytest

from esqlog.errors import UsageError
from esqlog.wrapper import RerankWhere, ScriptingUnavailable, wrap
from tests.support.engines import call
from tests.support.modes import Q_LOW
from tests.support.modes import check_against_oracle as _check_against_oracle
from tests.support.oracle import (
    Corpus,
    Recorder,
    assert_same_ranking,
    body_of,
    hits_of,
    load_query_texts,
    qlog_match_scores,
    rel_close,
    total_of,
)

DFS = "dfs_query_then_fetch"


@pytest.fixture(scope="module")
def texts() -> list[str]:
    found = load_query_texts()
    assert len(found) >= 130
    return found


def native(corpus: Corpus, body: dict[str, Any]) -> Any:
    return corpus.engine.client.search(
        index=corpus.index, body=copy.deepcopy(body), search_type=DFS
    )


def modes_for(corpus: Corpus, *modes: str) -> list[str]:
    """The modes that apply to this engine: no script mode without Painless."""
    return [m for m in modes if m != "script" or corpus.has_painless]


def variants_for(corpus: Corpus, *modes: str) -> list[tuple[str, dict[str, Any]]]:
    """(mode, extra wrap options) for this engine: rerank once in the engine's rescore phase
    and once on the client, since both paths must keep every invariant."""
    out: list[tuple[str, dict[str, Any]]] = []
    for mode in modes_for(corpus, *modes):
        if mode == "rerank":
            out += [(mode, {"rerank_in": "engine"}), (mode, {"rerank_in": "client"})]
        else:
            out.append((mode, {}))
    return out


RERANK_IN = pytest.mark.parametrize("rerank_in", ["engine", "client"])


def sent_leaves(query: Any) -> list[dict[str, Any]]:
    """Every term / script_score clause in a query sent to the engine."""
    found: list[dict[str, Any]] = []
    if isinstance(query, dict):
        for key, value in query.items():
            if key in ("term", "script_score"):
                found.append({key: value})
            found.extend(sent_leaves(value))
    elif isinstance(query, list):
        for item in query:
            found.extend(sent_leaves(item))
    return found


def varied_queries(texts: list[str], pkgs: list[str]) -> list[dict[str, Any]]:
    """At least 100 query clauses: real texts, operators, msm, multi_match, bool trees."""
    out: list[dict[str, Any]] = [{"match": {"body": t}} for t in texts[:55]]
    short = [" ".join(t.split()[:3]) for t in texts[55:70]]
    out += [{"match": {"body": {"query": t, "operator": "and"}}} for t in short]
    msms: list[Any] = ["2", "75%", "3<80%", 2, "-1"]
    out += [
        {
            "match": {
                "body": {
                    "query": t,
                    "minimum_should_match": msms[i % 5],
                    "boost": 1.5,
                    "_name": f"m{i}",
                }
            }
        }
        for i, t in enumerate(texts[70:85])
    ]
    out += [{"multi_match": {"query": t, "fields": ["body", "title^2"]}} for t in texts[85:95]]
    out += [
        {
            "multi_match": {
                "query": t,
                "type": "most_fields",
                "fields": ["body^1.5", "title"],
                "operator": "or",
            }
        }
        for t in texts[95:105]
    ]
    out += [
        {
            "bool": {
                "must": [{"match": {"body": t}}],
                "should": [{"match": {"title": {"query": t, "boost": 3}}}],
                "filter": [{"terms": {"pkg": pkgs[:3]}}],
                "must_not": [{"term": {"name": "Int.SetString"}}],
            }
        }
        for t in texts[105:115]
    ]
    out += [
        {
            "dis_max": {
                "queries": [{"match": {"body": t}}, {"match": {"title": t}}],
                "tie_breaker": 0.3,
            }
        }
        for t in texts[115:120]
    ]
    out += [
        {
            "function_score": {
                "query": {"match": {"body": t}},
                "boost_mode": "multiply",
                "functions": [{"filter": {"term": {"pkg": pkgs[0]}}, "weight": 2}],
            }
        }
        for t in texts[120:125]
    ]
    return out


def top_pkgs(corpus: Corpus) -> list[str]:
    counts: dict[str, int] = {}
    for doc in corpus.docs.values():
        counts[doc["pkg"]] = counts.get(doc["pkg"], 0) + 1
    return sorted(counts, key=lambda p: -counts[p])


# --- the corpus itself ---------------------------------------------------------------------


def test_corpus_has_three_shards_and_unmerged_deletions(corpus: Corpus) -> None:
    stats = call(corpus.engine, "GET", f"/{corpus.index}/_stats/docs")
    docs = stats["_all"]["primaries"]["docs"]
    assert docs["count"] == len(corpus.docs) >= 1000
    # still in the segments (soft deletes add a tombstone document per delete)
    assert docs["deleted"] >= len(corpus.deleted) > 0
    assert len(corpus.routings) == 3
    cal = corpus.calibrations["body"]
    # Lucene's N counts the deleted documents too; so must the calibration.
    assert cal.doc_count == len(corpus.docs) + len(corpus.deleted)
    assert cal.live_docs == len(corpus.docs) and cal.shards == 3


# --- invariant 1: q = 1 reproduces native BM25 ---------------------------------------------


def test_q1_boost_and_script_equal_native_match(corpus: Corpus, texts: list[str]) -> None:
    queries = varied_queries(texts, top_pkgs(corpus))
    assert len(queries) >= 100
    for mode in modes_for(corpus, "boost", "script"):
        client = wrap(corpus.engine.client, corpus.cals(1.0), mode=mode)
        with_hits = rewritten = 0
        with Recorder(corpus.engine.client) as rec:
            for query in queries:
                body = {"query": query, "size": 20, "track_total_hits": True}
                rec.calls.clear()
                got = client.search(index=corpus.index, body=copy.deepcopy(body))
                sent = rec.calls[-1]
                expected = native(corpus, body)
                assert sent["search_type"] == DFS
                rewritten += any(
                    "script_score" in leaf
                    if mode == "script"
                    else bool(set(leaf.get("term", {})) & {"body", "title"})
                    for leaf in sent_leaves(sent["body"]["query"])
                )
                assert total_of(got) == total_of(expected), (mode, query)
                assert_same_ranking(hits_of(expected), hits_of(got), 1e-4, (mode, query))
                with_hits += bool(hits_of(got))
        assert rewritten == len(queries), mode  # every query really went through the rewrite
        assert with_hits >= 90, mode


# --- invariant 2: rerank at q = 1 keeps the native order ------------------------------------


@RERANK_IN
def test_q1_rerank_keeps_native_order(
    corpus: Corpus, texts: list[str], rerank_in: RerankWhere
) -> None:
    client = wrap(
        corpus.engine.client, corpus.cals(1.0), mode="rerank", top_n=40, rerank_in=rerank_in
    )
    queries = [{"match": {"body": t}} for t in texts[:25]]
    queries += [{"multi_match": {"query": t, "fields": ["body", "title^2"]}} for t in texts[25:30]]
    compared = 0
    for query in queries:
        body = {"query": query, "size": 20}
        got, expected = client.search(index=corpus.index, body=body), native(corpus, body)
        # The correction is exactly 0 at q = 1: scores are the engine's own, bit for bit.
        assert_same_ranking(hits_of(expected), hits_of(got), 0.0, query)
        compared += len(hits_of(got))
    assert compared >= 400


# --- invariant 3: q < 1 equals an independent q-log BM25 ------------------------------------


def test_qlog_scores_equal_oracle_below_one(corpus: Corpus, texts: list[str]) -> None:
    cases: list[tuple[str, str]] = [(t, "or") for t in texts[:14]]
    cases += [(" ".join(t.split()[:2]), "and") for t in texts[14:18]]
    oracles = {case: qlog_match_scores(corpus, "body", case[0], Q_LOW, case[1]) for case in cases}
    assert sum(bool(o) for o in oracles.values()) >= 15
    for mode in modes_for(corpus, "boost", "script"):
        client = wrap(corpus.engine.client, corpus.cals(Q_LOW), mode=mode)
        for (text, operator), oracle in oracles.items():
            got = client.search(
                index=corpus.index,
                body={
                    "query": {"match": {"body": {"query": text, "operator": operator}}},
                    "size": 10,
                    "track_total_hits": True,
                },
            )
            _check_against_oracle(corpus, got, oracle, 10, (mode, text, operator))
            nat = native(corpus, {"query": {"match": {"body": text}}, "size": 1})
            if hits_of(got) and operator == "or":  # q < 1 really changed the scores
                assert not rel_close(hits_of(got)[0][1], hits_of(nat)[0][1], 1e-3)


@pytest.mark.parametrize("fraction", [1.0, 0.01])
def test_script_hybrid_equals_oracle(corpus: Corpus, texts: list[str], fraction: float) -> None:
    """Script mode scripts only terms in at most ``fraction`` of the documents and boosts
    the rest with the same weight (Lucene can prune boosted terms, not scripted ones): both
    kinds of clause, mixed in one query, must give q-log BM25 exactly as the oracle does."""
    if not corpus.has_painless:
        pytest.skip("script mode needs Painless (the Elasticsearch test node has none)")
    client = wrap(
        corpus.engine.client, corpus.cals(Q_LOW), mode="script", script_df_fraction=fraction
    )
    n_docs = corpus.calibrations["body"].doc_count
    mixed = 0
    with Recorder(corpus.engine.client) as rec:
        for text in texts[:16]:
            oracle = qlog_match_scores(corpus, "body", text, Q_LOW)
            rec.calls.clear()
            got = client.search(
                index=corpus.index,
                body={"query": {"match": {"body": text}}, "size": 10, "track_total_hits": True},
            )
            _check_against_oracle(corpus, got, oracle, 10, (fraction, text))
            leaves = sent_leaves(rec.calls[-1]["body"]["query"])
            scripted = [
                leaf["script_score"]["script"]["params"]["n"]
                for leaf in leaves
                if "script_score" in leaf
            ]
            boosted = [
                leaf
                for leaf in leaves
                if "term" in leaf and "boost" in next(iter(leaf["term"].values()))
            ]
            tokens = corpus.analyze("body", text)
            _, _, df = corpus.global_stats("body", tokens)
            assert len(scripted) + len(boosted) == len(tokens), text
            assert sorted(scripted) == sorted(
                df[t] for t in tokens if df[t] <= fraction * n_docs
            ), text
            mixed += bool(scripted) and bool(boosted)
    if fraction == 1.0:
        assert mixed == 0
    else:
        assert mixed >= 8  # real texts mix rare identifiers and common words


def test_qlog_multi_match_equals_oracle_below_one(corpus: Corpus, texts: list[str]) -> None:
    for mode in modes_for(corpus, "boost", "script"):
        client = wrap(corpus.engine.client, corpus.cals(Q_LOW), mode=mode)
        for text in texts[20:26]:
            body_scores = qlog_match_scores(corpus, "body", text, Q_LOW)
            title_scores = qlog_match_scores(corpus, "title", text, Q_LOW)
            ids = body_scores.keys() | title_scores.keys()
            fused = {  # best_fields: the best boosted field plus tie_breaker times the rest
                "best_fields": {
                    i: max(body_scores.get(i, 0.0), 2 * title_scores.get(i, 0.0))
                    + 0.2 * min(body_scores.get(i, 0.0), 2 * title_scores.get(i, 0.0))
                    for i in ids
                },
                "most_fields": {
                    i: 1.5 * body_scores.get(i, 0.0) + title_scores.get(i, 0.0) for i in ids
                },
            }
            for kind, oracle in fused.items():
                spec: dict[str, Any] = {
                    "query": text,
                    "type": kind,
                    "fields": ["body", "title^2"]
                    if kind == "best_fields"
                    else ["body^1.5", "title"],
                }
                if kind == "best_fields":
                    spec["tie_breaker"] = 0.2
                got = client.search(
                    index=corpus.index,
                    body={"query": {"multi_match": spec}, "size": 10, "track_total_hits": True},
                )
                _check_against_oracle(corpus, got, oracle, 10, (mode, kind, text))


@RERANK_IN
def test_rerank_below_one_equals_oracle(
    corpus: Corpus, texts: list[str], rerank_in: RerankWhere
) -> None:
    """In the engine, the rescore query is the boost rewrite; on the client, both engines
    here report per-term scores (include_named_queries_score), so rerank moves each hit by
    exactly (idf_q/idf - 1) times the engine's own term score. Either way: q-log BM25 with
    the engine's norms, like boost mode, within 1e-4."""
    client = wrap(
        corpus.engine.client, corpus.cals(Q_LOW), mode="rerank", top_n=30, rerank_in=rerank_in
    )
    checked = 0
    for text in texts[:12]:
        quantised = qlog_match_scores(corpus, "body", text, Q_LOW)
        got = client.search(
            index=corpus.index, body={"query": {"match": {"body": text}}, "size": 10}
        )
        hits = hits_of(got)
        assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
        for doc_id, score in hits:
            assert rel_close(score, quantised[doc_id], 1e-4), (text, doc_id)
            checked += 1
    assert checked >= 100


def test_rerank_from_term_vectors_equals_oracle(
    corpus: Corpus, texts: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fallback for engines without named-query scores (OpenSearch before 2.13): term
    vectors give each hit's token count, rounded here as Lucene's norms round it, so the
    rerank is q-log BM25 with the engine's own lengths, within 1e-4 (the exact count would be
    off by up to a few percent on documents of over 40 tokens)."""
    import esqlog.rerank.strategies

    monkeypatch.setattr(esqlog.rerank.strategies, "supports_named_scores", lambda *_: False)
    client = wrap(
        corpus.engine.client, corpus.cals(Q_LOW), mode="rerank", top_n=30, rerank_in="client"
    )
    checked = rounded = 0
    for text in texts[:8]:
        exact = qlog_match_scores(corpus, "body", text, Q_LOW, exact_length=True)
        quantised = qlog_match_scores(corpus, "body", text, Q_LOW)
        got = client.search(
            index=corpus.index, body={"query": {"match": {"body": text}}, "size": 10}
        )
        for doc_id, score in hits_of(got):
            assert rel_close(score, quantised[doc_id], 1e-4), (text, doc_id)
            rounded += not rel_close(exact[doc_id], quantised[doc_id], 1e-4)
            checked += 1
    assert checked >= 60
    assert rounded > 0  # the texts reach documents whose length the norms round


# --- invariant 4: filters, aggregations, pagination, _source ---------------------------------


def test_filters_aggs_pagination_and_source_unchanged(corpus: Corpus, texts: list[str]) -> None:
    pkgs = top_pkgs(corpus)
    bare = corpus.engine.client
    for mode, options in variants_for(corpus, "boost", "script", "rerank"):
        client = wrap(bare, corpus.cals(Q_LOW), mode=mode, top_n=60, **options)
        for text in texts[30:33]:
            match = {"match": {"body": text}}
            filtered = {"bool": {"must": [match], "filter": [{"terms": {"pkg": pkgs[:4]}}]}}
            # aggregations and total hits over the same matching set
            body = {
                "query": filtered,
                "size": 5,
                "track_total_hits": True,
                "aggs": {
                    "pkgs": {"terms": {"field": "pkg", "size": 50}},
                    "seq": {"stats": {"field": "seq"}},
                },
            }
            got, expected = client.search(index=corpus.index, body=body), native(corpus, body)
            assert total_of(got) == total_of(expected) > 0, (mode, options, text)
            assert body_of(got)["aggregations"] == body_of(expected)["aggregations"]
            assert {h["_source"]["pkg"] for h in body_of(got)["hits"]["hits"]} <= set(pkgs[:4])
            # the whole matched set
            if mode != "rerank":  # rerank runs the native query itself
                every = {"query": match, "size": 3000, "_source": False}
                got_ids = {i for i, _ in hits_of(client.search(index=corpus.index, body=every))}
                assert got_ids == {i for i, _ in hits_of(native(corpus, every))}
                assert len(got_ids) == total_of(
                    native(corpus, {"query": match, "track_total_hits": True})
                )
            # from/size pages are slices of one ranking
            first = hits_of(client.search(index=corpus.index, body={"query": match, "size": 20}))
            page = hits_of(
                client.search(index=corpus.index, body={"query": match, "from": 10, "size": 10})
            )
            assert [i for i, _ in page] == [i for i, _ in first[10:20]], (mode, options, text)
            assert [s for _, s in page] == pytest.approx([s for _, s in first[10:20]], rel=1e-6)
            # search_after over a field sort: the same documents in the same order
            sort_body = {"query": match, "size": 40, "sort": [{"seq": "asc"}]}
            pages_got, pages_native = [], []
            for pages, search in ((pages_got, client.search), (pages_native, bare.search)):
                after = None
                for _ in range(4):
                    paged = dict(sort_body, **({"search_after": after} if after else {}))
                    hits = body_of(search(index=corpus.index, body=paged))["hits"]["hits"]
                    if not hits:
                        break
                    pages.append([h["_id"] for h in hits])
                    after = hits[-1]["sort"]
            assert pages_got == pages_native and len(pages_got) >= 2, (mode, options, text)
            # _source filtering
            src = client.search(
                index=corpus.index, body={"query": match, "size": 15, "_source": ["name", "pkg"]}
            )
            for hit in body_of(src)["hits"]["hits"]:
                doc = corpus.docs[hit["_id"]]
                assert hit["_source"] == {"name": doc["name"], "pkg": doc["pkg"]}
            none = client.search(
                index=corpus.index, body={"query": match, "size": 5, "_source": False}
            )
            assert all("_source" not in h for h in body_of(none)["hits"]["hits"])


def test_q1_everything_identical_with_aggs(corpus: Corpus, texts: list[str]) -> None:
    pkgs = top_pkgs(corpus)
    for mode, options in variants_for(corpus, "boost", "script", "rerank"):
        client = wrap(corpus.engine.client, corpus.cals(1.0), mode=mode, **options)
        for text in texts[40:43]:
            body = {
                "query": {
                    "bool": {
                        "should": [{"match": {"body": text}}],
                        "filter": [{"terms": {"pkg": pkgs[:10]}}],
                    }
                },
                "size": 10,
                "from": 5,
                "track_total_hits": True,
                "_source": ["name"],
                "aggs": {"p": {"terms": {"field": "pkg"}}},
            }
            got, expected = (
                body_of(client.search(index=corpus.index, body=body)),
                body_of(native(corpus, body)),
            )
            assert got["aggregations"] == expected["aggregations"]
            assert got["hits"]["total"] == expected["hits"]["total"]
            assert_same_ranking(hits_of(expected), hits_of(got), 1e-4, (mode, options, text))
            assert [h["_source"] for h in got["hits"]["hits"]] == [
                h["_source"] for h in expected["hits"]["hits"]
            ]


# --- invariant 5: script mode without Painless ---------------------------------------------


def test_script_mode_availability(corpus: Corpus, texts: list[str]) -> None:
    bare = corpus.engine.client
    body = {"query": {"match": {"body": texts[0]}}, "size": 10}
    boost = hits_of(
        wrap(bare, corpus.cals(Q_LOW), mode="boost").search(index=corpus.index, body=body)
    )
    assert boost
    # mode="auto", the default, never asks for the stored script: boost on this calibration
    # (no identifiers statistics), with no warning, on either engine
    auto = wrap(bare, corpus.cals(Q_LOW))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = auto.search(index=corpus.index, body=body)
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)]
    assert auto.esqlog_core.scripts.ok is None  # never asked
    assert_same_ranking(boost, hits_of(got), 1e-6)
    if corpus.has_painless:
        script = wrap(bare, corpus.cals(Q_LOW), mode="script").search(index=corpus.index, body=body)
        assert_same_ranking(boost, hits_of(script), 1e-4)
        return
    # Elasticsearch integ-test distribution: no Painless, the stored script cannot exist.
    forced = wrap(bare, corpus.cals(Q_LOW), mode="script")
    with pytest.raises(ScriptingUnavailable) as info:
        forced.search(index=corpus.index, body=body)
    assert isinstance(info.value, UsageError)
    message = str(info.value)
    assert "script mode is not available" in message and "mode='boost'" in message
    assert "esqlog-qlog-term not found" in message  # asked once, before any search
    assert type(info.value.__cause__).__module__.startswith("elasticsearch")
    # Asking for script explicitly on the auto wrapper is an error, not a silent boost.
    with pytest.raises(ScriptingUnavailable):
        auto.search(index=corpus.index, body=body, esqlog_mode="script")
    # The failure must not have left anything behind in the body the caller passed.
    assert json.dumps(body) == json.dumps({"query": {"match": {"body": texts[0]}}, "size": 10})
