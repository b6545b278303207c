"""The word-lists index: each sub-word's compounds, where the esqlog-terms plugin plans a query.

Why in the cluster: the plugin's ``esqlog_identifiers`` query (esqlog.identifiers.node_plan)
chooses each query word's compounds on the coordinating node, from the same lists the
client's split statistics hold; the node fetches the dozen its query names (one multi-get,
then kept in memory: WordLists.java) instead of every wrapper process holding and searching
them. One document per sub-word that some compound holds, its id the word:

* ``ids``: its compounds' ids in the statistics, most frequent first, at most MULTI_SCAN
  (what the budget reads), base64 of little-endian int32;
* ``df``: each compound's document frequency in the index, the same way;
* ``terms``: the compounds, joined by newlines.

The index is esqlog's own (esqlog.engine.state_index: created and marked by calibrate, never
a user's) and named by the checksum of the snapshot its statistics belong to, so a wrapper
reads only lists of the statistics it was calibrated with; a calibration of other
statistics writes another index. ``auto_expand_replicas: 0-all`` puts a copy on every node,
so the multi-get is answered locally. Written last, ``_meta.esqlog.complete`` marks a whole
index: a run killed midway leaves one that the next calibrate writes again.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from esqlog.calibration.plugin import plans_on_node
from esqlog.calibration.record import Calibration
from esqlog.engine.client import Engine
from esqlog.engine.failures import error_reason, error_status
from esqlog.engine.paths import check_index_name, index_path
from esqlog.engine.state_index import (
    MARKER_KEY,
    check_state_index_plan,
    ensure_state_index_plan,
    is_state_index,
    state_marker,
)
from esqlog.engine.steps import Plan, Request
from esqlog.errors import ClusterError, EsqlogError, UsageError
from esqlog.identifiers.selection import MULTI_SCAN
from esqlog.identifiers.split_stats import IdentifierStats

PREFIX = "esqlog-words-"
STATE = "word lists"
#: bytes of documents per bulk request
CHUNK_BYTES = 4 << 20
_SETTINGS = {
    "index": {"number_of_shards": 1, "auto_expand_replicas": "0-all", "refresh_interval": -1}
}
_MAPPINGS = {"dynamic": False, "properties": {}}


def lists_index_name(vocabulary_sha256: str) -> str:
    """The word-lists index of the statistics bound to this snapshot checksum."""
    return check_index_name(PREFIX + vocabulary_sha256[:16])


def listed_words(stats: IdentifierStats) -> int:
    """How many words have a list (a document): those some compound's split holds."""
    return int(np.count_nonzero(np.diff(stats.comp_ptr)))


def word_documents(stats: IdentifierStats) -> Iterator[tuple[str, dict[str, str]]]:
    """(word, document) for every word that some compound's split holds."""
    sizes = np.diff(stats.comp_ptr)
    for i in np.flatnonzero(sizes > 0).tolist():
        start = int(stats.comp_ptr[i])
        ids = stats.comp_idx[start : start + min(int(sizes[i]), MULTI_SCAN)]
        df = stats.df_engine[ids]
        yield (
            stats.words[i],
            {
                "ids": base64.b64encode(ids.astype("<i4").tobytes()).decode("ascii"),
                "df": base64.b64encode(df.astype("<i4").tobytes()).decode("ascii"),
                "terms": "\n".join(stats.words[j] for j in ids.tolist()),
            },
        )


def _complete(mappings: dict[str, Any] | None, words: int) -> bool:
    own = (mappings or {}).get("_meta", {}).get(MARKER_KEY, {})
    return isinstance(own, dict) and own.get("complete") is True and own.get("words") == words


def write_lists_plan(
    stats: IdentifierStats, name: str, progress: Callable[[int, int], None] | None = None
) -> Plan[bool]:
    """Write the word lists into ``name`` (created and marked as esqlog's); False when a
    complete index of the same lists was there already. ``progress(done, total)``."""
    total = listed_words(stats)
    yield from ensure_state_index_plan(
        name, STATE, "calibrate", {"settings": _SETTINGS, "mappings": _MAPPINGS}
    )
    found = yield Request("GET", index_path(name, "_mapping"))
    if _complete((found or {}).get(name, {}).get("mappings"), total):
        return False
    lines: list[str] = []
    size = done = 0
    for word, doc in word_documents(stats):
        lines += [json.dumps({"index": {"_id": word}}), json.dumps(doc)]
        size += len(lines[-1]) + len(lines[-2])
        if size >= CHUNK_BYTES:
            done += yield from _bulk(name, lines)
            lines, size = [], 0
            if progress is not None:
                progress(done, total)
    done += yield from _bulk(name, lines)
    if progress is not None:
        progress(done, total)
    yield Request("POST", index_path(name, "_refresh"))
    marker = state_marker(STATE, "calibrate")
    marker[MARKER_KEY].update(complete=True, words=total)
    yield Request("PUT", index_path(name, "_mapping"), body={"_meta": marker})
    return True


