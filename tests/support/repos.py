"""Shared by several test modules (from tests/test_index_engine.py):
no test module imports another."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.support.sources import GO, JAVA

PACKAGE = Path(__file__).resolve().parents[2] / "esqlog"


def make_repo(root: Path) -> Path:
    """A small repository: Python, Go, Java, Markdown, plus what must be skipped."""
    root.mkdir(parents=True, exist_ok=True)
    for source in ("scoring/qlog.py", "errors.py", "atomic.py"):
        shutil.copy(PACKAGE / source, root / Path(source).name)
    (root / "go").mkdir()
    (root / "go" / "builder.go").write_text(GO, encoding="utf-8")
    (root / "go" / "other.go").write_text(
        "package strings\n\nfunc Other() int { return 2 }\n", encoding="utf-8"
    )
    (root / "OrderService.java").write_text(JAVA, encoding="utf-8")
    (root / "README.md").write_text("# Demo\n\nA demo repository.\n", encoding="utf-8")
    (root / ".gitignore").write_text("*.log\n", encoding="utf-8")
    (root / "run.log").write_text("ignored\n", encoding="utf-8")
    (root / "vendor").mkdir()
    (root / "vendor" / "dep.go").write_text("package dep\n", encoding="utf-8")
    (root / "image.bin").write_bytes(b"\x00\x01\x02")
    return root
