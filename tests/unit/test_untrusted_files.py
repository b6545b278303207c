"""Tampered vocabulary snapshots and identifier statistics: one-line UsageErrors, never numpy's.

Each crafted file differs from one esqlog wrote in one respect; the loaders must refuse it
with one line naming the file, and must never allocate what a header claims before it is
checked. The property test flips random bytes of real small files: each result either
loads exactly as the original or is a UsageError, never another exception.
"""

from __future__ import annotations

import io
import json
import os
import tracemalloc
import zipfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from esqlog.errors import UsageError
from esqlog.identifiers.files import (
    load_identifier_stats,
    load_shard_counts,
    save_identifier_stats,
)
from esqlog.identifiers.scan import SplitCollector
from esqlog.identifiers.split_stats import IdentifierStats, build_identifier_stats
from esqlog.statistics.analysis import standard_terms
from esqlog.statistics.vocabulary import (
    Vocabulary,
    VocabularyScan,
    load_vocabulary,
    snapshot_payload,
    vocabulary_from_scan,
)

DOCS = [
    (0, "func readFile(name string) error { return os.ReadFile(name) }"),
    (1, "func writeFile(path string) error { return nil }"),
    (1, "ReadFile reads a file; read_all reads everything"),
    (2, "socket read deadline: readDeadline and SetReadDeadline"),
]


def small_vocabulary() -> Vocabulary:
    df = Counter(t for _, text in DOCS for t in set(standard_terms(text) or []))
    ttf = Counter(t for _, text in DOCS for t in standard_terms(text) or [])
    scan = VocabularyScan(df=dict(df), ttf=dict(ttf), docs=len(DOCS))
    return vocabulary_from_scan(
        scan,
        index="go",
        index_uuid="u1",
        field="body",
        doc_count=len(DOCS),
        sum_ttf=sum(ttf.values()),
        live_docs=len(DOCS),
        created_at="2026-12-02T00:00:00+00:00",
    )


def small_identifier_stats() -> IdentifierStats:
    """As the vocabulary scan feeds the collector, with each shard's own statistics."""
    shard_df = Counter((s, t) for s, text in DOCS for t in set(standard_terms(text) or []))
    collector = SplitCollector("body")
    for shard, text in DOCS:
        counts = Counter(standard_terms(text))
        collector(
            shard,
            {"_source": {"body": text}},
            {t: {"term_freq": n, "doc_freq": shard_df[shard, t]} for t, n in counts.items()},
        )
    for shard in range(3):
        collector.field_statistics(shard, sum(s == shard for s, _ in DOCS))
    df = Counter(t for _, text in DOCS for t in set(standard_terms(text) or []))
    return build_identifier_stats(
        collector,
        dict(df),
        index="go",
        index_uuid="u1",
        field="body",
        shards=3,
        doc_count=len(DOCS),
        created_at="now",
        predictor="esqlog-linear",
    )


def members(payload: bytes) -> dict[str, bytes]:
    """The raw .npy bytes of each member of an .npz payload."""
    with zipfile.ZipFile(io.BytesIO(payload)) as archive:
        return {i.filename.removesuffix(".npy"): archive.read(i) for i in archive.infolist()}


