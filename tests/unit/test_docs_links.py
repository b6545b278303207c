"""Every relative link in the project's Markdown points to a file that exists.

README.md is the front door and BENCHMARKS.md the report; both hand the reader on to
docs/. A page renamed or a data file moved without its links leaves the reader at a dead
end, so every Markdown file of the repository is checked here (links inside fenced code
blocks are code, not links).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SKIP = {".git", ".venv", "node_modules", "build", "dist"}
#: [text](target) and ![alt](target); the target ends at a space (a title) or the paren.
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)


def markdown_files() -> list[Path]:
    return sorted(
        p
        for p in ROOT.rglob("*.md")
        if not SKIP & set(p.relative_to(ROOT).parts) and ".egg-info" not in str(p)
    )


def relative_links(path: Path) -> list[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    text = re.sub(r"`[^`\n]*`", "", text)  # inline code
    return [
        t
        for t in LINK.findall(text)
        if not re.match(r"^[a-z][a-z0-9+.-]*:", t, re.I) and not t.startswith("#")
    ]


def test_the_front_door_and_the_report_are_checked() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in markdown_files()}
    assert {"README.md", "BENCHMARKS.md"} <= names


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_exists(path: Path) -> None:
    missing = [
        target
        for target in relative_links(path)
        if not (path.parent / target.split("#", 1)[0]).exists()
    ]
    assert not missing, f"{path.relative_to(ROOT)} links to missing files: {missing}"
