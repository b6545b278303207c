"""esqlog index reads exactly the files it listed: a file swapped for a symlink, a FIFO or
another file between the listing and the read is skipped (and counted), never followed or
blocked on; FIFOs and sockets are counted; an ignore file is counted once; agent
configuration is skipped and agent instructions kept."""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path

from esqlog.indexing.walk import (
    AGENT_CONFIG,
    CHANGED,
    IGNORE_FILE_SKIPPED,
    NOT_REGULAR,
    SourceFile,
    WalkOptions,
    WalkReport,
    list_files,
    read_files,
)


def _read_after(root: Path, swap: object) -> tuple[list[SourceFile], WalkReport]:
    """List, call ``swap()``, then read (in a thread: a blocking open must fail the test,
    not hang it)."""
    report, options = WalkReport(), WalkOptions()
    files = list_files(root, options, report)
    swap()  # type: ignore[operator]
    done: list[list[SourceFile]] = []
    worker = threading.Thread(
        target=lambda: done.append(list(read_files(files, options, report))), daemon=True
    )
    worker.start()
    worker.join(30)
    assert done, "reading the listed files blocked"
    return done[0], report


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text("def a():\n    return 1\n")
    (root / "b.py").write_text("def b():\n    return 2\n")
    return root


def test_a_file_swapped_for_a_symlink_is_not_followed(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("password = hunter2\n")

    def swap() -> None:
        os.remove(root / "b.py")
        os.symlink(secret, root / "b.py")

    read, report = _read_after(root, swap)
    assert [f.path for f in read] == ["a.py"]
    assert all("hunter2" not in f.text for f in read)
    assert report.skipped_paths[CHANGED] == ["b.py"]


def test_a_file_swapped_for_a_fifo_does_not_block(tmp_path: Path) -> None:
    root = _tree(tmp_path)

    def swap() -> None:
        os.remove(root / "a.py")
        os.mkfifo(root / "a.py")

    read, report = _read_after(root, swap)
    assert [f.path for f in read] == ["b.py"]
    assert report.skipped_paths[CHANGED] == ["a.py"]


def test_a_file_replaced_by_another_is_not_read_as_the_listed_one(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    outside = tmp_path / "other.py"
    outside.write_text("def other():\n    pass\n")

    def swap() -> None:  # another file renamed over the listed one
        os.rename(root / "a.py", tmp_path / "moved.py")
        os.rename(outside, root / "a.py")

    read, report = _read_after(root, swap)
    assert [f.path for f in read] == ["b.py"]
    assert report.skipped_paths[CHANGED] == ["a.py"]


def test_fifos_and_sockets_are_counted_as_skipped(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    os.mkfifo(root / "pipe")
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(root / "sock"))
        read, report = _read_after(root, lambda: None)
    finally:
        server.close()
    assert [f.path for f in read] == ["a.py", "b.py"]
    assert report.skipped_paths[NOT_REGULAR] == ["pipe", "sock"]


def test_an_unreadable_ignore_file_is_counted_once(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    (root / "a").mkdir()
    (root / "a" / "c.py").write_text("x = 1\n")
    os.symlink(tmp_path / "nowhere", root / "a" / ".gitignore")
    os.mkfifo(root / ".gitignore")
    _, report = _read_after(root, lambda: None)
    counted = [(reason, p) for reason, paths in report.skipped_paths.items() for p in paths]
    assert sorted(counted) == [
        (IGNORE_FILE_SKIPPED, ".gitignore"),
        (IGNORE_FILE_SKIPPED, "a/.gitignore"),
    ]
    assert sum(report.skipped.values()) == 2


def test_agent_configuration_is_skipped_and_agent_instructions_kept(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    configs = [
        ".mcp.json",
        ".cursor/mcp.json",
        ".claude/settings.json",
        ".codex/config.toml",
        ".gemini/settings.json",
        ".vscode/mcp.json",
        ".cursorrules",
    ]
    for name in [*configs, "AGENTS.md", "CLAUDE.md", ".vscode/settings.json"]:
        (root / name).parent.mkdir(exist_ok=True)
        (root / name).write_text('{"mcpServers": {"x": {"env": {"TOKEN": "t0ken"}}}}\n')
    read, report = _read_after(root, lambda: None)
    assert {f.path for f in read} == {
        "a.py",
        "b.py",
        "AGENTS.md",
        "CLAUDE.md",
        ".vscode/settings.json",
    }
    assert sorted(report.skipped_paths[AGENT_CONFIG]) == sorted(
        [".mcp.json", ".cursor", ".claude", ".codex", ".gemini", ".vscode/mcp.json", ".cursorrules"]
    )
