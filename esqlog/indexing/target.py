"""The one index ``esqlog index`` writes to: created with a marker, or refused.

Why so strict: the command deletes documents (of files removed from the repository), so
pointed at the wrong index by a typo it could delete someone's data. It writes only to
the index the user names, and:

* creates it when it does not exist (``standard`` analyzer, the mapping below, a marker
  in the mapping's ``_meta`` naming esqlog index and the indexed folder);
* updates it when the marker says esqlog index created it for this same folder;
* refuses any other index (no marker, or another folder) unless ``--adopt`` is passed.
  In an adopted index esqlog index only touches documents that carry its ``file_hash``
  field, first checks that the fields it writes are mapped as it writes them, and adds
  the missing ones to the mapping (``path`` must be a keyword to be read back);
* refuses an alias of several indices, and names esqlog keeps for itself.
"""

from __future__ import annotations

import re
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from esqlog.calibration.cluster_store import CALIBRATION_INDEX
from esqlog.engine.client import Engine
from esqlog.engine.failures import error_status
from esqlog.engine.paths import api_path, index_path
from esqlog.engine.scratch import own_mappings
from esqlog.engine.steps import Request
from esqlog.errors import ClusterError, UsageError

MARKER = "esqlog_index"
FORMAT = 1
TEXT = {"type": "text"}  # the standard analyzer: esqlog ranks what users already have
FIELDS: dict[str, dict[str, Any]] = {
    "path": {"type": "keyword", "fields": {"text": TEXT}},
    "language": {"type": "keyword"},
    "symbol": {"type": "keyword", "fields": {"text": TEXT}},
    "kind": {"type": "keyword"},
    "start_line": {"type": "integer"},
    "end_line": {"type": "integer"},
    "chunk": {"type": "integer"},
    "chunks": {"type": "integer"},
    "file_hash": {"type": "keyword"},
    "content": TEXT,
}
_BAD_NAME = re.compile(r'[\\/*?"<>| ,#:A-Z]')


@dataclass(frozen=True)
class Target:
    """The concrete index to write, and whether esqlog index created it here."""

    name: str
    created: bool  # by this run
    adopted: bool  # existing index without (this folder's) marker, written by --adopt
    marker: dict[str, Any] = field(default_factory=dict)  # as the index holds it


def check_name(index: str) -> None:
    """The engines' index-name rules, said in one line before any request."""
    if (
        not index
        or index in (".", "..")
        or index.startswith(("-", "_", "+", "."))
        or _BAD_NAME.search(index)
        or len(index.encode("utf-8")) > 255
    ):
        raise UsageError(
            f"{index!r} is not a usable index name",
            'pass a lowercase name without spaces or \\/*?"<>|,#: that does '
            "not start with - _ + or ., e.g. --index code-myrepo",
        )
    if index == CALIBRATION_INDEX:
        raise UsageError(
            f"{index} is esqlog's own index for calibrations", "pass another --index name"
        )


