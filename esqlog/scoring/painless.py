"""The Painless sources esqlog installs: the q-log term script (script mode) and the scripted
similarity (``esqlog similarity apply``). One copy each, read from the package at run time,
so what the cluster runs is what the tests run against."""

from __future__ import annotations

from importlib import resources


def painless_source(name: str) -> str:
    """A Painless source shipped in painless/ (installed as a stored script)."""
    return (resources.files("esqlog") / "painless" / f"{name}.painless").read_text("utf-8")