def _bulk(name: str, lines: list[str]) -> Plan[int]:
    if not lines:
        return 0
    result = yield Request("POST", index_path(name, "_bulk"), body="\n".join(lines) + "\n")
    if isinstance(result, dict) and result.get("errors"):
        failed: Any = next(
            (i["index"]["error"] for i in result.get("items", []) if i["index"].get("error")), {}
        )
        reason = failed.get("reason", failed) if isinstance(failed, dict) else failed
        raise ClusterError(f"writing the word lists into {name!r} failed: {reason}")
    return len(lines) // 2


def write_for_record(
    engine: Engine,
    stats: IdentifierStats,
    record: Calibration,
    progress_factory: Callable[[str, int], Callable[[int], None]] | None = None,
) -> tuple[Calibration, str | None]:
    """Calibrate's step: where every data node runs a plugin that plans on the node (found
    by calibrate: ``record.terms_plugin``), write the lists and name them in the record;
    else leave it. Returns the record and the report's line (None when nothing was tried).
    A cluster that refuses the write (a user without the right to create the index) keeps
    the record as it is: searches then plan on the client, as before."""
    if not plans_on_node(record.terms_plugin) or not record.vocabulary_sha256:
        return record, None
    name = lists_index_name(record.vocabulary_sha256)
    total = listed_words(stats)
    bar = progress_factory("word lists", total) if progress_factory else None
    seen = [0]

    def advance(done: int, _total: int) -> None:
        if bar is not None:
            bar(done - seen[0])
        seen[0] = done

    try:
        wrote = engine.run(write_lists_plan(stats, name, advance))
    except Exception as exc:  # the client's error type, or ours
        return record, (
            f"word lists   not written ({_refusal(exc)}); identifiers queries are planned on "
            "the client"
        )
    done = "written to" if wrote else "already in"
    return replace(record, word_lists=name), (
        f"word lists   {total:,} sub-words' compounds {done} index {name}: the nodes plan "
        "identifiers queries"
    )


def _refusal(exc: Exception) -> str:
    """Why the cluster refused a write or delete of the lists, in a few words; ``exc``
    raised again when it is no answer (the cluster unreachable): the command fails as it
    would anywhere else."""
    status = error_status(exc)
    if status is None and not isinstance(exc, (ClusterError, UsageError)):
        raise exc
    return exc.problem if isinstance(exc, EsqlogError) else f"HTTP {status}: {error_reason(exc)}"


def remove_lists_plan(name: str) -> Plan[bool]:
    """Delete the word-lists index ``name`` if esqlog made it (its marker); False when there
    is none. An index of that name that esqlog did not mark is left, with a UsageError."""
    if not name.startswith(PREFIX):
        raise UsageError(f"{name!r} is not a word-lists index", "name an esqlog-words-… index")
    if not (yield from check_state_index_plan(check_index_name(name), STATE, "calibrate")):
        return False
    yield Request("DELETE", index_path(name))
    return True


def remove_superseded(engine: Engine, previous: str | None, current: str | None) -> str | None:
    """After a calibration FILE was saved anew: delete the lists index the record it
    replaced named, when the new one names another (or none). Returns a line saying what
    was removed or why not (None: nothing to remove).

    Why here and not in ``esqlog calibrate``: esqlog index --calibrate refreshes FILE after
    every run that changed the index (esqlog mcp's re-index after each edit), and each
    refresh has new statistics, so new lists; left behind, they would add an index per
    edit until the cluster's shard limit. The process that refreshed reloads FILE at once;
    another still holding the earlier FILE finds its lists gone, sends that search again
    planned on the client and warns once (esqlog.wrapper.engine_query)."""
    if not previous or previous == current:
        return None
    try:
        removed = engine.run(remove_lists_plan(previous))
    except Exception as exc:  # the client's error type, or ours
        return f"word lists   the superseded index {previous} was not removed ({_refusal(exc)})"
    return f"word lists   removed the superseded index {previous}" if removed else None


@dataclass(frozen=True)
class ListsIndex:
    """One word-lists index esqlog made, as ``esqlog plugin lists`` shows it."""

    name: str
    words: int  # its documents: the sub-words it lists (0 while a calibrate writes it)
    complete: bool  # marked complete by the calibrate that wrote it
    size_bytes: int


def lists_indices_plan() -> Plan[tuple[list[ListsIndex], list[str]]]:
    """The word-lists indices esqlog made (marked), by name, and the names of those of the
    same prefix that esqlog did not mark (never touched)."""
    pattern = PREFIX + "*"
    mappings = yield Request("GET", index_path(pattern, "_mapping", patterns=True))
    stats = yield Request("GET", index_path(pattern, "_stats", "docs,store", patterns=True))
    totals = (stats or {}).get("indices", {})
    own, other = [], []
    found: dict[str, Any] = mappings or {}
    for name in sorted(found):
        meta = ((found[name] or {}).get("mappings") or {}).get("_meta") or {}
        if not is_state_index(meta, STATE):
            other.append(name)
            continue
        total = (totals.get(name) or {}).get("primaries") or {}
        own.append(
            ListsIndex(
                name,
                int((total.get("docs") or {}).get("count", 0)),
                bool(meta[MARKER_KEY].get("complete")),
                int((total.get("store") or {}).get("size_in_bytes", 0)),
            )
        )
    return own, other
