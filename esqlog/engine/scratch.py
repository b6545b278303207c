"""Scratch indices: the only indices an esqlog command creates, replaces and deletes.

Why a marker: ``esqlog demo --index X`` and the benchmarks replace their index on every
run, and a name is a poor proof of ownership (``name-*`` matches others' indices, and on
OpenSearch ``action.destructive_requires_name`` is off by default, so a pattern deletes
them all). An index esqlog creates carries ``_meta.esqlog`` in its mapping, naming the
command that made it; an index is replaced or deleted only when

* the name is exactly one index (no pattern, no alias: the answer names that same index),
* and its mapping carries that marker.

Anything else is refused with one line naming the index, before any write.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from esqlog.engine.client import Engine
from esqlog.engine.failures import error_status
from esqlog.engine.paths import index_path
from esqlog.engine.steps import Plan, Request
from esqlog.errors import UsageError

MARKER_KEY = "esqlog"
#: what the bench-beir scratch indices carried before the marker had its own key
_LEGACY_CREATORS = frozenset({"esqlog bench-beir"})


def scratch_marker(command: str) -> dict[str, Any]:
    """The ``_meta`` of a scratch index that ``esqlog <command>`` creates."""
    return {MARKER_KEY: {"created_by": f"esqlog {command}", "scratch": True}}


def is_scratch(meta: Any) -> bool:
    """Whether a mapping's ``_meta`` says an esqlog command created the index to replace."""
    if not isinstance(meta, dict):
        return False
    own = meta.get(MARKER_KEY)
    if isinstance(own, dict) and own.get("scratch") is True:
        return True
    return meta.get("created_by") in _LEGACY_CREATORS and meta.get("scratch") is True


def own_mappings_plan(index: str, fix: str) -> Plan[dict[str, Any] | None]:
    """The mappings of the one index named ``index``; None when there is none.

    Raises UsageError (naming ``fix``) when the name is an alias or matches several indices:
    what esqlog may write or delete is decided on one index's own ``_meta``, never a
    pattern's."""
    try:
        found = yield Request("GET", index_path(index, "_mapping"))
    except Exception as exc:
        if error_status(exc) == 404:
            return None
        raise
    if not isinstance(found, Mapping) or not found:
        return None
    if list(found) != [index]:
        raise UsageError(
            f"{index!r} names {', '.join(sorted(found)[:3])} (an alias or "
            "several indices), not an index esqlog created",
            fix,
        )
    return dict((found[index] or {}).get("mappings") or {})


def own_mappings(engine: Engine, index: str) -> dict[str, Any] | None:
    """own_mappings_plan on ``engine``, for a command that creates the index itself."""
    return engine.run(own_mappings_plan(index, "pass the name of a new index (esqlog creates it)"))


def scratch_state(engine: Engine, index: str) -> bool | None:
    """None when ``index`` does not exist, True when it is esqlog's scratch index.

    Raises UsageError when it exists and is not one (another's index, an alias, or a
    name that matches several), so that no caller can go on to write or delete it.
    """
    mappings = own_mappings(engine, index)
    if mappings is None:
        return None
    if not is_scratch(mappings.get("_meta")):
        raise UsageError(
            f"index {index!r} exists and esqlog did not create it; esqlog "
            "replaces and deletes only its own scratch indices",
            "pass a new --index name (esqlog creates it), or delete that index yourself",
        )
    return True


def delete_scratch(engine: Engine, index: str) -> bool:
    """Delete ``index`` if it is esqlog's scratch index; False when it does not exist."""
    if scratch_state(engine, index) is None:
        return False
    try:
        engine.perform(Request("DELETE", index_path(index)))
    except Exception as exc:
        if error_status(exc) != 404:  # gone meanwhile is what was asked
            raise
    return True


def create_scratch(
    engine: Engine,
    index: str,
    command: str,
    settings: dict[str, Any],
    properties: dict[str, Any],
    replace: bool,
) -> bool:
    """Create the scratch index (replacing esqlog's own when ``replace``); True if replaced.

    Without ``replace`` an existing scratch index is an error too: a run that would add
    documents to a previous run's index says so instead of mixing them.
    """
    replaced = False
    if scratch_state(engine, index):
        if not replace:
            raise UsageError(
                f"scratch index {index!r} exists", "pass another --index name, or delete it first"
            )
        replaced = delete_scratch(engine, index)
    body = {
        "settings": settings,
        "mappings": {"_meta": scratch_marker(command), "properties": properties},
    }
    engine.perform(Request("PUT", index_path(index), body=body))
    return replaced
