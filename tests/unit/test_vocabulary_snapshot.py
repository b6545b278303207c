"""Vocabulary snapshots without an engine: the in-memory lookup (exact df, zero for unknown
terms, the Bloom filter), the sorted hash arrays, the scan's hapax count, and the file format
(round trip, checksum, atomic replace, a one-line error for every kind of wrong file).

The query side trusts a snapshot instead of asking the cluster, so a wrong df or a file that
loads when it should not would silently change every score. tests/engine/test_vocabulary.py
checks the scans of real engines against the cluster's own counts.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import esqlog.statistics.vocabulary as vocabulary_module
from esqlog.errors import ClusterError, UsageError
from esqlog.statistics.term_keys import term_hash
from esqlog.statistics.vocabulary import (
    FORMAT,
    Vocabulary,
    VocabularyScan,
    load_vocabulary,
    save_vocabulary,
)
from esqlog.statistics.vocabulary_scan import scan_vocabulary_plan
from tests.support.adversarial import make_vocab as _make_vocab
from tests.support.vocabularies import assert_same_vocabulary, make_vocabulary

TERMS = st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=12)


def npz_bytes(**arrays: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)  # type: ignore[arg-type]
    return buffer.getvalue()


def meta_array(meta: Any) -> np.ndarray:
    return np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)


@settings(max_examples=60, deadline=None)
@given(
    known=st.dictionaries(TERMS, st.integers(1, 2**32 - 1), max_size=60),
    unknown=st.lists(TERMS, max_size=20),
)
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
        term_hash(t): n for t, n in df.items()
    }


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
    code = (
        "import json, sys; from esqlog.statistics.term_keys import term_hash; "
        "print(json.dumps([term_hash(t) for t in json.loads(sys.argv[1])]))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", code, json.dumps(terms)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert json.loads(out) == [term_hash(t) for t in terms]
    assert all(0 <= h < 2**64 for h in json.loads(out))


@settings(max_examples=60, deadline=None)
@given(
    docs=st.lists(
        st.lists(st.sampled_from("abcdefghij"), min_size=0, max_size=12), min_size=0, max_size=15
    )
)
def test_scan_hapax_equals_a_direct_count(docs: list[list[str]]) -> None:
    df: Counter[str] = Counter()
    ttf: Counter[str] = Counter()
    for tokens in docs:
        df.update(set(tokens))
        ttf.update(tokens)
    scan = VocabularyScan(dict(df), dict(ttf), len(docs))
    tokens_total = sum(len(tokens) for tokens in docs)
    hapax_tokens = sum(
        1 for tokens in docs for t in tokens if sum(t in other for other in docs) == 1
    )
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


def test_save_load_roundtrip(tmp_path: Path) -> None:
    vocab = make_vocabulary(
        {"func": 40, "reader": 7, "readfile": 1, "数据": 2},
        index="go",
        index_uuid="abc",
        doc_count=41,
        sum_ttf=1234,
        live_docs=40,
    )
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
    np.savez(
        buffer,
        hashes=vocab.hashes,
        df=vocab.df,
        meta=meta_array(
            {
                "format": FORMAT,
                "index": "i",
                "index_uuid": "u",
                "field": "body",
                "doc_count": 1,
                "sum_ttf": 1,
                "live_docs": 1,
                "created_at": "t",
                "terms": 2,
            }
        ),
    )
    return buffer.getvalue()


def _npy_bytes() -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.arange(4, dtype=np.uint64))
    return buffer.getvalue()


_HASHES = np.array([1, 5], dtype=np.uint64)


_DF = np.array([2, 3], dtype=np.uint32)


_GOOD_META = {
    "format": FORMAT,
    "index": "i",
    "index_uuid": "u",
    "field": "body",
    "doc_count": 5,
    "sum_ttf": 9,
    "live_docs": 1,
    "created_at": "t",
    "terms": 2,
}


BAD_FILES: dict[str, tuple[bytes, str]] = {
    "text": (b"func ReadFile(name string) ([]byte, error)\n", "not an esqlog vocabulary"),
    "empty": (b"", "not an esqlog vocabulary"),
    "truncated": (_valid_payload()[:200], "not an esqlog vocabulary"),
    "npy array": (_npy_bytes(), "not an esqlog vocabulary"),
    "npz of other arrays": (npz_bytes(x=np.arange(3)), "not an esqlog vocabulary"),
    "meta not json": (
        npz_bytes(hashes=_HASHES, df=_DF, meta=np.frombuffer(b"\xff\xfe{", dtype=np.uint8)),
        "not an esqlog vocabulary",
    ),
    "other format": (
        npz_bytes(hashes=_HASHES, df=_DF, meta=meta_array({**_GOOD_META, "format": "other/2"})),
        "unknown format 'other/2'",
    ),
    "meta a list": (npz_bytes(hashes=_HASHES, df=_DF, meta=meta_array([1, 2])), "unknown format"),
    "signed hashes": (
        npz_bytes(hashes=_HASHES.astype(np.int64), df=_DF, meta=meta_array(_GOOD_META)),
        "not an esqlog vocabulary",
    ),
    "misaligned df": (
        npz_bytes(hashes=_HASHES, df=_DF[:1], meta=meta_array(_GOOD_META)),
        "inconsistent",
    ),
    "incomplete meta": (
        npz_bytes(hashes=_HASHES, df=_DF, meta=meta_array({"format": FORMAT, "index": "i"})),
        "incomplete metadata",
    ),
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


@given(st.lists(st.text(max_size=30), max_size=50))
def test_batched_hashes_equal_term_hash(terms: list[str]) -> None:
    """Lookups hash a whole query at once; they must find what the build stored per term."""
    from esqlog.statistics.term_keys import term_hashes

    assert term_hashes(terms).tolist() == [term_hash(t) for t in terms]


def test_bloom_filter_never_hides_a_term_and_rarely_admits_others() -> None:
    """The filter only saves work: a vocabulary term must always pass it, and absent
    terms (join candidates, mostly) should nearly all be ruled out."""
    from esqlog.statistics.term_keys import build_bloom

    rng = np.random.default_rng(7)
    terms = [f"t{v}x{rng.integers(1 << 30)}" for v in range(20_000)]
    vocab = Vocabulary(
        "i",
        "u",
        "f",
        1,
        1,
        1,
        "now",
        np.zeros(0, dtype=np.uint64),
        np.zeros(0, dtype=np.uint32),
        build_bloom(terms),
    )
    assert all(vocab.might_hold(t) for t in terms)
    others = [f"o{v}y{rng.integers(1 << 30)}" for v in range(20_000)]
    false_positives = sum(vocab.might_hold(t) for t in others) / len(others)
    assert false_positives < 0.02, false_positives
    assert Vocabulary(
        "i", "u", "f", 1, 1, 1, "now", np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.uint32)
    ).might_hold("anything")


def test_bloom_survives_save_and_load(tmp_path: Path) -> None:
    from esqlog.statistics.term_keys import build_bloom

    df = {"readfile": 3, "read_file": 1, "read": 40}
    scan = VocabularyScan(df, dict(df), 3)
    keys, counts = scan.arrays()
    vocab = Vocabulary("i", "u", "f", 50, 90, 50, "now", keys, counts, build_bloom(list(df)))
    path, digest = save_vocabulary(vocab, tmp_path / "v.vocab.npz")
    loaded = load_vocabulary(path, digest)
    assert loaded.bloom is not None and np.array_equal(loaded.bloom, vocab.bloom)
    assert loaded.df_of(["readfile", "read_file", "read", "file", "readfiles"]) == {
        "readfile": 3,
        "read_file": 1,
        "read": 40,
        "file": 0,
        "readfiles": 0,
    }


@given(st.lists(st.text(max_size=20), min_size=1, max_size=200), st.text(max_size=20))
def test_might_hold_reads_exactly_the_bits_build_bloom_sets(terms: list[str], probe: str) -> None:
    """The fast unrolled test must agree with the reference positions, bit for bit."""
    from esqlog.statistics.term_keys import BLOOM_K, bloom_positions, build_bloom

    bloom = build_bloom(terms)
    vocab = Vocabulary(
        "i",
        "u",
        "f",
        1,
        1,
        1,
        "now",
        np.zeros(0, dtype=np.uint64),
        np.zeros(0, dtype=np.uint32),
        bloom,
    )
    mask = bloom.size * 8 - 1
    for term in [*terms, probe]:
        expected = all(bloom[p >> 3] >> (p & 7) & 1 for p in bloom_positions(term, BLOOM_K, mask))
        assert vocab.might_hold(term) == expected
    assert all(vocab.might_hold(t) for t in terms)


def test_a_truncated_snapshot_is_named_truncated(tmp_path: Path) -> None:
    path, digest = save_vocabulary(_make_vocab({"func": 3, "read": 1}), tmp_path / "v.npz")
    path.write_bytes(path.read_bytes()[:300])
    with pytest.raises(UsageError) as info:
        load_vocabulary(path, digest)
    assert "is truncated, damaged" in str(info.value)
    assert "does not belong" not in str(info.value)
