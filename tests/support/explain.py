"""Shared by several test modules (from tests/test_stats.py):
no test module imports another."""

from __future__ import annotations

from typing import Any


def explain_n_N(node: dict[str, Any]) -> tuple[int, int] | None:
    desc = node.get("description", "")
    if desc.startswith("idf,"):
        vals = {d["description"][0]: int(d["value"]) for d in node["details"]}
        return vals["n"], vals["N"]
    for child in node.get("details", []):
        found = explain_n_N(child)
        if found:
            return found
    return None
