"""The Painless sources esqlog installs: the q-log term script (script mode) and the scripted
similarity (``esqlog similarity apply``). One copy each, in painless/ at the top of the
repository; the wheel carries that folder as ``esqlog/painless`` (pyproject's package-dir),
so what the cluster runs is what the tests run against."""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

_PROBE = "esqlog-qlog-term.painless"


def painless_folder() -> Traversable:
    """Where the scripts are: painless/ beside the package in a source checkout (editable
    installs and PYTHONPATH runs import esqlog from there), else the installed copy."""
    checkout = Path(__file__).resolve().parents[2] / "painless"
    if (checkout / _PROBE).is_file():
        return checkout
    return resources.files("esqlog") / "painless"


def painless_source(name: str) -> str:
    """A Painless source shipped in painless/ (installed as a stored script)."""
    return (painless_folder() / f"{name}.painless").read_text("utf-8")