def prepare(
    engine: Engine,
    index: str,
    root: str,
    adopt: bool,
    shards: int,
    replicas: int | None,
    instead_of_creating: UsageError | None = None,
) -> Target:
    """Create INDEX, or check that esqlog index may write to it (see the module doc).

    ``instead_of_creating``: raised when INDEX does not exist (there is nothing to put in
    a new one), so that no empty index is left holding the name.
    """
    check_name(index)
    try:
        found = engine.perform(Request("GET", index_path(index)))
    except Exception as exc:
        if error_status(exc) != 404:
            raise
        if instead_of_creating is not None:
            raise instead_of_creating from None
        try:
            created = _create(engine, index, root, shards, replicas)
        except Exception as exc:
            if not _already_exists(exc):
                raise
        else:
            wait_for_primaries(engine, index, shards)
            return created
        # another run created it between our GET and PUT (two first runs at once): it is
        # checked like any existing index, so a run of the same folder goes on updating it
        found = engine.perform(Request("GET", index_path(index)))
    if len(found) != 1:
        raise UsageError(
            f"{index!r} is an alias of {len(found)} indices",
            "pass one index (or an alias of exactly one) as --index",
        )
    ((name, info),) = found.items()
    # Another run may have created it a moment ago (two first runs at once): its
    # primaries may still be starting, and a search of it then answers 503.
    wait_for_primaries(engine, name, _primaries(info))
    mappings = info.get("mappings") or {}
    meta = (mappings.get("_meta") or {}).get(MARKER)
    meta = meta if isinstance(meta, dict) else {}
    ours = meta.get("format") == FORMAT
    if ours and meta.get("root") == root:
        return Target(name, created=False, adopted=False, marker=meta)
    if not adopt:
        if ours:
            raise UsageError(
                f"index {index!r} was built by esqlog index from {meta.get('root')!r}, not "
                f"{root!r}; updating it would delete that folder's documents",
                "pass another --index name, or --adopt if the folder moved",
            )
        raise UsageError(
            f"index {index!r} exists and was not created by esqlog index",
            "pass a new --index name (esqlog index creates it), or --adopt to add this "
            "folder's documents to it (documents without esqlog's file_hash field are "
            "left alone)",
        )
    properties = mappings.get("properties") or {}
    _check_fields(index, properties)
    if ours:  # our own index, the folder moved: record the new folder
        meta = {**meta, **_marker(root)}
        engine.perform(Request("PUT", index_path(name, "_mapping"), body={"_meta": {MARKER: meta}}))
    missing = {f: spec for f, spec in FIELDS.items() if f not in properties}
    if missing:  # mapped as esqlog reads them (path must be a keyword), not left to dynamic
        engine.perform(Request("PUT", index_path(name, "_mapping"), body={"properties": missing}))
    return Target(name, created=False, adopted=not ours, marker=meta if ours else {})


#: how often and how far apart a run looks at a new index's primary shards (20 s at most)
PRIMARIES_CHECKS, PRIMARIES_PAUSE = 100, 0.2


def wait_for_primaries(engine: Engine, name: str, primaries: int) -> None:
    """Return once the ``primaries`` primary shards of ``name`` are active.

    Why: an index is visible to GET before its primaries have started, and a concurrent
    run that found it then searched it and got a 503 (4 runs of 9 with two first runs at
    once). Not ``wait_for_status=yellow``: both engines report a just-created index
    yellow while its primaries are still initializing. Nor the health API's own waits:
    opensearch-py takes their ``timeout`` parameter as its read timeout. One request for
    an index that is already up (every run but the first)."""
    path = api_path("_cluster", "health", name)
    for check in range(PRIMARIES_CHECKS):
        health = engine.perform(Request("GET", path))
        if int((health or {}).get("active_primary_shards", 0)) >= primaries:
            return
        if check + 1 < PRIMARIES_CHECKS:
            time.sleep(PRIMARIES_PAUSE)
    raise ClusterError(
        f"the primary shards of index {name!r} are not active after "
        f"{PRIMARIES_CHECKS * PRIMARIES_PAUSE:.0f} s",
        "check the cluster's health (GET _cluster/health), then run esqlog index again",
    )


def forget_created(engine: Engine, name: str) -> None:
    """Delete the index this same run created (it holds no document): an empty index left
    behind would keep the name for a folder with nothing in it."""
    engine.perform(Request("DELETE", index_path(name)))


def delete_indexed(engine: Engine, index: str) -> bool:
    """Delete an index ``esqlog index`` made (its marker); False when there is none. Any
    other index is refused with one line: the benchmarks drop their index with this."""
    mappings = own_mappings(engine, index)
    if mappings is None:
        return False
    if MARKER not in (mappings.get("_meta") or {}):
        raise UsageError(
            f"index {index!r} was not made by esqlog index; not deleting it",
            "pass another --index name, or delete that index yourself",
        )
    engine.perform(Request("DELETE", index_path(index)))
    return True


def _marker(root: str) -> dict[str, Any]:
    return {"format": FORMAT, "created_by": "esqlog index", "root": root}


