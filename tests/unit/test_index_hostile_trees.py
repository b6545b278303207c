"""esqlog index's walk and cutter on hostile trees: names that are not UTF-8, ignore files
that are devices, FIFOs or symlinks, folders nested past the recursion limit, giant lines,
a BOM, and .gitignore negations compared with git itself."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from esqlog.agent.chunks import source_lines
from esqlog.agent.reading import whole_lines
from esqlog.indexing.chunk import ChunkLimits, chunk_text
from esqlog.indexing.walk import (
    IGNORE_FILE_SKIPPED,
    UNDECODABLE,
    WalkOptions,
    WalkReport,
    list_files,
    read_files,
)


def _kept(root: Path) -> tuple[list[str], WalkReport]:
    report, options = WalkReport(), WalkOptions()
    files = list_files(root, options, report)
    return [f.path for f in read_files(files, options, report)], report


def test_a_name_that_is_not_utf8_is_skipped_and_shown_safely(tmp_path: Path) -> None:
    root = os.fsencode(tmp_path)
    Path(os.fsdecode(root + b"/bad\xff.py")).write_text("x = 1\n")
    os.mkdir(root + b"/dir\xfe")
    Path(os.fsdecode(root + b"/dir\xfe/inner.py")).write_text("y = 2\n")
    (tmp_path / "ok.py").write_text("z = 3\n")
    kept, report = _kept(tmp_path)
    assert kept == ["ok.py"]
    assert report.skipped_paths[UNDECODABLE] == ["bad\\xff.py", "dir\\xfe"]
    for shown in report.skipped_paths[UNDECODABLE]:
        shown.encode("utf-8")  # printable and JSON-safe: no lone surrogate left


def test_ignore_files_that_are_not_regular_files_are_not_read(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "big").mkdir()
    os.symlink("/dev/zero", tmp_path / ".gitignore")
    os.mkfifo(tmp_path / "sub" / ".gitignore")
    (tmp_path / "big" / ".gitignore").write_text("*.py\n" + "#" * (2 << 20) + "\n")
    for folder in ("sub", "big"):
        (tmp_path / folder / "a.py").write_text("x = 1\n")
    done: list[tuple[list[str], WalkReport]] = []
    worker = threading.Thread(target=lambda: done.append(_kept(tmp_path)), daemon=True)
    worker.start()
    worker.join(20)
    assert done, "the walk hung (a FIFO .gitignore opened for reading blocks)"
    kept, report = done[0]
    assert kept == ["big/a.py", "sub/a.py"]  # the over-large file's *.py did not apply
    assert sorted(report.skipped_paths[IGNORE_FILE_SKIPPED]) == [
        ".gitignore",
        "big/.gitignore",
        "sub/.gitignore",
    ]


def test_folders_nested_past_the_recursion_limit(tmp_path: Path) -> None:
    folder = str(tmp_path)
    for _ in range(1100):
        folder += "/d"
        os.mkdir(folder)
    Path(folder, "deep.txt").write_text("deep text\n")
    try:
        kept, _ = _kept(tmp_path)
    finally:  # innermost first: pytest's own cleanup (shutil.rmtree) recurses and fails
        os.remove(Path(folder, "deep.txt"))
        while folder != str(tmp_path):
            os.rmdir(folder)
            folder = os.path.dirname(folder)
    assert kept == ["d/" * 1100 + "deep.txt"]


def test_a_leading_bom_is_not_indexed_and_lines_keep_their_numbers(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(b"\xef\xbb\xbfdef f():\n    return 1\n")
    report, options = WalkReport(), WalkOptions()
    (source,) = read_files(list_files(tmp_path, options, report), options, report)
    assert source.text == "def f():\n    return 1\n"
    (chunk,) = chunk_text(source.text, "python")
    assert (chunk.start_line, chunk.end_line, chunk.symbol) == (1, 2, "f")


@pytest.mark.parametrize("language", ["text", "python"])
def test_no_chunk_exceeds_max_chars_even_with_one_giant_line(language: str) -> None:
    line = "x = '" + "ab " * 300_000 + "'"
    text = "def f():\n    pass\n" + line + "\n" + "\n" * 1800 + "y = 1\n"
    limits = ChunkLimits(max_lines=150, max_chars=12_000)
    chunks = chunk_text(text, language, limits)
    assert max(len(c.content) for c in chunks) <= 12_000
    assert "".join(c.content for c in chunks).rstrip("\n") == text.rstrip("\n")
    giant = [c for c in chunks if c.start_line == 3 and c.end_line == 3]
    assert len(giant) >= len(line) // 12_000


def test_the_parts_of_a_cut_line_read_back_as_one_line() -> None:
    """read_code(path=...) numbers the lines of a file's documents: the parts of a cut
    line must come back as that one line, whatever order the engine returns them in."""
    text = "def f():\n    return 1\n" + "word " * 900 + "\nend = 2\n"
    chunks = chunk_text(text, "python", ChunkLimits(max_lines=150, max_chars=500))
    assert len(chunks) > 9
    hits = [
        {
            "_id": str(n),
            "_source": {
                "content": c.content,
                "path": "a.py",
                "start_line": c.start_line,
                "chunk": n,
            },
        }
        for n, c in enumerate(chunks)
    ]
    read = whole_lines(list(reversed(hits)), "content")
    numbered = [
        (n, line) for c in read for n, line in enumerate(source_lines(c.text), start=c.start_line)
    ]
    assert numbered == list(enumerate(source_lines(text), start=1))


NEGATIONS = {
    "a/**\n!a/b/\n!a/b/ok.txt\n": ["a/c.txt", "a/b/ok.txt", "a/b/no.txt", "a/b/c/d.txt"],
    "a/\n!a/keep.txt\n": ["a/keep.txt", "x/a/y.txt", "top.txt"],
    "*.log\n!keep.log\nlogs/\n!logs/x.log\n": ["keep.log", "z.log", "logs/x.log", "s/keep.log"],
    "/*\n!/src/\n/src/*\n!/src/main/\n": ["README", "src/a.txt", "src/main/b.txt"],
    "build\n!build/keep\n": ["build/keep", "build/other", "s/build"],
    "**/tmp/**\n!**/tmp/**/\n!**/tmp/**/*.md\n": ["tmp/a.md", "tmp/a.txt", "x/tmp/y/b.md"],
    "doc/*.txt\n!doc/*/\ndoc/**/*.pdf\n": ["doc/a.txt", "doc/n/b.txt", "doc/n/c.pdf"],
}


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
@pytest.mark.parametrize("rules", list(NEGATIONS))
def test_gitignore_negations_agree_with_git(tmp_path: Path, rules: str) -> None:
    """The truth is git's own list of untracked files it does not ignore (ls-files
    --others --exclude-standard: it walks as esqlog does, where check-ignore judges one
    path without its parent folders); check-ignore --stdin must agree on the rest."""
    (tmp_path / ".gitignore").write_text(rules)
    for rel in NEGATIONS[rules]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(f"text of {rel}\n")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    listed = subprocess.run(
        ["git", "ls-files", "--others", "--exclude-standard"],
        cwd=tmp_path,
        check=True,
        capture_output=True,
        text=True,
    )
    kept, _ = _kept(tmp_path)
    assert kept == sorted(listed.stdout.split())
    dropped = sorted(set(NEGATIONS[rules]) - set(kept))
    checked = subprocess.run(
        ["git", "check-ignore", "--stdin"],
        cwd=tmp_path,
        input="\n".join(kept + dropped) + "\n",
        capture_output=True,
        text=True,
    )
    assert not set(checked.stdout.split()) & set(kept)
