"""esqlog: q-log IDF for BM25 code search on Elasticsearch and OpenSearch, without reindexing.

The change in an application::

    import esqlog
    calibration = esqlog.calibrate(client, "code", "content", out="code.qlog.json")  # once
    client = esqlog.wrap(client, calibration)        # or esqlog.wrap(client, "code.qlog.json")

``__all__`` below is the whole public API (docs/api.md shows each name with an example);
everything else is internal and may change. The names are loaded on first use, so ``import
esqlog`` and the CLI's start-up import neither numpy nor a client package. Type checkers
read the imports under TYPE_CHECKING, so ``esqlog.wrap(Elasticsearch(...), cal)`` is typed
as the Elasticsearch it returns.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from esqlog.version import __version__

if TYPE_CHECKING:
    from esqlog.calibration.files import load_calibration as load_calibration
    from esqlog.calibration.record import Calibration as Calibration
    from esqlog.errors import ClusterError as ClusterError
    from esqlog.errors import EsqlogError as EsqlogError
    from esqlog.errors import UsageError as UsageError
    from esqlog.identifiers.settings import IdentifierSettings as IdentifierSettings
    from esqlog.wrapper.calibrate import calibrate as calibrate
    from esqlog.wrapper.client import wrap as wrap
    from esqlog.wrapper.options import RerankWhere as RerankWhere
    from esqlog.wrapper.options import SearchMode as SearchMode
    from esqlog.wrapper.options import StatsSource as StatsSource
    from esqlog.wrapper.scripting import ScriptingUnavailable as ScriptingUnavailable

#: public name -> the module that defines it (imported on first access)
_HOMES = {
    "wrap": "esqlog.wrapper.client",
    "calibrate": "esqlog.wrapper.calibrate",
    "load_calibration": "esqlog.calibration.files",
    "Calibration": "esqlog.calibration.record",
    "IdentifierSettings": "esqlog.identifiers.settings",
    "SearchMode": "esqlog.wrapper.options",
    "StatsSource": "esqlog.wrapper.options",
    "RerankWhere": "esqlog.wrapper.options",
    "EsqlogError": "esqlog.errors",
    "UsageError": "esqlog.errors",
    "ClusterError": "esqlog.errors",
    "ScriptingUnavailable": "esqlog.wrapper.scripting",
}

__all__ = [
    "Calibration",
    "ClusterError",
    "EsqlogError",
    "IdentifierSettings",
    "RerankWhere",
    "ScriptingUnavailable",
    "SearchMode",
    "StatsSource",
    "UsageError",
    "__version__",
    "calibrate",
    "load_calibration",
    "wrap",
]


def __getattr__(name: str) -> Any:
    """Lazy exports: each public name is imported from its home module on first access."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'esqlog' has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value  # later accesses skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
