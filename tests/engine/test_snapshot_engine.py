"""Vocabulary snapshots in the wrapper: term df from memory instead of a round trip.

``wrap(..., stats="snapshot")`` must be a pure optimisation: on an index that has not changed
since ``calibrate --vocabulary``, every mode sends the very request (same weights) that live
statistics give, and no statistics request at all. When the index drifts by more than 10%,
the wrapper warns once and goes back to live statistics. Wrong arguments are usage errors.

The equality tests use their own copy of the oracle's documents *without* deletions: a
snapshot only sees a shard's df of a term through that shard's live documents, so a term
left only in deleted, unmerged documents of some shard is counted short (documented in
esqlog.statistics.vocabulary, and pinned down by
test_snapshot_misses_df_held_only_by_deleted_documents).
"""

from __future__ import annotations

import copy
import dataclasses
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from esqlog.calibration.calibrate import calibrate, calibrate_with_vocabulary
from esqlog.calibration.cluster_store import install_script_plan
from esqlog.calibration.files import save_with_vocabulary
from esqlog.calibration.record import Calibration
from esqlog.engine.client import Engine
from esqlog.engine.steps import Request
from esqlog.statistics.terms import shard_routings_plan, term_stats_plan
from esqlog.wrapper import SearchMode, wrap
from esqlog.wrapper import snapshots as snapshot_guard
from tests.support.engines import bulk_index, call, create_index
from tests.support.oracle import (
    MAPPINGS,
    SHARDS,
    Recorder,
    assert_same_ranking,
    hits_of,
    load_docs,
    load_query_texts,
    rel_close,
    total_of,
)

Q_LOW = 0.6
FIELDS = ("body", "title")


@dataclass
class Snapshotted:
    """An index without deletions, calibrated with a vocabulary snapshot of each field."""

    engine: Engine
    index: str
    calibrations: dict[str, Calibration]  # linked to their snapshot files

    @property
    def has_painless(self) -> bool:
        return self.engine.flavor == "opensearch"

    def cals(self, q: float) -> list[Calibration]:
        return [dataclasses.replace(self.calibrations[f], q=q) for f in FIELDS]


@pytest.fixture(scope="module")
def clean(engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Snapshotted]:
    index = create_index(engine, shards=SHARDS, mappings=MAPPINGS)
    try:
        bulk_index(engine, index, load_docs())
        if engine.flavor == "opensearch":
            engine.run(install_script_plan())
        folder = tmp_path_factory.mktemp(f"snapshot-{engine.flavor}")
        cals = {}
        for name in FIELDS:
            record, vocab = calibrate_with_vocabulary(engine, index, name)
            cals[name] = save_with_vocabulary(record, vocab, folder / f"{name}.json")
            sha = cals[name].vocabulary_sha256 or ""
            assert cals[name].vocabulary_path() == folder / f"{name}.vocab.{sha[:16]}.npz"
        yield Snapshotted(engine, index, cals)
    finally:
        call(engine, "DELETE", f"/{index}")


@pytest.fixture(scope="module")
def texts() -> list[str]:
    found = [t for t in load_query_texts() if t.isascii()]
    assert len(found) >= 80
    return found


def variants(has_painless: bool) -> list[tuple[SearchMode, dict[str, Any]]]:
    out: list[tuple[SearchMode, dict[str, Any]]] = [("boost", {})]
    if has_painless:
        out.append(("script", {}))
    return [*out, ("rerank", {"rerank_in": "engine"}), ("rerank", {"rerank_in": "client"})]


def varied_queries(texts: list[str]) -> list[dict[str, Any]]:
    """70 queries over both snapshotted fields: operators, msm, multi_match, bool trees."""
    out: list[dict[str, Any]] = [{"match": {"body": t}} for t in texts[:30]]
    out += [
        {"match": {"body": {"query": " ".join(t.split()[:3]), "operator": "and"}}}
        for t in texts[30:38]
    ]
    msms: list[Any] = ["2", "75%", 2, "-1"]
    out += [
        {"match": {"body": {"query": t, "minimum_should_match": msms[i % 4], "boost": 1.5}}}
        for i, t in enumerate(texts[38:46])
    ]
    out += [{"multi_match": {"query": t, "fields": ["body", "title^2"]}} for t in texts[46:54]]
    out += [
        {"multi_match": {"query": t, "type": "most_fields", "fields": ["body^1.5", "title"]}}
        for t in texts[54:60]
    ]
    out += [
        {
            "bool": {
                "must": [{"match": {"body": t}}],
                "should": [{"match": {"title": {"query": t, "boost": 3}}}],
            }
        }
        for t in texts[60:66]
    ]
    out += [{"match": {"title": t}} for t in texts[66:70]]
    return out


# --- snapshot statistics are live statistics -------------------------------------------------