def archive(parts: dict[str, bytes]) -> bytes:
    """An .npz payload of raw .npy members (stored, as np.savez writes them)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as out:
        for name, data in parts.items():
            out.writestr(f"{name}.npy", data)
    return buffer.getvalue()


def npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def huge_header(data: bytes, shape: tuple[int, ...]) -> bytes:
    """An .npy member whose header declares ``shape`` but that keeps its few data bytes."""
    stream = io.BytesIO(data)
    version = np.lib.format.read_magic(stream)
    read = (
        np.lib.format.read_array_header_1_0
        if version == (1, 0)
        else np.lib.format.read_array_header_2_0
    )
    _, _, dtype = read(stream)
    body = data[stream.tell() :]
    out = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        out, {"descr": dtype.str, "fortran_order": False, "shape": shape}
    )
    return out.getvalue() + body


def with_meta(payload: bytes, change: Callable[[dict[str, Any]], Any]) -> bytes:
    """The payload with its metadata JSON replaced by ``change(meta)`` (dumped as given)."""
    parts = members(payload)
    meta = json.loads(bytes(np.load(io.BytesIO(parts["meta"]))).decode())
    parts["meta"] = npy(np.frombuffer(json.dumps(change(meta)).encode(), np.uint8))
    return archive(parts)


def one_line_error(load: Callable[[], Any], *words: str) -> str:
    with pytest.raises(UsageError) as info:
        load()
    message = str(info.value)
    assert "\n" not in message and "Traceback" not in message
    for word in words:
        assert word in message, message
    return message


def identifiers_payload(tmp_path: Path, stats: IdentifierStats | None = None) -> bytes:
    path, _ = save_identifier_stats(stats or small_identifier_stats(), tmp_path / "x.npz", "v")
    return path.read_bytes()


# --- vocabulary snapshots -----------------------------------------------------------------


def test_a_header_declaring_a_huge_shape_is_refused_before_anything_is_allocated(
    tmp_path: Path,
) -> None:
    payload, _ = snapshot_payload(small_vocabulary())
    parts = members(payload)
    parts["hashes"] = huge_header(parts["hashes"], (1 << 40,))  # 8 TB of uint64
    path = tmp_path / "v.npz"
    path.write_bytes(archive(parts))
    tracemalloc.start()
    try:
        one_line_error(lambda: load_vocabulary(path), "damaged", "declares shape")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20


def test_the_checksum_is_compared_before_the_arrays_are_read(tmp_path: Path) -> None:
    """A well-formed file of another calibration: refused as such, its data never read."""
    payload, digest = snapshot_payload(small_vocabulary())
    path = tmp_path / "v.npz"
    path.write_bytes(payload)
    other = "0" * 64
    one_line_error(lambda: load_vocabulary(path, other), "checksum differs")
    assert load_vocabulary(path, digest).df_of(["readfile"]) == {"readfile": 2}


@pytest.mark.parametrize(
    "field, value, words",
    [
        ("doc_count", -5, "doc_count is -5"),
        ("doc_count", 0, "doc_count is 0"),
        ("sum_ttf", 2.5, "sum_ttf is not an integer"),
        ("live_docs", True, "live_docs is not an integer"),
        ("doc_count", "12", "doc_count is not an integer"),
        ("index", 7, "index is not a string"),
        ("terms", 10**9, "terms"),
    ],
)
def test_metadata_of_the_wrong_type_or_range_is_refused(
    tmp_path: Path, field: str, value: Any, words: str
) -> None:
    payload, _ = snapshot_payload(small_vocabulary())
    path = tmp_path / "v.npz"
    path.write_bytes(with_meta(payload, lambda meta: {**meta, field: value}))
    one_line_error(lambda: load_vocabulary(path), str(path), words)


@pytest.mark.parametrize("shape", ["list", "nested", "deep", "nan"])
def test_metadata_that_is_not_a_flat_object_is_refused(tmp_path: Path, shape: str) -> None:
    payload, _ = snapshot_payload(small_vocabulary())
    path = tmp_path / "v.npz"
    if shape == "deep":  # deeper than json can parse: RecursionError inside json.loads
        parts = members(payload)
        parts["meta"] = npy(np.frombuffer(b"[" * 200_000 + b"]" * 200_000, np.uint8))
        path.write_bytes(archive(parts))
    else:
        change: dict[str, Callable[[dict[str, Any]], Any]] = {
            "list": lambda meta: list(meta.items()),
            "nested": lambda meta: {**meta, "doc_count": {"value": 5}},
            "nan": lambda meta: {**meta, "doc_count": float("nan")},
        }
        path.write_bytes(with_meta(payload, change[shape]))
    one_line_error(lambda: load_vocabulary(path), str(path))


def test_unsorted_hashes_are_refused(tmp_path: Path) -> None:
    vocab = small_vocabulary()
    parts = members(snapshot_payload(vocab)[0])
    parts["hashes"] = npy(vocab.hashes[::-1].copy())
    path = tmp_path / "v.npz"
    path.write_bytes(archive(parts))
    one_line_error(lambda: load_vocabulary(path), "inconsistent", "not sorted")


def test_a_directory_entry_that_hides_the_optional_filter_is_refused(tmp_path: Path) -> None:
    """A damaged comment length in one directory entry swallows the next entry (the
    optional term filter): found by hypothesis, where the file then loaded without it."""
    payload = bytearray(VOCAB_PAYLOAD)
    entries = [i for i in range(len(payload)) if payload[i : i + 4] == b"PK\x01\x02"]
    assert len(entries) == 4 and payload[entries[-1] + 46 : entries[-1] + 55] == b"bloom.npy"
    payload[entries[-2] + 33] ^= 0x01  # the comment length of the entry before it: +256
    path = tmp_path / "v.npz"
    path.write_bytes(bytes(payload))
    one_line_error(lambda: load_vocabulary(path), "damaged")


def test_a_large_file_named_as_a_snapshot_is_refused_without_being_read_whole(
    tmp_path: Path,
) -> None:
    """1 GB (sparse) under the snapshot's bound: its zip directory is looked for at the end
    and missing, so the file is refused after reading a few kilobytes, not a gigabyte."""
    path = tmp_path / "big.vocab.0123456789abcdef.npz"
    with path.open("wb") as handle:
        handle.truncate(1_000_000_000)
    for load in (lambda: load_vocabulary(path, "0" * 64), lambda: load_identifier_stats(path)):
        tracemalloc.start()
        try:
            one_line_error(load, "damaged")
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < 8 << 20


def test_a_file_over_the_bound_is_refused_before_it_is_opened_for_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import esqlog.statistics.vocabulary as vocabulary

    payload, _ = snapshot_payload(small_vocabulary())
    path = tmp_path / "v.npz"
    path.write_bytes(payload)
    monkeypatch.setattr(vocabulary, "MAX_SNAPSHOT_BYTES", len(payload) - 1)
    one_line_error(lambda: load_vocabulary(path), f"{len(payload):,} bytes, more than")


# --- identifier statistics ------------------------------------------------------------------


@pytest.mark.parametrize(
    "field, value, words",
    [
        ("doc_count", -5, "doc_count is -5"),
        ("split_docs", 0, "split_docs is 0"),
        ("h_tok", float("nan"), ""),  # NaN: refused as it is parsed (not a flat object)
        ("h_tok", 1.5, "h_tok is 1.5"),
        ("q", "0.7", "q is not a number"),
        ("shards", 5000, "shards is 5,000"),
        ("index", ["a"], ""),
        ("created_at", None, "created_at is not a string"),
    ],
)
def test_identifier_metadata_of_the_wrong_type_or_range_is_refused(
    tmp_path: Path, field: str, value: Any, words: str
) -> None:
    path = tmp_path / "x.idents.npz"
    path.write_bytes(with_meta(identifiers_payload(tmp_path), lambda m: {**m, field: value}))
    one_line_error(lambda: load_identifier_stats(path, "v"), str(path), words)


@pytest.mark.parametrize("shape", ["list", "deep"])
def test_identifier_metadata_that_is_not_an_object_is_refused(tmp_path: Path, shape: str) -> None:
    parts = members(identifiers_payload(tmp_path))
    text = b"[1, 2]" if shape == "list" else b"[" * 200_000 + b"]" * 200_000
    parts["meta"] = npy(np.frombuffer(text, np.uint8))
    path = tmp_path / "x.idents.npz"
    path.write_bytes(archive(parts))
    one_line_error(lambda: load_identifier_stats(path, "v"), "unknown format")


def test_all_zero_shard_counts_are_refused(tmp_path: Path) -> None:
    """Every shard with N = 0 would turn every per-shard query into one matching nothing."""
    stats = small_identifier_stats()
    assert stats.per_shard
    zero = IdentifierStats(
        **{
            **stats.__dict__,
            "shard_docs": np.zeros(3, np.int64),
            "local_df": np.zeros_like(stats.local_df),
            "word_id": {},
        }
    )
    path, _ = save_identifier_stats(zero, tmp_path / "x.idents.npz", "v")
    one_line_error(lambda: load_identifier_stats(path, "v"), "inconsistent", "shard_docs")


def test_a_changed_array_fails_the_files_own_checksum(tmp_path: Path) -> None:
    """Valid zip, valid headers, valid CRCs, one df changed: only the checksum can tell."""
    parts = members(identifiers_payload(tmp_path))
    df = np.load(io.BytesIO(parts["df_split"])).copy()
    df[np.argmax(df)] += 1
    parts["df_split"] = npy(df)
    path = tmp_path / "x.idents.npz"
    path.write_bytes(archive(parts))
    one_line_error(lambda: load_identifier_stats(path, "v"), "checksum differs", "recalibrate")


def test_an_identifier_header_declaring_a_huge_shape_is_refused(tmp_path: Path) -> None:
    parts = members(identifiers_payload(tmp_path))
    parts["local_df"] = huge_header(parts["local_df"], (1 << 30, 1 << 20))
    path = tmp_path / "x.idents.npz"
    path.write_bytes(archive(parts))
    one_line_error(lambda: load_identifier_stats(path, "v"), "damaged", "declares shape")


def test_the_shard_counts_are_the_files_own_per_shard_part(tmp_path: Path) -> None:
    """Boost mode's light read gives the same per-shard numbers as the whole file's."""
    stats = small_identifier_stats()
    path, _ = save_identifier_stats(stats, tmp_path / "x.idents.npz", "v")
    counts = load_shard_counts(path, "v")
    assert (counts.index_uuid, counts.field, counts.shards) == ("u1", "body", 3)
    assert counts.per_shard
    assert np.array_equal(counts.shard_docs, stats.shard_docs)
    assert np.array_equal(counts.local_df, stats.local_df)
    assert dict(counts.local_row) == dict(stats.local_row) and counts.local_row


@pytest.mark.parametrize(
    "damage, words",
    [
        ("checksum", ("checksum differs",)),
        ("zero shards", ("inconsistent", "shard_docs")),
        ("other calibration", ("another calibration",)),
    ],
)
def test_the_shard_counts_read_refuses_what_the_whole_read_refuses(
    tmp_path: Path, damage: str, words: tuple[str, ...]
) -> None:
    stats, sha = small_identifier_stats(), "v"
    if damage == "zero shards":
        stats = IdentifierStats(
            **{
                **stats.__dict__,
                "shard_docs": np.zeros(3, np.int64),
                "local_df": np.zeros_like(stats.local_df),
                "word_id": {},
            }
        )
    path, _ = save_identifier_stats(stats, tmp_path / "x.idents.npz", "v")
    if damage == "checksum":
        parts = members(path.read_bytes())
        df = np.load(io.BytesIO(parts["local_df"])).copy()
        df[0, 0] += 1
        parts["local_df"] = npy(df)
        path.write_bytes(archive(parts))
    if damage == "other calibration":
        sha = "w"
    one_line_error(lambda: load_shard_counts(path, sha), str(path), *words)


# --- random damage: a UsageError or the same content, nothing else ---------------------------


def same_vocabulary(a: Vocabulary, b: Vocabulary) -> bool:
    plain = ("index", "index_uuid", "field", "doc_count", "sum_ttf", "live_docs", "created_at")
    return (
        all(getattr(a, k) == getattr(b, k) for k in plain)
        and np.array_equal(a.hashes, b.hashes)
        and np.array_equal(a.df, b.df)
        and (a.bloom is None) == (b.bloom is None)
        and (a.bloom is None or np.array_equal(a.bloom, b.bloom))
    )


def same_stats(a: IdentifierStats, b: IdentifierStats) -> bool:
    arrays = ("df_engine", "df_split", "mask", "parts_ptr", "parts_idx", "shard_docs", "local_df")
    plain = (
        "index",
        "index_uuid",
        "field",
        "shards",
        "doc_count",
        "split_docs",
        "split_tokens",
        "h_tok",
        "q",
        "split_share",
        "predictor",
        "created_at",
        "words",
        "local_terms",
    )
    return all(getattr(a, k) == getattr(b, k) for k in plain) and all(
        np.array_equal(getattr(a, k), getattr(b, k)) for k in arrays
    )


def flipped(payload: bytes, flips: list[tuple[float, int]]) -> bytes:
    data = bytearray(payload)
    for where, bits in flips:
        data[int(where * len(data)) % len(data)] ^= bits
    return bytes(data)


FLIPS = st.lists(
    st.tuples(st.floats(0, 1, exclude_max=True), st.integers(1, 255)), min_size=1, max_size=3
)
VOCAB_PAYLOAD, VOCAB_SHA = snapshot_payload(small_vocabulary())


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(flips=FLIPS, with_checksum=st.booleans())
def test_random_byte_flips_of_a_snapshot_give_a_usage_error_or_the_same_vocabulary(
    tmp_path: Path, flips: list[tuple[float, int]], with_checksum: bool
) -> None:
    path = tmp_path / "v.npz"
    path.write_bytes(flipped(VOCAB_PAYLOAD, flips))
    try:
        loaded = load_vocabulary(path, VOCAB_SHA if with_checksum else None)
    except UsageError as exc:
        assert "\n" not in str(exc)
        return
    assert same_vocabulary(loaded, small_vocabulary())


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(flips=FLIPS)
def test_random_byte_flips_of_identifier_statistics_give_a_usage_error_or_the_same(
    tmp_path: Path, flips: list[tuple[float, int]]
) -> None:
    original = identifiers_payload(tmp_path)
    path = tmp_path / "y.idents.npz"
    path.write_bytes(flipped(original, flips))
    try:
        loaded = load_identifier_stats(path, "v")
    except UsageError as exc:
        assert "\n" not in str(exc)
        return
    assert same_stats(loaded, small_identifier_stats())


def test_the_unflipped_files_load_identically(tmp_path: Path) -> None:
    """The property tests above compare with these: they must load, and equal."""
    path = tmp_path / "v.npz"
    path.write_bytes(VOCAB_PAYLOAD)
    assert same_vocabulary(load_vocabulary(path, VOCAB_SHA), small_vocabulary())
    assert os.path.getsize(path) == len(VOCAB_PAYLOAD)
    stats_path = tmp_path / "x.idents.npz"
    stats_path.write_bytes(identifiers_payload(tmp_path))
    assert same_stats(load_identifier_stats(stats_path, "v"), small_identifier_stats())


# --- the calibration file that names them ---------------------------------------------------


@pytest.mark.parametrize(
    "text, words",
    [
        ('{"schema": 1, "doc_count": ' + "9" * 5000 + "}", "a number too long to read"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"schema": 1, "doc_count": NaN}', "invalid"),
        ("[1, 2]", "not a JSON object"),
    ],
)
def test_a_calibration_file_that_json_cannot_hold_is_one_line(
    tmp_path: Path, text: str, words: str
) -> None:
    from esqlog.calibration.files import load_calibration

    path = tmp_path / "c.json"
    path.write_text(text)
    one_line_error(lambda: load_calibration(path), str(path), words)
