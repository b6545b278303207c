"""Which calibrated index a search targets: name -> concrete index, UUID and shard routings.

A search names an index or an alias; esqlog needs the concrete index (to pick its
calibration), its shard count and one routing value per shard (to sum statistics over every
shard). Finding routings takes a few requests, so the answer is cached, but not forever: an
alias can move to another index, and an index can be deleted and recreated with another
shard count. So a resolution expires after ``ttl`` seconds (one ``_settings`` request
renews it) and routings are keyed by the index UUID, never by its name: a recreated index is
a new index. A failure of esqlog's own statistics request also drops the resolution
(:meth:`IndexResolver.forget`), so a deleted or recreated index is noticed at once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from typing import Any

from esqlog.engine.steps import Pause, Request
from esqlog.statistics.analysis import SearchAnalyses, search_analyses_plan
from esqlog.statistics.terms import IndexInfo, resolve_index_plan, shard_routings_plan
from esqlog.wrapper.lru import LRU

#: the clock resolutions expire by (a module attribute so tests can move time forward)
clock = time.monotonic


@dataclass(frozen=True)
class IndexTarget:
    """A concrete calibrated index as it is now, with one routing value per shard."""

    index: str
    uuid: str
    routings: tuple[str, ...]
    #: each calibrated field's search analyzer, read at every resolution (a mapping can change)
    analysis: SearchAnalyses = field(default_factory=lambda: SearchAnalyses({}))
    #: index.query.default_field (multi_match without fields searches these)
    default_fields: tuple[str, ...] = ("*",)

    @property
    def shards(self) -> int:
        return len(self.routings)


@dataclass(frozen=True)
class _Resolution:
    target: IndexTarget | None  # None: not a calibrated index (searches pass through)
    expires: float


class IndexResolver:
    """Resolves index expressions to :class:`IndexTarget` through one bounded LRU.

    When a cold wrapper meets a burst (200 concurrent tasks, say), one search resolves and
    the others pause until it is cached, instead of all probing at once.
    """

    def __init__(
        self, calibrated: Mapping[str, Mapping[str, bool]], ttl: float, cache: LRU
    ) -> None:
        #: index -> field -> whether the calibration recorded the built-in standard analyzer
        self.calibrated = calibrated
        self.ttl = ttl
        self.cache = cache
        self._pending: set[str] = set()
        self._lock = threading.Lock()

    def target_plan(self, index: Any) -> Generator[Request | Pause, Any, IndexTarget | None]:
        """The calibrated concrete index a search targets, or None (pass through)."""
        if not isinstance(index, str) or not index or "," in index or "*" in index:
            return None
        while True:
            found: _Resolution | None = self.cache.get(("index", index))
            if found is not None and clock() < found.expires:
                return found.target
            if self._claim(index):
                break
            yield Pause(0.005)
        try:
            try:
                info = yield from resolve_index_plan(index)
            except Exception:  # not an index esqlog can use: the engine answers the search
                return None  # (not cached: it may be created any moment)
            target = yield from self._target_plan(info, found)
            self.cache.put(("index", index), _Resolution(target, clock() + self.ttl))
            return target
        finally:
            self._release(index)

    def _target_plan(
        self, info: IndexInfo, previous: _Resolution | None
    ) -> Generator[Request, Any, IndexTarget | None]:
        if info.name not in self.calibrated:
            return None
        fields = self.calibrated[info.name]
        analysis = yield from search_analyses_plan(info.name, list(fields), fields)
        if (
            previous is not None
            and previous.target is not None
            and (previous.target.uuid == info.uuid)
        ):  # same index: its routings still hold
            return IndexTarget(
                info.name, info.uuid, previous.target.routings, analysis, info.default_fields
            )
        routings = self.cache.get(("routings", info.uuid))
        if routings is None or len(routings) != info.shards:
            routings = yield from shard_routings_plan(info.name, info.shards)
            self.cache.put(("routings", info.uuid), routings)
        return IndexTarget(info.name, info.uuid, routings, analysis, info.default_fields)

    def forget(self, index: Any) -> None:
        """Drop a resolution: the next search resolves the name again."""
        if isinstance(index, str):
            self.cache.pop(("index", index))

    def _claim(self, name: str) -> bool:
        with self._lock:
            if name in self._pending:
                return False
            self._pending.add(name)
            return True

    def _release(self, name: str) -> None:
        with self._lock:
            self._pending.discard(name)