@pytest.mark.engine
def test_snapshot_and_live_statistics_give_identical_searches(
    clean: Snapshotted, texts: list[str]
) -> None:
    """On the index the snapshot was taken of, every term's df, N and sum_ttf from memory
    equal the cluster's: the request sent (weights included) and the hits are the same."""
    queries = varied_queries(texts)
    assert len(queries) >= 70
    bare = clean.engine.client
    for mode, options in variants(clean.has_painless):
        snap = wrap(bare, clean.cals(Q_LOW), mode=mode, stats="snapshot", **options)
        live = wrap(bare, clean.cals(Q_LOW), mode=mode, stats="live", **options)
        with_hits = 0
        for query in queries:
            body = {"query": query, "size": 10, "track_total_hits": True}
            with Recorder(bare) as rec:
                got = snap.search(index=clean.index, body=copy.deepcopy(body))
                expected = live.search(index=clean.index, body=copy.deepcopy(body))
            sent_snap, sent_live = rec.calls
            assert sent_snap == sent_live, (mode, options, query)
            assert sent_snap["body"] != body  # and esqlog really rewrote it
            assert total_of(got) == total_of(expected)
            assert [i for i, _ in hits_of(got)] == [i for i, _ in hits_of(expected)]
            for (_, s1), (_, s2) in zip(hits_of(got), hits_of(expected), strict=True):
                assert rel_close(s1, s2, 1e-6), (mode, options, query)
            with_hits += bool(hits_of(got))
        assert with_hits >= 50, (mode, options)
        for name in FIELDS:  # the snapshot stayed in use throughout
            assert snap.esqlog_core.snapshot_for(clean.index, name) is not None
            assert live.esqlog_core.snapshot_for(clean.index, name) is None


