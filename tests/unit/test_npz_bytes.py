"""The .npz files esqlog writes are the same bytes for the same arrays (esqlog.statistics.npz):
their checksums name them and bind them together, so reproducible statistics need it."""

from __future__ import annotations

import time
import zipfile
from io import BytesIO
from pathlib import Path

import numpy as np

from esqlog.statistics.npz import FIXED_DATE_TIME, Member, npz_bytes, read_npz


def test_the_same_arrays_give_the_same_bytes_at_another_time(tmp_path: Path) -> None:
    arrays = {
        "meta": np.frombuffer(b'{"a": 1}', dtype=np.uint8),
        "df": np.arange(5, dtype=np.uint32),
    }
    first = npz_bytes(arrays)
    time.sleep(2.1)  # zip dates have a two-second resolution
    assert npz_bytes(arrays) == first
    with zipfile.ZipFile(BytesIO(first)) as archive:
        assert [i.date_time for i in archive.infolist()] == [FIXED_DATE_TIME] * 2
    path = tmp_path / "x.npz"
    path.write_bytes(first)
    with np.load(path) as loaded:  # what numpy reads, and esqlog's own checked reader
        assert np.array_equal(loaded["df"], arrays["df"])
    raw = read_npz(
        path,
        1 << 20,
        "test file",
        "rewrite it",
        {"meta": Member(("|u1",), 1), "df": Member(("<u4",), 1)},
    )
    assert raw["df"].array().tolist() == [0, 1, 2, 3, 4]
