"""Vocabulary snapshots: every term's global df, built in one term-vector pass and kept on disk.

Why these tests: the query side trusts a snapshot instead of asking the cluster, so a wrong
df (a shard's share dropped, a routed document missed, a lookup off by one) would silently
change every score. On real engines every scanned term's df is checked against the cluster's
own count (esqlog.statistics.terms, what a DFS search scores with) and h_tok against the independent
exact pass (esqlog.statistics.hapax). Without an engine: the file format (round trip, checksum,
one-line
errors for every kind of wrong file, atomic writes) and the in-memory lookup.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import uuid
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import esqlog.statistics.vocabulary as vocabulary_module
from esqlog.calibration.calibrate import (
    calibrate,
    calibrate_with_vocabulary,
    load_calibration,
    save_with_vocabulary,
)
from esqlog.engine.client import Engine
from esqlog.errors import ClusterError, UsageError
from esqlog.statistics.hapax import exact_hapax_plan
from esqlog.statistics.terms import (
    field_stats_plan,
    live_doc_count_plan,
    resolve_index_plan,
    shard_routings_plan,
    term_stats_plan,
)
from esqlog.statistics.vocabulary import (
    FORMAT,
    Vocabulary,
    VocabularyScan,
    load_vocabulary,
    save_vocabulary,
    term_hash,
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

TERMS = st.text(alphabet=st.characters(codec="utf-8"),
                min_size=1, max_size=12)


# --- helpers ----------------------------------------------------------------------------------


def npz_bytes(**arrays: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)  # type: ignore[arg-type]
    return buffer.getvalue()


def meta_array(meta: Any) -> np.ndarray:
    return np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)


def live_df(engine: Engine, index: str, terms: Sequence[str],
            routings: Sequence[str]) -> dict[str, int]:
    """The cluster's global df of every term, asked in chunks."""
    out: dict[str, int] = {}
    ordered = sorted(terms)
    for start in range(0, len(ordered), STATS_CHUNK):
        chunk = ordered[start:start + STATS_CHUNK]
        _, df = engine.run(term_stats_plan(index, "body", chunk, routings))
        assert set(df) == set(chunk)  # no term dropped on the way
        out.update(df)
    return out


# --- unit: lookup and arrays ------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(known=st.dictionaries(TERMS, st.integers(1, 2**32 - 1), max_size=60),
       unknown=st.lists(TERMS, max_size=20))
def test_df_of_is_exact_for_known_terms_and_zero_for_others(
    known: dict[str, int], unknown: list[str]
) -> None:
    vocab = make_vocabulary(known)
    assert len(vocab) == len(known)
    queried = list(known) + unknown
    got = vocab.df_of(queried)
    assert set(got) == set(queried)
    for term in queried:
        assert got[term] == known.get(term, 0), term


def test_df_of_survives_the_recent_cache_filling_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """A lookup that overflows the bounded cache still answers terms asked before the clear
    (it raised KeyError for them: found by the identifiers mode's large lookups)."""
    import esqlog.statistics.vocabulary as vocabulary_module

    monkeypatch.setattr(vocabulary_module, "RECENT_TERMS", 4)
    vocab = make_vocabulary({"a": 1, "b": 2, "c": 3, "d": 4, "e": 5})
    assert vocab.df_of(["a", "b"]) == {"a": 1, "b": 2}
    assert vocab.df_of(["a", "b", "c", "d", "e"]) == {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}


def test_df_of_empty_inputs() -> None:
    vocab = make_vocabulary({"func": 3})
    assert vocab.df_of([]) == {}
    empty = make_vocabulary({})
    assert len(empty) == 0
    assert empty.df_of(["func", "reader"]) == {"func": 0, "reader": 0}


@settings(max_examples=60, deadline=None)
@given(df=st.dictionaries(TERMS, st.integers(1, 10**6), max_size=80))
def test_arrays_sorted_unique_and_aligned(df: dict[str, int]) -> None:
    keys, values = VocabularyScan(df, dict(df), 1).arrays()
    assert keys.dtype == np.uint64 and values.dtype == np.uint32
    assert keys.shape == values.shape == (len(df),)
    assert bool(np.all(keys[1:] > keys[:-1]))
    assert dict(zip(keys.tolist(), values.tolist(), strict=True)) == {
        term_hash(t): n for t, n in df.items()}


@settings(max_examples=40, deadline=None)
@given(df=st.dictionaries(TERMS, st.integers(1, 1000), min_size=2, max_size=40))
def test_arrays_keep_the_larger_df_of_colliding_hashes(df: dict[str, int]) -> None:
    def weak_hash(term: str) -> int:  # collides a lot: exercises the merge of equal keys
        return len(term.encode("utf-8")) % 5

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(vocabulary_module, "term_hash", weak_hash)
        keys, values = VocabularyScan(df, dict(df), 1).arrays()
    expected: dict[int, int] = {}
    for term, n in df.items():
        expected[weak_hash(term)] = max(expected.get(weak_hash(term), 0), n)
    assert bool(np.all(keys[1:] > keys[:-1]))
    assert dict(zip(keys.tolist(), values.tolist(), strict=True)) == expected


