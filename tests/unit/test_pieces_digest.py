"""The checksum of an identifiers file of format 5 (esqlog.statistics.npz.pieces_digest):
each array's 16 MiB pieces hashed on several cores, then hashed in order. It is the
plain composition it says it is, the same on one thread as on four, changed by any byte
changed or moved, and each file format is checked with its own checksum."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from esqlog.errors import UsageError
from esqlog.identifiers.files import load_identifier_stats, save_identifier_stats
from esqlog.statistics import npz
from esqlog.statistics.npz import array_digest, npz_bytes, pieces_digest
from tests.support.split_docs import build_per_shard

Arrays = dict[str, tuple[str, tuple[int, ...], Any]]


def of(**arrays: np.ndarray) -> Arrays:
    return {k: (a.dtype.str, a.shape, np.ascontiguousarray(a).data) for k, a in arrays.items()}


def reference(arrays: Arrays, piece: int) -> str:
    """The definition, written out serially."""
    top = hashlib.sha256()
    for name in sorted(arrays):
        dtype, shape, data = arrays[name]
        raw = bytes(memoryview(data).cast("B")) if memoryview(data).nbytes else b""
        top.update(f"{name}\0{dtype}\0{shape}\0{len(raw)}\0".encode())
        for at in range(0, len(raw), piece):
            top.update(hashlib.sha256(raw[at : at + piece]).digest())
    return top.hexdigest()


@pytest.fixture
def small_pieces(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(npz, "PIECE_BYTES", 64)  # many pieces from small arrays
    return 64


def sample() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    return {
        "b": rng.integers(0, 2**32, 300, dtype=np.uint32),
        "a": rng.integers(0, 2**62, (40, 3), dtype=np.int64),
        "empty": np.zeros((0, 3), np.uint32),
        "one": np.arange(1, dtype=np.uint8),
    }


def test_it_is_the_hash_of_each_pieces_hash_on_any_number_of_threads(small_pieces: int) -> None:
    arrays = of(**sample())
    expected = reference(arrays, small_pieces)
    assert pieces_digest(arrays, threads=1) == expected
    assert pieces_digest(arrays, threads=4) == expected
    assert expected != array_digest(arrays)  # another checksum than format 4's


def test_a_byte_changed_or_moved_between_arrays_changes_it(small_pieces: int) -> None:
    base = sample()
    first = pieces_digest(of(**base))
    changed = {**base, "b": base["b"].copy()}
    changed["b"][200] ^= 1  # in a later piece
    assert pieces_digest(of(**changed)) != first
    # b's last value moved into the next array with bytes (empty, then one): the
    # concatenated bytes are the same, so a plain SHA-256 of all data would not change
    moved = {
        **base,
        "b": base["b"][:-1],
        "one": np.concatenate([base["b"][-1:].view(np.uint8), base["one"]]),
    }
    assert b"".join(a.tobytes() for _, a in sorted(moved.items())) == b"".join(
        a.tobytes() for _, a in sorted(base.items())
    )
    assert pieces_digest(of(**moved)) != first


def test_the_same_bytes_in_another_shape_hash_alike_only_with_the_same_header() -> None:
    a = np.arange(12, dtype=np.uint32)
    assert pieces_digest(of(x=a)) == pieces_digest(
        {"x": (a.dtype.str, a.shape, a.view(np.uint8).data)}
    )  # byte view: same bytes
    assert pieces_digest(of(x=a)) != pieces_digest(of(x=a.reshape(3, 4)))


def _forged(path: Path, fmt: str, digest: Any) -> Path:
    """The file's arrays with the metadata's format and checksum replaced."""
    import json

    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    meta = json.loads(bytes(arrays.pop("meta")).decode())
    if fmt != meta["format"]:  # the members the older formats lack
        del arrays["local_row_of_word"]
    if fmt == "esqlog-identifiers/4":
        for key in ("local_word_starts", "local_word_keys", "local_word_order"):
            del arrays[key]
    meta["format"], meta["sha256"] = fmt, digest(of(**arrays))
    path.write_bytes(
        npz_bytes({"meta": np.frombuffer(json.dumps(meta).encode(), np.uint8), **arrays})
    )
    return path


@pytest.mark.parametrize(
    ("fmt", "digest", "loads"),
    [
        ("esqlog-identifiers/6", pieces_digest, True),
        ("esqlog-identifiers/6", array_digest, False),  # format 4's checksum on a format 6 file
        ("esqlog-identifiers/5", pieces_digest, True),
        ("esqlog-identifiers/5", array_digest, False),  # format 4's checksum on a format 5 file
        ("esqlog-identifiers/4", array_digest, True),
        ("esqlog-identifiers/4", pieces_digest, False),
    ],
)
def test_each_format_is_checked_with_its_own_checksum(
    tmp_path: Path, small_pieces: int, fmt: str, digest: Any, loads: bool
) -> None:
    stats = build_per_shard()
    path, _ = save_identifier_stats(stats, tmp_path / "x.idents.npz", "v")
    path = _forged(path, fmt, digest)
    if loads:
        assert list(load_identifier_stats(path, "v").words) == list(stats.words)
        return
    with pytest.raises(UsageError) as info:
        load_identifier_stats(path, "v")
    assert "checksum differs" in str(info.value) and "\n" not in str(info.value)


def test_a_byte_damaged_in_a_later_piece_of_a_saved_file_is_refused(
    tmp_path: Path, small_pieces: int
) -> None:
    stats = build_per_shard()
    path, _ = save_identifier_stats(stats, tmp_path / "x.idents.npz", "v")
    assert list(load_identifier_stats(path, "v").words) == list(stats.words)
    data = bytearray(path.read_bytes())
    at = data.index(b"\nsocket") + 3  # inside the words, past their first 64-byte piece
    data[at] ^= 0x01
    path.write_bytes(bytes(data))
    with pytest.raises(UsageError, match=r"checksum differs|damaged"):  # or its CRC-32
        load_identifier_stats(path, "v")
