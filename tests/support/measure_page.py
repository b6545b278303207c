"""The command blocks of docs/evaluation.md, "Measure on your own data": read from the page
itself, so that the check of their shape (tests/unit) and their run on real nodes
(tests/engine) test the same text."""

from __future__ import annotations

import re
from pathlib import Path

PAGE = Path(__file__).resolve().parents[2] / "docs" / "evaluation.md"


def measure_blocks() -> list[str]:
    """The page's ```bash blocks, in order."""
    text = PAGE.read_text(encoding="utf-8")
    return re.findall(r"```bash\n(.*?)```", text, re.S)
