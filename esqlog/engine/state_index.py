"""esqlog's own state indices (calibrations kept in the cluster, similarity backups):
written only when esqlog made them.

Why a marker: these indices have fixed names (``esqlog-calibrations``,
``esqlog-similarity-backups``), and a fixed name is no proof of ownership. Anyone may have
made an index of that name, or an alias of it pointing at their own index, and a write
through it would land in their data. So, as for scratch indices (esqlog.engine.scratch),
esqlog creates a state index itself with ``_meta.esqlog`` in its mapping naming what it
holds, and before every write checks that

* the name is that one index (no alias: the answer names that same index),
* and its mapping carries the marker for that state.

Anything else is refused with one line before any write. A state index an earlier esqlog
made without the marker is recognised by its mapping (``legacy``) and marked on first use.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from esqlog.engine.failures import error_reason
from esqlog.engine.paths import index_path
from esqlog.engine.scratch import own_mappings_plan
from esqlog.engine.steps import Plan, Request
from esqlog.errors import UsageError

MARKER_KEY = "esqlog"  # the same _meta key as scratch indices (esqlog.engine.scratch)
#: a mapping -> whether an earlier esqlog made it (before state indices carried the marker)
Legacy = Callable[[Mapping[str, Any]], bool]


def state_marker(state: str, command: str) -> dict[str, Any]:
    """The ``_meta`` of the state index holding ``state``, made by ``esqlog <command>``."""
    return {MARKER_KEY: {"created_by": f"esqlog {command}", "state": state}}


def is_state_index(meta: Any, state: str) -> bool:
    """Whether a mapping's ``_meta`` says esqlog made the index to hold ``state``."""
    own = meta.get(MARKER_KEY) if isinstance(meta, Mapping) else None
    return isinstance(own, Mapping) and own.get("state") == state


def ensure_state_index_plan(
    name: str, state: str, command: str, body: Mapping[str, Any], legacy: Legacy | None = None
) -> Plan[None]:
    """Create the state index ``name`` (``body``: its settings and mappings, the marker
    added here), or check that the existing one is esqlog's for ``state``; a UsageError
    naming the index otherwise, before anything is written."""
    if (yield from check_state_index_plan(name, state, command, legacy)):
        return
    created = {
        **body,
        "mappings": {**dict(body.get("mappings") or {}), "_meta": state_marker(state, command)},
    }
    try:
        yield Request("PUT", index_path(name), body=created)
    except Exception as exc:  # another run made it meanwhile: checked as any other
        reason = error_reason(exc)
        if "already_exists" not in reason and "already exists" not in reason:
            raise
        if not (yield from check_state_index_plan(name, state, command, legacy)):
            raise UsageError(
                f"index {name!r} appeared and vanished while esqlog created it",
                "run the command again",
            ) from None


def check_state_index_plan(
    name: str, state: str, command: str, legacy: Legacy | None = None
) -> Plan[bool]:
    """True when ``name`` is esqlog's state index for ``state`` (an earlier esqlog's
    unmarked one is marked now), False when there is no such index; a UsageError when an
    index or alias of that name is another's."""
    mappings = yield from own_mappings_plan(
        name, f"remove the alias {name!r} (esqlog then creates its own index)"
    )
    if mappings is None:
        return False
    if is_state_index(mappings.get("_meta"), state):
        return True
    if legacy is not None and not mappings.get("_meta") and legacy(mappings):
        yield Request(
            "PUT", index_path(name, "_mapping"), body={"_meta": state_marker(state, command)}
        )
        return True
    raise UsageError(
        f"index {name!r} exists and esqlog did not create it; esqlog keeps its "
        f"{state} only in an index it made and marked",
        f"rename or delete that index (esqlog then creates its own {name})",
    )
