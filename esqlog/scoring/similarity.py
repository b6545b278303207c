"""Opt-in, index-wide q-log BM25: a scripted similarity as the index's default, reversibly.

The query-time modes never touch an index. This one does, for users who want every query
(not only esqlog-wrapped ones) scored with q-log IDF: it sets ``index.similarity.default`` to
a scripted similarity running ``painless/esqlog-qlog-bm25-similarity.painless``. Similarity
is a static setting, so the index must be closed for the change: it is unavailable for
searches and writes for those few seconds. Nothing is reindexed: BM25's inputs (term and
field statistics, one-byte length norms) are the same for the scripted similarity.

Every change is undoable: the index's previous ``index.similarity.*`` settings (or their
absence) are saved first in esqlog's own index ``esqlog-similarity-backups`` (one document
per index UUID, esqlog.scoring.similarity_backup), and ``revert`` restores exactly them. A
failure midway re-opens the index and says in one line what state it was left in.

All functions are plans (see :mod:`esqlog.engine.client`); the CLI only drives them.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from esqlog.engine.failures import error_reason
from esqlog.engine.paths import api_path, check_index_name, index_path
from esqlog.engine.steps import Plan, Request
from esqlog.errors import ClusterError, UsageError
from esqlog.scoring.painless import painless_source
from esqlog.scoring.qlog import validate_q
from esqlog.scoring.similarity_backup import (
    BACKUP_INDEX,
    delete_backup_plan,
    load_backup_plan,
    save_backup_plan,
)
from esqlog.statistics.terms import resolve_index_plan

SCRIPT_NAME = "esqlog-qlog-bm25-similarity"
PREFIX = "index.similarity."
DEFAULT_PREFIX = "index.similarity.default."
#: The first line of the shipped source; how esqlog recognises its own similarity.
MARKER = "// esqlog: q-log BM25 as a scripted similarity"
_PARAM = re.compile(r"\bparams\.([A-Za-z_]\w*)\b")


@dataclass(frozen=True)
class SimilarityParams:
    """q and BM25's k1 and b, checked before anything is sent to the cluster."""

    q: float
    k1: float = 1.2
    b: float = 0.75

    def __post_init__(self) -> None:
        try:
            validate_q(self.q)
        except ValueError as exc:
            raise UsageError(str(exc), "pass --q between 0 and 2 (e.g. the calibrated q)") from None
        if not 0.0 <= self.k1 <= 100.0 or self.k1 != self.k1:
            raise UsageError(f"k1 must be between 0 and 100, got {self.k1!r}", "pass e.g. --k1 1.2")
        if not 0.0 <= self.b <= 1.0 or self.b != self.b:
            raise UsageError(f"b must be between 0 and 1, got {self.b!r}", "pass e.g. --b 0.75")


def _java_double(value: float) -> str:
    """A Painless double literal of ``value`` that parses back to the same double."""
    text = format(Decimal(repr(float(value))), "f")
    return text if "." in text else text + ".0"