def _create(engine: Engine, index: str, root: str, shards: int, replicas: int | None) -> Target:
    settings: dict[str, Any] = {"number_of_shards": shards}
    if replicas is not None:
        settings["number_of_replicas"] = replicas
    body = {
        "settings": settings,
        "mappings": {"dynamic": "strict", "_meta": {MARKER: _marker(root)}, "properties": FIELDS},
    }
    engine.perform(Request("PUT", index_path(index), body=body))
    return Target(index, created=True, adopted=False, marker=_marker(root))


def refresh_to_restore(engine: Engine, target: Target) -> str | None:
    """The refresh interval to put back after the run (None: the engine's default).

    The value in force is recorded in the marker first (only when it changed, so most
    runs write no mapping): a run killed by SIGKILL cannot put it back, and the next run
    then finds ``-1``, which is esqlog's own, and restores the recorded value instead of
    keeping ``-1`` (no refresh ever again) or the engine's default (losing a user's own
    setting). A ``-1`` set on purpose on esqlog's index is therefore not kept; an adopted
    index is never paused at all.
    """
    settings = engine.perform(
        Request("GET", index_path(target.name, "_settings", "index.refresh_interval"))
    )
    current = (
        (settings.get(target.name) or {})
        .get("settings", {})
        .get("index", {})
        .get("refresh_interval")
    )
    recorded = target.marker.get("refresh_interval")
    if str(current) == "-1":
        intended = recorded
    else:
        intended = current
        if intended != recorded:
            marker = {**target.marker, "refresh_interval": intended}
            engine.perform(
                Request(
                    "PUT", index_path(target.name, "_mapping"), body={"_meta": {MARKER: marker}}
                )
            )
    return str(intended) if intended is not None else None


@contextmanager
def refreshes_paused(engine: Engine, target: Target) -> Iterator[None]:
    """Periodic refreshes off (``-1``) for the ``with`` block, and back on however it ends:
    an exception, Ctrl-C, or a SIGTERM (``timeout``, a service manager), which would
    otherwise end the process without running any ``finally`` and leave the index at
    ``-1`` until the next run. (A SIGKILL cannot be caught: the marker covers it.)

    The SIGTERM handler is in place before the pause, and the pause is inside the ``try``:
    a SIGTERM right as the run starts writing (after the pause, before the block) still
    puts the value back."""
    restore = refresh_to_restore(engine, target)
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        engine.perform(
            Request(
                "PUT",
                index_path(target.name, "_settings"),
                body={"index": {"refresh_interval": "-1"}},
            )
        )
        yield
    finally:
        try:
            engine.perform(
                Request(
                    "PUT",
                    index_path(target.name, "_settings"),
                    body={"index": {"refresh_interval": restore}},
                )
            )
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)


def _exit_on_sigterm(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


def _primaries(info: dict[str, Any]) -> int:
    """The number of primary shards in an index's GET answer (1 when it does not say)."""
    index = (info.get("settings") or {}).get("index") or {}
    try:
        return max(1, int(index.get("number_of_shards", 1)))
    except (TypeError, ValueError):
        return 1


def _already_exists(exc: BaseException) -> bool:
    """The engine's answer to creating an index that exists (400
    resource_already_exists_exception on both engines)."""
    info = getattr(exc, "info", None) or getattr(exc, "body", None)
    error = info.get("error") if isinstance(info, dict) else None
    kind = error.get("type") if isinstance(error, dict) else None
    return error_status(exc) == 400 and kind == "resource_already_exists_exception"


def _check_fields(index: str, properties: dict[str, Any]) -> None:
    """An adopted index must map each field esqlog writes as esqlog writes it (or not
    at all: dynamic mapping then adds it)."""
    for name, spec in FIELDS.items():
        have = properties.get(name)
        if isinstance(have, dict) and have.get("type") != spec["type"]:
            raise UsageError(
                f"index {index!r} maps {name} as {have.get('type') or 'an object'}, "
                f"esqlog index writes it as {spec['type']}",
                "pass a new --index name (esqlog index creates it with its own mapping)",
            )
