"""After loading identifier statistics the C heap's freed memory is handed back to the
system (esqlog.statistics.heap), so N worker processes do not each keep the checks'
temporaries; where the allocator cannot be asked (not glibc) nothing fails."""

from __future__ import annotations

from pathlib import Path

import pytest

from esqlog.identifiers import files
from esqlog.identifiers.files import load_identifier_stats, save_identifier_stats
from esqlog.statistics import heap
from tests.support.split_docs import build_per_shard


def test_loading_the_statistics_returns_the_freed_heap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, _ = save_identifier_stats(build_per_shard(), tmp_path / "x.idents.npz", "v")
    calls: list[bool] = []
    real = heap.release_freed_memory
    monkeypatch.setattr(files, "release_freed_memory", lambda: calls.append(real()) or True)
    load_identifier_stats(path, "v")
    assert len(calls) == 1


def test_without_a_trimmable_allocator_it_does_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heap, "_libc", lambda: None)
    assert heap.release_freed_memory() is False


@pytest.mark.skipif(heap._libc() is None, reason="not glibc")
def test_glibc_is_asked() -> None:
    assert heap.release_freed_memory() is True