@pytest.mark.engine
def test_snapshot_searches_send_no_statistics_request(
    clean: Snapshotted, texts: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The point of a snapshot: once the wrapper knows the index (shard routings, the
    freshness check), a search with never-seen terms costs the search alone. Live statistics
    pay an _mtermvectors round trip for each search with a new term."""
    monkeypatch.setattr(snapshot_guard, "SNAPSHOT_CHECK_SECONDS", 1e9)  # no re-check mid-test
    performed: list[tuple[Engine, Request]] = []
    original = Engine.perform

    def recording(self: Engine, request: Request) -> Any:
        performed.append((self, request))
        return original(self, request)

    monkeypatch.setattr(Engine, "perform", recording)
    bare = clean.engine.client
    for mode, options in variants(clean.has_painless):
        for stats in ("snapshot", "live"):
            client = wrap(bare, clean.cals(Q_LOW), mode=mode, stats=stats, **options)
            mine = client._engine

            def requests(engine: Engine = mine) -> list[Request]:
                return [r for e, r in performed if e is engine]

            client.search(index=clean.index, body={"query": {"match": {"body": texts[0]}}})
            first = requests()
            assert first, (mode, stats)  # routings and the freshness check, at least
            if stats == "snapshot":
                assert not [r for r in first if r.path.endswith("/_mtermvectors")]
            for i, text in enumerate(texts[1:7]):
                before = len(requests())
                body = {
                    "query": {
                        "multi_match": {
                            "query": f"{text} zqnew{i}{mode}",
                            "fields": ["body", "title"],
                        }
                    },
                    "size": 10,
                }
                hits = hits_of(client.search(index=clean.index, body=body))
                assert hits, (mode, stats, text)
                sent = requests()[before:]
                vectors = [r for r in sent if r.path.endswith("/_mtermvectors")]
                if stats == "snapshot":
                    assert sent == [], (mode, options, [r.path for r in sent])
                else:
                    assert len(vectors) >= 1, (mode, options)


@pytest.mark.engine
def test_snapshot_misses_df_held_only_by_deleted_documents(engine: Engine, tmp_path: Path) -> None:
    """The known limit of a snapshot built from live documents' term vectors: a deleted,
    unmerged document still counts in the engine's df (and N), but a term it alone holds is
    never seen by the scan. Terms that live documents hold are counted with the deleted."""
    index = create_index(engine, shards=1)
    try:
        docs = [
            {"id": "a", "body": "alpha beta"},
            {"id": "b", "body": "alpha gamma"},
            {"id": "c", "body": "delta"},
        ]
        bulk_index(engine, index, docs)
        call(engine, "DELETE", f"/{index}/_doc/b", refresh="true")
        deleted = call(engine, "GET", f"/{index}/_stats/docs")["_all"]["primaries"]["docs"]
        assert deleted["deleted"] >= 1  # still in the segment
        _, vocab = calibrate_with_vocabulary(engine, index, "body")
        routings = engine.run(shard_routings_plan(index, 1))
        fstats, live_df = engine.run(
            term_stats_plan(index, "body", ["alpha", "beta", "gamma", "delta"], routings)
        )
        assert vocab.doc_count == fstats.doc_count == 3 and vocab.live_docs == 2
        assert live_df == {"alpha": 2, "beta": 1, "gamma": 1, "delta": 1}
        assert vocab.df_of(["alpha", "beta", "gamma", "delta"]) == {
            "alpha": 2,
            "beta": 1,
            "gamma": 0,
            "delta": 1,
        }
    finally:
        call(engine, "DELETE", f"/{index}")


# --- drift ------------------------------------------------------------------------------------


@pytest.mark.engine
def test_drift_warns_once_and_falls_back_to_live_statistics(
    engine: Engine, texts: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """More than 10% new documents since the snapshot: its df are no longer the cluster's,
    so the next check (every SNAPSHOT_CHECK_SECONDS) warns once and searches use live
    statistics; a wrapper that has not checked yet still scores with the stale snapshot."""
    index = create_index(engine, shards=2)
    queries = texts[:6]
    try:
        bulk_index(engine, index, [{"id": d["id"], "body": d["body"]} for d in load_docs(300)])
        record, vocab = calibrate_with_vocabulary(engine, index, "body")
        cal = dataclasses.replace(
            save_with_vocabulary(record, vocab, tmp_path / "cal.json"), q=Q_LOW
        )
        bodies = [
            {"query": {"match": {"body": t}}, "size": 10, "track_total_hits": True} for t in queries
        ]

        def search_all(client: Any) -> list[list[tuple[str, float]]]:
            return [hits_of(client.search(index=index, body=copy.deepcopy(b))) for b in bodies]

        monkeypatch.setattr(snapshot_guard, "SNAPSHOT_CHECK_SECONDS", 0.0)  # check every search
        watched = wrap(engine.client, cal, stats="auto")
        stale = wrap(engine.client, cal, stats="snapshot")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            before = search_all(watched)
            monkeypatch.setattr(snapshot_guard, "SNAPSHOT_CHECK_SECONDS", 1e9)
            assert search_all(stale) == before  # checked now, not again during this test
            monkeypatch.setattr(snapshot_guard, "SNAPSHOT_CHECK_SECONDS", 0.0)
        assert not [w for w in caught if issubclass(w.category, RuntimeWarning)]
        assert before == search_all(wrap(engine.client, cal, stats="live"))

        # 20% more documents, each holding the query words: their df all change
        extra = [{"id": f"new{i}", "body": queries[i % len(queries)]} for i in range(60)]
        bulk_index(engine, index, extra)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            after = search_all(watched)
            again = search_all(watched)
        runtime = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
        assert len(runtime) == 1, runtime
        assert "snapshot" in runtime[0] and index in runtime[0] and "20%" in runtime[0]
        assert watched.esqlog_core.snapshot_for(index, "body") is None
        live = search_all(wrap(engine.client, cal, stats="live", stats_ttl=0))
        for got, want, body in zip(after, live, bodies, strict=True):
            assert_same_ranking(want, got, 1e-6, body)
        assert again == after
        assert any(hits for hits in after) and after != before
        # the wrapper that did not check since the drift still uses the snapshot's df
        assert stale.esqlog_core.snapshot_for(index, "body") is not None
        assert search_all(stale) != live
    finally:
        call(engine, "DELETE", f"/{index}")


@pytest.mark.engine
def test_each_snapshot_is_judged_by_its_own_calibration(
    engine: Engine, texts: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fields of one index calibrated at different times: the freshness check must compare
    the index with the calibration that carries the snapshot, not with whichever field's
    calibration comes first. Otherwise a fresh snapshot is dropped with a false warning, or
    a stale one (title re-calibrated since) keeps scoring with outdated df, silently."""
    monkeypatch.setattr(snapshot_guard, "SNAPSHOT_CHECK_SECONDS", 0.0)
    index = create_index(engine, shards=2, mappings=MAPPINGS)
    docs = [{k: d[k] for k in ("id", "body", "title")} for d in load_docs(240)]
    body = {"query": {"match": {"body": texts[0]}}, "size": 10}
    try:
        bulk_index(engine, index, docs[:200])
        old_title = calibrate(engine, index, "title")
        record, vocab = calibrate_with_vocabulary(engine, index, "body")
        old_body = save_with_vocabulary(record, vocab, tmp_path / "old.json")
        bulk_index(engine, index, docs[200:])  # +20%
        new_title = calibrate(engine, index, "title")
        record, vocab = calibrate_with_vocabulary(engine, index, "body")
        new_body = save_with_vocabulary(record, vocab, tmp_path / "new.json")
        for cals, fresh in (([old_title, new_body], True), ([new_title, old_body], False)):
            client = wrap(engine.client, cals, stats="auto")
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                client.search(index=index, body=copy.deepcopy(body))
            runtime = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
            assert len(runtime) == (0 if fresh else 1), (fresh, runtime)
            in_use = client.esqlog_core.snapshot_for(index, "body")
            assert (in_use is not None) == fresh
    finally:
        call(engine, "DELETE", f"/{index}")
