"""Cutting a large file takes memory bounded by the parse window, not 30-40x the file: a
file over WHOLE_PARSE_BYTES is parsed a window at a time, with the same chunks as one
whole parse (real code: the standard library's modules, and Go's own sources)."""

from __future__ import annotations

import sysconfig
import tracemalloc
from pathlib import Path

import pytest

import esqlog.indexing.chunk as chunk_module
from esqlog.indexing.chunk import Chunk, chunk_text

GO_TABLE = Path("/usr/share/go-1.19/src/cmd/compile/internal/ssa/opGen.go")


def stdlib_code(size: int) -> str:
    """``size`` bytes of real Python: the standard library's modules, tests aside."""
    parts, total = [], 0
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).rglob("*.py")):
        if "test" in path.parts or "tests" in path.parts:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        parts.append(text if text.endswith("\n") else text + "\n")
        total += len(text)
        if total >= size:
            break
    text = "".join(parts)
    return text[: text.rfind("\n", 0, size) + 1]


def _whole(text: str, language: str, monkeypatch: pytest.MonkeyPatch) -> list[Chunk]:
    with monkeypatch.context() as patched:
        patched.setattr(chunk_module, "WHOLE_PARSE_BYTES", 1 << 40)
        return chunk_text(text, language)


def test_a_4_mb_file_is_cut_within_a_bounded_memory() -> None:
    text = stdlib_code(4_000_000)
    tracemalloc.start()
    try:
        chunks = chunk_text(text, "python")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(chunks) > 5000
    # one parse of the whole file took ~30 bytes per byte (tree-sitter allocates through
    # Python's allocator, so its tree is counted here)
    assert peak < 12 * len(text), peak / len(text)


def test_windows_give_the_chunks_of_one_whole_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    text = stdlib_code(3_000_000)
    assert len(text.encode()) > 2 * chunk_module.WHOLE_PARSE_BYTES
    assert chunk_text(text, "python") == _whole(text, "python", monkeypatch)


@pytest.mark.skipif(not GO_TABLE.exists(), reason="needs golang-1.19-src (Debian)")
def test_a_statement_longer_than_a_window_is_not_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    """opGen.go holds a 980 KB table literal: windows grow over it, and the methods after
    it are found as in one whole parse."""
    monkeypatch.setattr(chunk_module, "WHOLE_PARSE_BYTES", 256 << 10)
    text = GO_TABLE.read_text()
    windowed = chunk_text(text, "go")
    assert windowed == _whole(text, "go", monkeypatch)
    assert "Op.Asm" in {c.symbol for c in windowed}
