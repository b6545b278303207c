"""Vocabulary snapshots: every term's global df, built in one term-vector pass and kept on disk.

Why these tests: the query side trusts a snapshot instead of asking the cluster, so a wrong
df (a shard's share dropped, a routed document missed, a lookup off by one) would silently
change every score. On real engines every scanned term's df is checked against the cluster's
own count (esqlog.statistics.terms, what a DFS search scores with) and h_tok against the independent
exact pass (esqlog.statistics.hapax). What needs no engine (the file format, the in-memory
lookup) is in tests/unit/test_vocabulary_snapshot.py.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from esqlog.calibration.calibrate import calibrate, calibrate_with_vocabulary
from esqlog.calibration.files import load_calibration, save_with_vocabulary
from esqlog.engine.client import Engine
from esqlog.errors import UsageError
from esqlog.statistics.hapax import exact_hapax_plan
from esqlog.statistics.terms import (
    field_stats_plan,
    live_doc_count_plan,
    resolve_index_plan,
    shard_routings_plan,
    term_stats_plan,
)
from esqlog.statistics.vocabulary import (
    load_vocabulary,
    save_vocabulary,
    vocabulary_from_scan,
)
from esqlog.statistics.vocabulary_scan import scan_vocabulary_plan
from tests.support.code_snippets import SNIPPETS
from tests.support.engines import bulk_index, call, create_index
from tests.support.oracle import load_docs
from tests.support.vocabularies import assert_same_vocabulary, make_vocabulary

GO_DOCS = 700
SCAN_BATCH = 97  # several scroll pages per shard
STATS_CHUNK = 500


# --- helpers ----------------------------------------------------------------------------------


def live_df(
    engine: Engine, index: str, terms: Sequence[str], routings: Sequence[str]
) -> dict[str, int]:
    """The cluster's global df of every term, asked in chunks."""
    out: dict[str, int] = {}
    ordered = sorted(terms)
    for start in range(0, len(ordered), STATS_CHUNK):
        chunk = ordered[start : start + STATS_CHUNK]
        _, df = engine.run(term_stats_plan(index, "body", chunk, routings))
        assert set(df) == set(chunk)  # no term dropped on the way
        out.update(df)
    return out


# --- engine: the scan against the cluster's own counts --------------------------------------


@pytest.fixture(scope="module")
def go_index(engine: Engine) -> Iterator[str]:
    """Real Go functions on 3 shards, no deletions."""
    docs = [{"id": d["id"], "body": d["body"]} for d in load_docs(GO_DOCS)]
    index = create_index(engine, shards=3)
    try:
        bulk_index(engine, index, docs)
        yield index
    finally:
        call(engine, "DELETE", f"/{index}")


@pytest.mark.engine
def test_scan_df_equals_cluster_df_for_every_term(engine: Engine, go_index: str) -> None:
    info = engine.run(resolve_index_plan(go_index))
    assert info.shards == 3
    routings = engine.run(shard_routings_plan(go_index, info.shards))
    seen: list[int] = []
    scan = engine.run(
        scan_vocabulary_plan(go_index, "body", info.shards, batch=SCAN_BATCH, progress=seen.append)
    )
    live = engine.run(live_doc_count_plan(go_index))
    fstats = engine.run(field_stats_plan(go_index, "body", routings))
    assert live > 3 * SCAN_BATCH
    assert scan.docs == live == sum(seen) == fstats.doc_count
    assert sum(scan.ttf.values()) == fstats.sum_ttf  # every token of every document was read
    assert set(scan.ttf) == set(scan.df) and len(scan.df) > 1000

    cluster = live_df(engine, go_index, list(scan.df), routings)
    wrong = {t: (scan.df[t], cluster[t]) for t in scan.df if scan.df[t] != cluster[t]}
    assert not wrong, dict(list(wrong.items())[:10])
    assert max(scan.df.values()) > live // 3  # terms spread over all shards were summed

    vocab = vocabulary_from_scan(
        scan,
        index=info.name,
        index_uuid=info.uuid,
        field="body",
        doc_count=fstats.doc_count,
        sum_ttf=fstats.sum_ttf,
        live_docs=live,
        created_at="now",
    )
    assert len(vocab) == len(scan.df)
    absent = [f"zzabsent{uuid.uuid4().hex}", "esqlog_not_a_go_identifier"]
    got = vocab.df_of(list(cluster) + absent)
    assert {t: got[t] for t in cluster} == cluster
    assert (
        engine.run(term_stats_plan(go_index, "body", absent, routings))[1]
        == {t: 0 for t in absent}
        == {t: got[t] for t in absent}
    )

    exact = engine.run(exact_hapax_plan(go_index, "body", routings))
    hapax = scan.hapax()
    assert 0 < exact.h_tok < 1
    assert hapax.h_tok == pytest.approx(exact.h_tok, abs=1e-12)
    assert (hapax.docs, hapax.tokens) == (exact.docs, exact.tokens)


def _bulk_routed(engine: Engine, index: str, docs: list[tuple[str, str, str]]) -> None:
    lines = []
    for doc_id, routing, body in docs:
        lines.append(json.dumps({"index": {"_index": index, "_id": doc_id, "routing": routing}}))
        lines.append(json.dumps({"body": body}))
    result = call(engine, "POST", "/_bulk", "\n".join(lines) + "\n", refresh="true")
    assert not result.get("errors"), result


