"""Optional dependencies: which command needs which extra, checked before any work starts.

Why: ``pip install esqlog`` keeps the runtime small (the wrapper needs only the clients and
numpy), so the evaluation commands' libraries live in the ``eval`` extra. A command that
needs them says so in one line, naming the extra to install, instead of failing halfway
with a ModuleNotFoundError.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence

from esqlog.errors import ClusterError, UsageError

#: the modules of the ``eval`` extra that ``esqlog eval`` and ``esqlog demo`` import
EVAL_MODULES = ("ir_measures", "scipy", "matplotlib", "yaml")


def missing_modules(modules: Sequence[str]) -> list[str]:
    """The modules of ``modules`` that cannot be imported here."""
    return [m for m in modules if importlib.util.find_spec(m) is None]


def require_extra(command: str, extra: str, modules: Sequence[str]) -> None:
    """UsageError naming the extra when any of ``modules`` is not installed."""
    missing = missing_modules(modules)
    if missing:
        raise UsageError(
            f"esqlog {command} needs {', '.join(missing)} (not in a plain install)",
            f"install the {extra} extra: pip install 'esqlog[{extra}]'",
        )


def client_too_new() -> ClusterError:
    """An elasticsearch-py newer than the server (9.x against 8.x) sends a compatible-with
    header the server refuses on every request; the fix is the client of the server's major
    (the ``es8`` / ``es9`` extras pin it)."""
    from importlib.metadata import version

    return ClusterError(
        f"the installed elasticsearch client {version('elasticsearch')} is too new for this "
        "server (it refuses the client's compatible-with header)",
        "install the client of the server's major, for Elasticsearch 8: pip install 'esqlog[es8]'",
    )
