"""esqlog: q-log IDF for BM25 code search on Elasticsearch and OpenSearch, without reindexing.

The two-line change in an application::

    import esqlog
    client = esqlog.wrap(client, "code.qlog.json")

``wrap`` (and the error it may raise) are loaded on first use, so ``import esqlog`` and the
CLI's start-up stay light.
"""

from __future__ import annotations

from typing import Any

from esqlog.version import __version__

__all__ = ["ScriptingUnavailable", "__version__", "wrap"]


def __getattr__(name: str) -> Any:
    """Lazy exports: esqlog.wrap and esqlog.ScriptingUnavailable come from esqlog.wrapper."""
    if name in ("wrap", "ScriptingUnavailable"):
        from esqlog import wrapper

        return getattr(wrapper, name)
    raise AttributeError(f"module 'esqlog' has no attribute {name!r}")