@pytest.mark.engine
def test_scan_follows_custom_routing(engine: Engine) -> None:
    """Routed documents, and one id held twice under two routings on two shards."""
    index = create_index(engine, shards=3)
    try:
        routings = engine.run(shard_routings_plan(index, 3))
        docs = [(f"s{i}", routings[(i * 2 + 1) % 3], text) for i, text in enumerate(SNIPPETS)]
        docs += [
            ("twin", routings[0], "func twinLeft() { leftonly }"),
            ("twin", routings[1], "func twinRight() { rightonly }"),
        ]
        _bulk_routed(engine, index, docs)
        live = engine.run(live_doc_count_plan(index))
        assert live == len(docs)  # the twins are two documents

        scan = engine.run(scan_vocabulary_plan(index, "body", 3, batch=4))
        fstats = engine.run(field_stats_plan(index, "body", routings))
        assert scan.docs == live
        assert sum(scan.ttf.values()) == fstats.sum_ttf
        assert scan.df["leftonly"] == scan.df["rightonly"] == 1
        cluster = live_df(engine, index, list(scan.df), routings)
        assert scan.df == cluster
    finally:
        call(engine, "DELETE", f"/{index}")


@pytest.mark.engine
def test_scan_with_unmerged_deletions(engine: Engine, fresh_index: str) -> None:
    """A term's df is exact unless the term survives only in deleted documents of some shard
    (module docstring of esqlog.statistics.vocabulary): then the scan can only undercount it."""
    routings = engine.run(shard_routings_plan(fresh_index, 3))
    docs = [(f"{c}{i}", routings[i % 3], text) for c in "ab" for i, text in enumerate(SNIPPETS)]
    docs += [
        ("gone", routings[0], "func vanishingIdent() { zzdeletedhere }"),
        ("kept", routings[1], "func keptIdent() { zzdeletedhere }"),
    ]
    _bulk_routed(engine, fresh_index, docs)
    deleted = [("a0", routings[0]), ("b5", routings[2]), ("gone", routings[0])]
    in_deleted: set[str] = set()
    for doc_id, routing in deleted:
        tv = call(
            engine,
            "GET",
            f"/{fresh_index}/_termvectors/{doc_id}",
            fields="body",
            routing=routing,
            positions="false",
            offsets="false",
        )
        in_deleted.update(tv["term_vectors"]["body"]["terms"])
        call(engine, "DELETE", f"/{fresh_index}/_doc/{doc_id}", routing=routing)
    call(engine, "POST", f"/{fresh_index}/_refresh")

    scan = engine.run(scan_vocabulary_plan(fresh_index, "body", 3))
    assert scan.docs == engine.run(live_doc_count_plan(fresh_index)) == len(docs) - len(deleted)
    assert "vanishingident" not in scan.df  # only in a deleted document
    cluster = live_df(engine, fresh_index, list(scan.df), routings)
    for term, n in scan.df.items():
        assert n <= cluster[term], term
        if term not in in_deleted:
            assert n == cluster[term], term
    assert scan.df["zzdeletedhere"] == 1  # the live copy's shard only


# --- engine: calibration with a snapshot -------------------------------------------------------


@pytest.mark.engine
def test_calibrate_with_vocabulary_links_the_snapshot(
    engine: Engine, go_index: str, tmp_path: Path
) -> None:
    record, vocab = calibrate_with_vocabulary(engine, go_index, "body")
    assert record.h_tok_method == "exact"
    assert record.vocabulary is None and record.vocabulary_terms == len(vocab) > 1000
    info = engine.run(resolve_index_plan(go_index))
    assert (vocab.index, vocab.index_uuid, vocab.field) == (info.name, info.uuid, "body")
    assert (vocab.doc_count, vocab.sum_ttf, vocab.live_docs) == (
        record.doc_count,
        record.sum_ttf,
        record.live_docs,
    )
    # the same h_tok as the calibration that reads term vectors its own way
    assert record.h_tok == pytest.approx(
        calibrate(engine, go_index, "body", exact=True).h_tok, abs=1e-12
    )
    scan = engine.run(scan_vocabulary_plan(go_index, "body", info.shards))
    keys, df = scan.arrays()
    assert np.array_equal(vocab.hashes, keys) and np.array_equal(vocab.df, df)

    out = tmp_path / "cal.json"
    linked = save_with_vocabulary(record, vocab, out)
    assert linked.vocabulary_sha256 is not None
    name = f"cal.vocab.{linked.vocabulary_sha256[:16]}.npz"  # content-addressed
    snapshot = tmp_path / name
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cal.json", name]
    assert linked.vocabulary == name
    assert linked.vocabulary_sha256 == hashlib.sha256(snapshot.read_bytes()).hexdigest()
    assert linked.vocabulary_terms == len(vocab)
    stored = json.loads(out.read_text(encoding="utf-8"))
    assert stored["vocabulary"] == name and "location" not in stored

    loaded = load_calibration(out)
    assert loaded.to_json() == linked.to_json()
    assert loaded.vocabulary_path() == snapshot
    assert_same_vocabulary(
        load_vocabulary(loaded.vocabulary_path() or "", loaded.vocabulary_sha256), vocab
    )

    moved = tmp_path / "moved"
    moved.mkdir()
    for moving in ("cal.json", name):
        (tmp_path / moving).rename(moved / moving)
    again = load_calibration(moved / "cal.json")
    assert again.vocabulary_path() == moved / name  # it follows the record's folder
    load_vocabulary(again.vocabulary_path() or "", again.vocabulary_sha256)

    # another run's snapshot under the same name is refused, not silently used
    save_vocabulary(make_vocabulary({"func": 1}), moved / name)
    with pytest.raises(UsageError, match="checksum differs"):
        load_vocabulary(again.vocabulary_path() or "", again.vocabulary_sha256)