def similarity_source(params: SimilarityParams) -> str:
    """The shipped script with q, k1 and b written in as literals.

    Similarity scripts get no ``params`` map (the engines compile them without one:
    ``cannot resolve symbol [params.q]``), so the values are substituted into the source.
    Only these three names exist; the source is esqlog's own, never user text.
    """
    values = {"q": params.q, "k1": params.k1, "b": params.b}

    def literal(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            raise ValueError(f"{SCRIPT_NAME}.painless uses an unknown param {name!r}")
        return _java_double(values[name])

    return _PARAM.sub(literal, painless_source(SCRIPT_NAME))


def similarity_settings(params: SimilarityParams) -> dict[str, str]:
    """The flat ``index.similarity.default.*`` settings that install the scripted similarity."""
    return {
        DEFAULT_PREFIX + "type": "scripted",
        DEFAULT_PREFIX + "script.lang": "painless",
        DEFAULT_PREFIX + "script.source": similarity_source(params),
    }


# --- reading an index's state ---------------------------------------------------------------


@dataclass(frozen=True)
class SimilarityState:
    """What esqlog must know about an index before changing its similarity."""

    index: str
    uuid: str
    status: str  # "open" or "close"
    similarity: Mapping[str, str]  # flat index.similarity.* settings; empty when absent
    own_similarity_fields: tuple[str, ...]  # fields whose mapping names a similarity

    @property
    def esqlog_applied(self) -> bool:
        """True when the default similarity is esqlog's scripted one."""
        source = self.similarity.get(DEFAULT_PREFIX + "script.source", "")
        return self.similarity.get(DEFAULT_PREFIX + "type") == "scripted" and MARKER in source

    @property
    def applied_q(self) -> float | None:
        """The q written into esqlog's similarity, when it is installed."""
        if not self.esqlog_applied:
            return None
        found = re.search(
            r"double idfq = ([0-9.]+) == 1\.0",
            self.similarity.get(DEFAULT_PREFIX + "script.source", ""),
        )
        return float(found.group(1)) if found else None


def _flat_similarity(settings: Mapping[str, Any]) -> dict[str, str]:
    return {k: v for k, v in settings.items() if k.startswith(PREFIX)}


def fields_with_own_similarity(mapping: Mapping[str, Any], prefix: str = "") -> list[str]:
    """Paths of fields (multi-fields included) whose mapping sets a similarity of their own.

    Those fields would keep scoring with their own similarity, so an index-wide default would
    silently apply to only part of the index.
    """
    found: list[str] = []
    for name, spec in (mapping.get("properties") or {}).items():
        if not isinstance(spec, Mapping):
            continue
        path = f"{prefix}{name}"
        if spec.get("similarity") not in (None, "default"):
            found.append(path)
        found.extend(fields_with_own_similarity(spec, path + "."))
        for sub, sub_spec in (spec.get("fields") or {}).items():
            if isinstance(sub_spec, Mapping) and sub_spec.get("similarity") not in (
                None,
                "default",
            ):
                found.append(f"{path}.{sub}")
    return found


def read_state_plan(index: str) -> Plan[SimilarityState]:
    """The concrete index, its status, similarity settings and fields with their own one."""
    info = yield from resolve_index_plan(index)
    name = info.name
    settings = yield Request("GET", index_path(name, "_settings"), {"flat_settings": True})
    flat = (settings.get(info.name) or {}).get("settings") or {}
    mapping = yield Request("GET", index_path(name, "_mapping"))
    mappings = (mapping.get(info.name) or {}).get("mappings") or {}
    rows = yield Request(
        "GET",
        api_path("_cat", "indices", check_index_name(name)),
        {"format": "json", "h": "status"},
    )
    status = str(rows[0].get("status", "open")) if rows else "open"
    return SimilarityState(
        info.name,
        info.uuid,
        status,
        _flat_similarity(flat),
        tuple(fields_with_own_similarity(mappings)),
    )


def check_applicable(state: SimilarityState) -> None:
    """Refuse indices where an index-wide default cannot do what the user asks."""
    if state.own_similarity_fields:
        shown = ", ".join(state.own_similarity_fields[:5])
        raise UsageError(
            f"index {state.index!r} has fields that set their own similarity ({shown})",
            "esqlog similarity only changes the index default; remove the field similarity "
            "or use esqlog search (query time)",
        )
    if state.status != "open":
        raise UsageError(
            f"index {state.index!r} is {state.status}d", f"open it first (POST {state.index}/_open)"
        )


def describe_apply(state: SimilarityState, params: SimilarityParams) -> str:
    """What ``apply`` will do, in the order it does it (shown before asking for --yes)."""
    previous = (
        "no index.similarity settings (Lucene BM25 default)"
        if not state.similarity
        else f"{len(state.similarity)} index.similarity setting(s)"
    )
    return "\n".join(
        [
            f"esqlog similarity apply will change index {state.index!r} (uuid {state.uuid}):",
            f"  1. save its current similarity ({previous}) in index {BACKUP_INDEX}",
            "  2. CLOSE the index: searches and writes to it fail while it is closed "
            "(usually a few seconds)",
            f"  3. set index.similarity.default to esqlog's scripted q-log BM25 "
            f"(q={params.q:g}, k1={params.k1:g}, b={params.b:g})",
            "  4. open the index again",
            f"Undo with: esqlog similarity revert {state.index} --yes",
        ]
    )


def describe_revert(state: SimilarityState, backup: Mapping[str, str]) -> str:
    """What ``revert`` will do (shown before asking for --yes)."""
    target = (
        "no index.similarity settings (Lucene BM25 default)"
        if not backup
        else f"the {len(backup)} index.similarity setting(s) saved by apply"
    )
    return "\n".join(
        [
            f"esqlog similarity revert will change index {state.index!r} (uuid {state.uuid}):",
            "  1. CLOSE the index: searches and writes to it fail while it is closed "
            "(usually a few seconds)",
            f"  2. restore {target}",
            "  3. open the index again and delete the backup",
        ]
    )


# --- close, update, open ------------------------------------------------------------------


def target_settings(
    current: Mapping[str, str], wanted: Mapping[str, str], scope: str = PREFIX
) -> dict[str, str | None]:
    """A settings update that leaves exactly ``wanted`` under ``scope``: other keys become null.

    Setting a key to null is how both engines remove it; without that, a leftover
    ``default.k1`` of a previous BM25 similarity would be rejected by the scripted type.
    """
    update: dict[str, str | None] = {
        k: None for k in current if k.startswith(scope) and k not in wanted
    }
    update.update(wanted)
    return update


def preflight_plan(params: SimilarityParams) -> Plan[None]:
    """Let the engine validate the similarity on a throwaway index of esqlog's own.

    The engine compiles the script when settings are written, so this fails exactly where
    ``apply`` would (no Painless, script compile error) but before the user's index is closed.
    """
    probe = f"esqlog-similarity-check-{uuid.uuid4().hex[:12]}"
    settings: dict[str, Any] = {"index.number_of_shards": 1, "index.number_of_replicas": 0}
    settings.update(similarity_settings(params))
    try:
        yield Request(
            "PUT", index_path(probe), {"wait_for_active_shards": "0"}, {"settings": settings}
        )
    except Exception as exc:
        raise ClusterError(
            f"the cluster rejects esqlog's scripted similarity ({error_reason(exc)}); the "
            "index was not closed and is unchanged",
            "scripted similarity needs Painless; use esqlog search (query time) instead",
        ) from None
    yield Request("DELETE", index_path(probe))


def _change_plan(
    state: SimilarityState, update: Mapping[str, str | None], action: str
) -> Plan[None]:
    """Close, update settings, open; on any failure re-open and raise naming the state."""
    name = state.index
    step = "closing"
    try:
        yield Request("POST", index_path(name, "_close"))
        step = "updating the settings of"
        yield Request("PUT", index_path(name, "_settings"), body=dict(update))
        step = "opening"
        yield Request("POST", index_path(name, "_open"))
    except Exception as exc:
        reason = error_reason(exc)
        if step == "opening":
            yield from _restore_after_failed_open(state, update)
        where = yield from _state_after_failure(state)
        raise ClusterError(
            f"similarity {action} failed while {step} index {state.index!r} ({reason}); {where}"
        ) from None


def _restore_after_failed_open(
    state: SimilarityState, update: Mapping[str, str | None]
) -> Plan[None]:
    """The new settings were accepted but the index will not open: undo exactly that update."""
    undo = {key: state.similarity.get(key) for key in update}
    try:
        yield Request("PUT", index_path(state.index, "_settings"), body=undo)
    except Exception:
        return


def _state_after_failure(state: SimilarityState) -> Plan[str]:
    """Re-open the index if needed and say in words what it looks like now."""
    try:
        yield Request("POST", index_path(state.index, "_open"))
    except Exception as exc:
        return (
            f"index {state.index!r} may be CLOSED ({error_reason(exc)}); open it with "
            f"POST {state.index}/_open"
        )
    try:
        now = yield from read_state_plan(state.index)
    except Exception:
        return f"index {state.index!r} was re-opened; check its index.similarity settings"
    if dict(now.similarity) == dict(state.similarity):
        return f"index {state.index!r} is open with its settings unchanged"
    if now.esqlog_applied:
        return f"index {state.index!r} is open with esqlog's q-log similarity"
    return f"index {state.index!r} is open; its index.similarity settings differ from before"


@dataclass(frozen=True)
class SimilarityChange:
    """The outcome of apply or revert, for the CLI's report."""

    index: str
    uuid: str
    before: Mapping[str, str]
    after: Mapping[str, str]
    kept_backup: bool = False  # apply over esqlog's own similarity kept the original backup


def apply_plan(
    index: str,
    params: SimilarityParams,
    preflight: bool = True,
    state: SimilarityState | None = None,
) -> Plan[SimilarityChange]:
    """Install the q-log similarity as the index default, saving the previous settings first.

    Applying again (another q) keeps the first backup, so revert still restores the
    settings from before esqlog ever touched the index.
    """
    if state is None:
        state = yield from read_state_plan(index)
    check_applicable(state)
    if preflight:
        yield from preflight_plan(params)
    backup = yield from load_backup_plan(state.uuid)
    kept = backup is not None and state.esqlog_applied
    if not kept:
        yield from save_backup_plan(
            state.index,
            state.uuid,
            state.similarity,
            {"q": params.q, "k1": params.k1, "b": params.b},
        )
    wanted = similarity_settings(params)
    try:
        yield from _change_plan(
            state, target_settings(state.similarity, wanted, DEFAULT_PREFIX), "apply"
        )
    except ClusterError:
        if not kept:
            yield from delete_backup_plan(state.uuid)
        raise
    after = {
        **{k: v for k, v in state.similarity.items() if not k.startswith(DEFAULT_PREFIX)},
        **wanted,
    }
    return SimilarityChange(state.index, state.uuid, state.similarity, after, kept)


def revert_plan(index: str, state: SimilarityState | None = None) -> Plan[SimilarityChange]:
    """Restore exactly the settings saved by apply, then delete the backup."""
    if state is None:
        state = yield from read_state_plan(index)
    backup = yield from load_backup_plan(state.uuid)
    if backup is None:
        raise UsageError(
            f"esqlog has no similarity backup for index {state.index!r} (uuid {state.uuid})",
            "nothing to revert: esqlog similarity apply was not run on it",
        )
    if state.status != "open":
        raise UsageError(
            f"index {state.index!r} is {state.status}d", f"open it first (POST {state.index}/_open)"
        )
    yield from _change_plan(state, target_settings(state.similarity, backup), "revert")
    yield from delete_backup_plan(state.uuid)
    return SimilarityChange(state.index, state.uuid, state.similarity, backup)
