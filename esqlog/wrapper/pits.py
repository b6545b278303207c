"""Which index a point-in-time search reads: a PIT search names no index, its PIT does.

A search with ``pit`` in the body must not name an index, and the PIT id is opaque on both
engines. Without the index esqlog could not pick a calibration, so page 1 and page 2 of a
PIT-paginated search would be ranked differently depending on who opened the PIT. The index
is learnt once per PIT id from the engine itself: one search of one hit through that PIT
(``_index`` of the hit, ``_shards.total`` to be sure the PIT covers that index alone). Each
response's ``pit_id`` (Elasticsearch may hand out a new id per page) is remembered with the
same index, so later pages need no probe. A PIT over several indices, or over an empty
index, stays native: nothing says which calibration would apply.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from esqlog.engine.steps import Plan, Request
from esqlog.wrapper.lru import LRU


@dataclass(frozen=True)
class PitSource:
    """The one index a PIT reads and the shards it spans (None: several, or unknown)."""

    index: str | None
    shards: int


def pit_id(pit: Any) -> str | None:
    """The id of a ``pit`` section, or None when it is not one."""
    if isinstance(pit, Mapping) and isinstance(pit.get("id"), str) and pit["id"]:
        return str(pit["id"])
    return None


class PitIndexes:
    """PIT id -> the index it reads, learnt from the engine and from every response."""

    def __init__(self, cache: LRU | None = None) -> None:
        self.cache = cache or LRU()

    def source_plan(self, pit: Any) -> Plan[PitSource | None]:
        """The PIT's index, probing the engine once per unknown PIT id."""
        ident = pit_id(pit)
        if ident is None:
            return None
        known: PitSource | None = self.cache.get(ident)
        if known is not None:
            return known
        try:
            found = yield Request(
                "POST",
                "/_search",
                {},
                {
                    "pit": {"id": ident},
                    "size": 1,
                    "_source": False,
                    "track_total_hits": False,
                    "query": {"match_all": {}},
                },
            )
        except Exception:  # an expired or bad PIT: the caller's search says so itself
            return None
        source = _source_of(found)
        if source is not None:
            self.cache.put(ident, source)
        return source

    def remember(self, response: Any, source: PitSource) -> None:
        """A response's pit_id reads what the request's PIT read."""
        body = getattr(response, "body", response)
        if isinstance(body, Mapping) and isinstance(body.get("pit_id"), str):
            self.cache.put(body["pit_id"], source)


def _source_of(found: Any) -> PitSource | None:
    if not isinstance(found, Mapping):
        return None
    hits = (found.get("hits") or {}).get("hits") or []
    total = (found.get("_shards") or {}).get("total")
    if not hits or not isinstance(total, int) or not isinstance(hits[0].get("_index"), str):
        return None
    return PitSource(hits[0]["_index"], total)