def test_term_hash_is_the_same_in_another_process() -> None:
    terms = ["func", "handlewebsocketupgrade", "read_file", "café", "数据", "x" * 300]
    code = ("import json, sys; from esqlog.statistics.vocabulary import term_hash; "
            "print(json.dumps([term_hash(t) for t in json.loads(sys.argv[1])]))")
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", code, json.dumps(terms)], env=env, check=True,
                         capture_output=True, text=True).stdout
    assert json.loads(out) == [term_hash(t) for t in terms]
    assert all(0 <= h < 2**64 for h in json.loads(out))


@settings(max_examples=60, deadline=None)
@given(docs=st.lists(st.lists(st.sampled_from("abcdefghij"), min_size=0, max_size=12),
                     min_size=0, max_size=15))
def test_scan_hapax_equals_a_direct_count(docs: list[list[str]]) -> None:
    df: Counter[str] = Counter()
    ttf: Counter[str] = Counter()
    for tokens in docs:
        df.update(set(tokens))
        ttf.update(tokens)
    scan = VocabularyScan(dict(df), dict(ttf), len(docs))
    tokens_total = sum(len(tokens) for tokens in docs)
    hapax_tokens = sum(1 for tokens in docs for t in tokens
                       if sum(t in other for other in docs) == 1)
    got = scan.hapax()
    assert got.method == "exact" and got.docs == len(docs) and got.tokens == tokens_total
    expected = hapax_tokens / tokens_total if tokens_total else 0.0
    assert got.h_tok == pytest.approx(expected, abs=1e-15)
    assert got.low == got.high == got.h_tok


def test_scan_without_any_term_is_a_cluster_error() -> None:
    """A field whose term vectors come back empty must not yield an empty, 'valid' snapshot."""
    plan = scan_vocabulary_plan("idx", "body", shards=1)
    request = plan.send(None)
    assert request.path == "/idx/_search" and request.params["preference"] == "_shards:0"
    request = plan.send({"_scroll_id": "s1", "hits": {"hits": [{"_id": "1"}]}})
    assert request.path == "/idx/_mtermvectors"
    request = plan.send({"docs": [{"_id": "1", "found": True, "term_vectors": {}}]})
    assert request.path == "/_search/scroll"
    request = plan.send({"_scroll_id": "s1", "hits": {"hits": []}})
    assert request.method == "DELETE"  # the scroll is released
    with pytest.raises(ClusterError, match="returned no terms"):
        plan.send({})


# --- unit: files --------------------------------------------------------------------------------

def test_save_load_roundtrip(tmp_path: Path) -> None:
    vocab = make_vocabulary({"func": 40, "reader": 7, "readfile": 1, "数据": 2},
                            index="go", index_uuid="abc", doc_count=41, sum_ttf=1234,
                            live_docs=40)
    path, digest = save_vocabulary(vocab, tmp_path / "sub" / "v.npz")
    assert path == tmp_path / "sub" / "v.npz"
    assert digest == hashlib.sha256(path.read_bytes()).hexdigest()
    loaded = load_vocabulary(path, digest)
    assert_same_vocabulary(loaded, vocab)
    assert loaded.df_of(["func", "数据", "nope"]) == {"func": 40, "数据": 2, "nope": 0}
    assert_same_vocabulary(load_vocabulary(str(path)), vocab)  # checksum is optional
    assert sorted(p.name for p in path.parent.iterdir()) == ["v.npz"]  # no temp leftovers


def test_save_replaces_atomically_and_cleans_up_on_failure(tmp_path: Path) -> None:
    target = tmp_path / "v.npz"
    first, _ = save_vocabulary(make_vocabulary({"a": 1}), target)
    old = first.read_bytes()
    _, digest = save_vocabulary(make_vocabulary({"a": 1, "b": 2}), target)
    assert load_vocabulary(target, digest).df_of(["b"]) == {"b": 2}
    assert [p.name for p in tmp_path.iterdir()] == ["v.npz"]

    def fail(*_: Any) -> None:
        raise OSError("disk full")

    current = target.read_bytes()
    assert current != old
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "replace", fail)
        with pytest.raises(UsageError, match="disk full"):  # one line, not a traceback
            save_vocabulary(make_vocabulary({"c": 3}), target)
    assert target.read_bytes() == current  # the old snapshot is intact
    assert [p.name for p in tmp_path.iterdir()] == ["v.npz"]  # and no temp file is left


