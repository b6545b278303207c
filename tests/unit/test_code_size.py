"""Sizes a newcomer can read: no function over 100 lines, no module over 450 (the layout's
~400 with a margin), measured from the source so a long function fails here, not in review."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "esqlog"
MAX_FUNCTION_LINES = 100
MAX_MODULE_LINES = 450


def test_no_function_is_over_100_lines() -> None:
    long = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(PACKAGE)}:{node.name} ({lines})")
    assert long == []


def test_no_module_is_over_450_lines() -> None:
    long = [
        f"{p.relative_to(PACKAGE)} ({n})"
        for p in PACKAGE.rglob("*.py")
        if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES
    ]
    assert long == []
