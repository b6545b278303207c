"""The backup of an index's similarity settings, kept in esqlog's own index.

Why a module of its own: ``esqlog similarity apply`` changes a user's index, and the promise
that it is undoable rests on this document alone. The previous ``index.similarity.*``
settings (or their absence) are saved, one document per index UUID, in
``esqlog-similarity-backups`` before anything changes, and ``revert`` restores exactly them.
The backup index is esqlog's own (esqlog.engine.state_index): one of that name esqlog did not
make is neither read (its settings would be applied) nor written. esqlog.scoring.similarity
drives apply and revert.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from esqlog.engine.failures import error_status
from esqlog.engine.paths import index_path
from esqlog.engine.state_index import check_state_index_plan, ensure_state_index_plan
from esqlog.engine.steps import Plan, Request
from esqlog.errors import ClusterError
from esqlog.version import __version__

BACKUP_INDEX = "esqlog-similarity-backups"
_BACKUPS, _APPLY = "similarity backups", "similarity apply"  # the state, its command
_BACKUP_PROPERTIES = {
    "index": {"type": "keyword"},
    "index_uuid": {"type": "keyword"},
    "saved_at": {"type": "date"},
}


def _backup_path(index_uuid: str) -> str:
    return index_path(BACKUP_INDEX, "_doc", index_uuid)


def load_backup_plan(index_uuid: str) -> Plan[dict[str, str] | None]:
    """The saved ``index.similarity.*`` settings of an index, or None when none is saved;
    never from a backup index esqlog did not make (its settings would be applied)."""
    if not (yield from check_state_index_plan(BACKUP_INDEX, _BACKUPS, _APPLY, _legacy_backups)):
        return None
    try:
        body = yield Request("GET", _backup_path(index_uuid))
    except Exception as exc:
        if error_status(exc) == 404:
            return None
        raise
    if not body.get("found"):
        return None
    source = body.get("_source") or {}
    saved = json.loads(str(source.get("similarity_json", "{}")))
    if not isinstance(saved, dict):
        raise ClusterError(
            f"the backup {BACKUP_INDEX}/{index_uuid} is corrupt", "restore index.similarity by hand"
        )
    return {str(k): str(v) for k, v in saved.items()}


def save_backup_plan(
    index: str, index_uuid: str, similarity: Mapping[str, str], applied: Mapping[str, float]
) -> Plan[None]:
    """Store the current settings as JSON text, so no mapping can reinterpret the keys."""
    yield from ensure_backup_index_plan()
    yield Request(
        "PUT",
        _backup_path(index_uuid),
        {"refresh": "true"},
        {
            "index": index,
            "index_uuid": index_uuid,
            "similarity_json": json.dumps(dict(similarity), sort_keys=True),
            "applied": dict(applied),
            "saved_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "esqlog_version": __version__,
        },
    )


def ensure_backup_index_plan(index: str = BACKUP_INDEX) -> Plan[None]:
    """The backup index, made and marked by esqlog (esqlog.engine.state_index); one of
    that name esqlog did not make, or an alias, is refused before any write."""
    yield from ensure_state_index_plan(
        index,
        _BACKUPS,
        _APPLY,
        {
            "settings": {"number_of_shards": 1, "auto_expand_replicas": "0-1"},
            "mappings": {"dynamic": False, "properties": _BACKUP_PROPERTIES},
        },
        legacy=_legacy_backups,
    )


def _legacy_backups(mappings: Mapping[str, Any]) -> bool:
    """The mapping earlier esqlog versions gave the backup index, exactly."""
    return (
        str(mappings.get("dynamic")).lower() == "false"
        and mappings.get("properties") == _BACKUP_PROPERTIES
    )


def delete_backup_plan(index_uuid: str) -> Plan[None]:
    """Drop an index's backup once it is restored (or was never needed); one already gone
    is not an error, since the outcome the caller wants holds."""
    try:
        yield Request("DELETE", _backup_path(index_uuid), {"refresh": "true"})
    except Exception as exc:
        if error_status(exc) != 404:
            raise