def _assert_one_line_usage_error(path: Path, sha256: str | None, match: str) -> None:
    with pytest.raises(UsageError, match=match) as info:
        load_vocabulary(path, sha256)
    message = str(info.value)
    assert "\n" not in message and str(path) in message
    assert "esqlog calibrate --vocabulary" in message  # it names the fix


def test_missing_file_and_checksum_mismatch(tmp_path: Path) -> None:
    _assert_one_line_usage_error(tmp_path / "absent.npz", None, "does not exist")
    path, digest = save_vocabulary(make_vocabulary({"func": 3}), tmp_path / "v.npz")
    other = hashlib.sha256(b"another run").hexdigest()
    _assert_one_line_usage_error(path, other, "checksum differs")
    load_vocabulary(path, digest)  # the right checksum still loads
    _assert_one_line_usage_error(tmp_path, None, "is a directory, not a regular file")


def _valid_payload() -> bytes:
    buffer = io.BytesIO()
    vocab = make_vocabulary({"func": 3, "reader": 1})
    np.savez(buffer, hashes=vocab.hashes, df=vocab.df, meta=meta_array(
        {"format": FORMAT, "index": "i", "index_uuid": "u", "field": "body", "doc_count": 1,
         "sum_ttf": 1, "live_docs": 1, "created_at": "t", "terms": 2}))
    return buffer.getvalue()


def _npy_bytes() -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.arange(4, dtype=np.uint64))
    return buffer.getvalue()


_HASHES = np.array([1, 5], dtype=np.uint64)
_DF = np.array([2, 3], dtype=np.uint32)
_GOOD_META = {"format": FORMAT, "index": "i", "index_uuid": "u", "field": "body",
              "doc_count": 5, "sum_ttf": 9, "live_docs": 1, "created_at": "t", "terms": 2}

BAD_FILES: dict[str, tuple[bytes, str]] = {
    "text": (b"func ReadFile(name string) ([]byte, error)\n", "not an esqlog vocabulary"),
    "empty": (b"", "not an esqlog vocabulary"),
    "truncated": (_valid_payload()[:200], "not an esqlog vocabulary"),
    "npy array": (_npy_bytes(), "not an esqlog vocabulary"),
    "npz of other arrays": (npz_bytes(x=np.arange(3)), "not an esqlog vocabulary"),
    "meta not json": (npz_bytes(hashes=_HASHES, df=_DF,
                                meta=np.frombuffer(b"\xff\xfe{", dtype=np.uint8)),
                      "not an esqlog vocabulary"),
    "other format": (npz_bytes(hashes=_HASHES, df=_DF,
                               meta=meta_array({**_GOOD_META, "format": "other/2"})),
                     "unknown format 'other/2'"),
    "meta a list": (npz_bytes(hashes=_HASHES, df=_DF, meta=meta_array([1, 2])),
                    "unknown format"),
    "signed hashes": (npz_bytes(hashes=_HASHES.astype(np.int64), df=_DF,
                                meta=meta_array(_GOOD_META)), "not an esqlog vocabulary"),
    "misaligned df": (npz_bytes(hashes=_HASHES, df=_DF[:1], meta=meta_array(_GOOD_META)),
                      "inconsistent"),
    "incomplete meta": (npz_bytes(hashes=_HASHES, df=_DF,
                                  meta=meta_array({"format": FORMAT, "index": "i"})),
                        "incomplete metadata"),
}


@pytest.mark.parametrize("kind", sorted(BAD_FILES))
def test_wrong_files_are_one_line_usage_errors(tmp_path: Path, kind: str) -> None:
    payload, match = BAD_FILES[kind]
    path = tmp_path / "v.npz"
    path.write_bytes(payload)
    _assert_one_line_usage_error(path, None, match)
    # with the file's own checksum the content is still checked
    _assert_one_line_usage_error(path, hashlib.sha256(payload).hexdigest(), match)


def test_the_good_meta_used_above_does_load(tmp_path: Path) -> None:
    """The bad files differ from a loadable one in one respect only."""
    path = tmp_path / "v.npz"
    path.write_bytes(npz_bytes(hashes=_HASHES, df=_DF, meta=meta_array(_GOOD_META)))
    vocab = load_vocabulary(path)
    assert len(vocab) == 2 and vocab.index == "i" and vocab.df.tolist() == [2, 3]


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
    scan = engine.run(scan_vocabulary_plan(go_index, "body", info.shards, batch=SCAN_BATCH,
                                           progress=seen.append))
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

    vocab = vocabulary_from_scan(scan, index=info.name, index_uuid=info.uuid, field="body",
                                 doc_count=fstats.doc_count, sum_ttf=fstats.sum_ttf,
                                 live_docs=live, created_at="now")
    assert len(vocab) == len(scan.df)
    absent = [f"zzabsent{uuid.uuid4().hex}", "esqlog_not_a_go_identifier"]
    got = vocab.df_of(list(cluster) + absent)
    assert {t: got[t] for t in cluster} == cluster
    assert engine.run(term_stats_plan(go_index, "body", absent, routings))[1] == {
        t: 0 for t in absent} == {t: got[t] for t in absent}

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
        docs += [("twin", routings[0], "func twinLeft() { leftonly }"),
                 ("twin", routings[1], "func twinRight() { rightonly }")]
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
    docs += [("gone", routings[0], "func vanishingIdent() { zzdeletedhere }"),
             ("kept", routings[1], "func keptIdent() { zzdeletedhere }")]
    _bulk_routed(engine, fresh_index, docs)
    deleted = [("a0", routings[0]), ("b5", routings[2]), ("gone", routings[0])]
    in_deleted: set[str] = set()
    for doc_id, routing in deleted:
        tv = call(engine, "GET", f"/{fresh_index}/_termvectors/{doc_id}", fields="body",
                  routing=routing, positions="false", offsets="false")
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
        record.doc_count, record.sum_ttf, record.live_docs)
    # the same h_tok as the calibration that reads term vectors its own way
    assert record.h_tok == pytest.approx(calibrate(engine, go_index, "body", exact=True).h_tok,
                                         abs=1e-12)
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
    assert_same_vocabulary(load_vocabulary(loaded.vocabulary_path() or "",
                                           loaded.vocabulary_sha256), vocab)

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


@given(st.lists(st.text(max_size=30), max_size=50))
def test_batched_hashes_equal_term_hash(terms: list[str]) -> None:
    """Lookups hash a whole query at once; they must find what the build stored per term."""
    from esqlog.statistics.vocabulary import _hashes

    assert _hashes(terms).tolist() == [term_hash(t) for t in terms]


def test_bloom_filter_never_hides_a_term_and_rarely_admits_others() -> None:
    """The filter only saves work: a vocabulary term must always pass it, and absent
    terms (join candidates, mostly) should nearly all be ruled out."""
    from esqlog.statistics.vocabulary import build_bloom

    rng = np.random.default_rng(7)
    terms = [f"t{v}x{rng.integers(1 << 30)}" for v in range(20_000)]
    vocab = Vocabulary("i", "u", "f", 1, 1, 1, "now", np.zeros(0, dtype=np.uint64),
                       np.zeros(0, dtype=np.uint32), build_bloom(terms))
    assert all(vocab.might_hold(t) for t in terms)
    others = [f"o{v}y{rng.integers(1 << 30)}" for v in range(20_000)]
    false_positives = sum(vocab.might_hold(t) for t in others) / len(others)
    assert false_positives < 0.02, false_positives
    assert Vocabulary("i", "u", "f", 1, 1, 1, "now", np.zeros(0, dtype=np.uint64),
                      np.zeros(0, dtype=np.uint32)).might_hold("anything")


def test_bloom_survives_save_and_load(tmp_path: Path) -> None:
    from esqlog.statistics.vocabulary import build_bloom

    df = {"readfile": 3, "read_file": 1, "read": 40}
    scan = VocabularyScan(df, dict(df), 3)
    keys, counts = scan.arrays()
    vocab = Vocabulary("i", "u", "f", 50, 90, 50, "now", keys, counts, build_bloom(list(df)))
    path, digest = save_vocabulary(vocab, tmp_path / "v.vocab.npz")
    loaded = load_vocabulary(path, digest)
    assert loaded.bloom is not None and np.array_equal(loaded.bloom, vocab.bloom)
    assert loaded.df_of(["readfile", "read_file", "read", "file", "readfiles"]) == {
        "readfile": 3, "read_file": 1, "read": 40, "file": 0, "readfiles": 0}


@given(st.lists(st.text(max_size=20), min_size=1, max_size=200), st.text(max_size=20))
def test_might_hold_reads_exactly_the_bits_build_bloom_sets(terms: list[str], probe: str) -> None:
    """The fast unrolled test must agree with the reference positions, bit for bit."""
    from esqlog.statistics.vocabulary import BLOOM_K, _bloom_positions, build_bloom

    bloom = build_bloom(terms)
    vocab = Vocabulary("i", "u", "f", 1, 1, 1, "now", np.zeros(0, dtype=np.uint64),
                       np.zeros(0, dtype=np.uint32), bloom)
    mask = bloom.size * 8 - 1
    for term in [*terms, probe]:
        expected = all(bloom[p >> 3] >> (p & 7) & 1
                       for p in _bloom_positions(term, BLOOM_K, mask))
        assert vocab.might_hold(term) == expected
    assert all(vocab.might_hold(t) for t in terms)
