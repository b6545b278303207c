"""What each wrapped search did, told to the application: :class:`SearchDecision`.

Why: a wrapper that silently passes a search through (an index list it cannot resolve, a
query with no calibrated match clause, a stale snapshot) looks exactly like one that works,
so a production user could not tell whether esqlog did anything. Every search therefore
ends in one decision: one DEBUG line on the ``esqlog`` logger, and the same record to the
``on_decision`` callable given to :func:`esqlog.wrap` (to count as metrics). The record is
small and frozen: it names what happened and why, never the query text or the hits.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from esqlog.engine.steps import Request

logger = logging.getLogger("esqlog")

#: Why a search was rewritten or went to the engine as given.
Reason = Literal[
    "rewritten",  # calibrated match clauses scored with q-log weights (or reranked)
    "native mode",  # mode="native" (or esqlog_mode="native")
    "no query",  # no query and no retriever: nothing to score
    "min_score",  # min_score thresholds native scores: nothing may move
    "knn on opensearch",  # OpenSearch rejects a top-level knn: its own error, untouched
    "not one index",  # several indices, a pattern, or no index: no one calibration applies
    "index not calibrated",  # no calibration for the index (or it does not exist)
    "no calibrated match clause",  # no match clause on a calibrated field with known analysis
    "point in time spans other shards",  # the PIT reads another shard set than the index's
    "rerank needs a plain page",  # rerank with sort, search_after, scroll or bad paging
    "esqlog request failed",  # esqlog's own requests failed: the search went as given
]
#: Where the term statistics came from: the vocabulary snapshot, the TTL cache (with the
#: snapshot for some fields), or at least one request to the engine.
StatsOrigin = Literal["snapshot", "cache", "engine"]


@dataclass(frozen=True)
class SearchDecision:
    """One wrapped search's decision (logged at DEBUG, passed to ``on_decision``)."""

    #: the index name as esqlog read it (a one-index list as its name); None otherwise
    index: str | None
    #: the mode asked for (the call's esqlog_mode, else the wrapper's)
    requested: str
    #: what was sent: boost, script, rerank, identifiers, or native (passed through)
    mode: str
    rewritten: bool
    reason: Reason
    statistics: StatsOrigin | None = None
    #: what esqlog fell back from and to, when it did (e.g. a stale snapshot: boost)
    fallback: str | None = None
    #: sent as one request per shard (esqlog.wrapper.fan_out): identifiers, or boost with
    #: boost_shards="fan_out" (esqlog.wrapper.boost_fan_out)
    fan_out: bool = False
    #: boost sent as one request without dfs, its boosts weighted by the shards' own
    #: statistics (boost_shards="weighted", esqlog.wrapper.shard_stats)
    shard_weighted: bool = False

    def line(self) -> str:
        """The DEBUG line: what happened first, then why and where statistics came from."""
        what = f"rewritten ({self.mode})" if self.rewritten else f"passed through ({self.reason})"
        parts = [f"search {self.index or '-'}: {what}", f"mode {self.requested}"]
        if self.statistics:
            parts.append(f"statistics {self.statistics}")
        if self.fan_out:
            parts.append("one request per shard")
        if self.shard_weighted:
            parts.append("boosts weighted by shard, no dfs")
        if self.fallback:
            parts.append(f"fallback: {self.fallback}")
        return "; ".join(parts)


DecisionHook = Callable[[SearchDecision], object]
T = TypeVar("T")


def not_resolved(index: Any) -> Reason:
    """Why the resolver found no calibrated target (its own test for one index name)."""
    one = isinstance(index, str) and index and "," not in index and "*" not in index
    return "index not calibrated" if one else "not one index"


class Trace:
    """The decision as a search builds it; :meth:`emit` reports it once, at the end."""

    def __init__(self, index: Any, requested: str) -> None:
        self.index = index if isinstance(index, str) else None
        self.requested = requested
        self.mode = requested
        self.reason: Reason | None = None  # None: no search was sent (a UsageError, say)
        self.statistics: StatsOrigin | None = None
        self.fallback: str | None = None
        self.fan_out = False
        self.shard_weighted = False

    def passed(self, reason: Reason) -> None:
        self.reason, self.mode = reason, "native"

    def rewritten(self, mode: str) -> None:
        self.reason, self.mode = "rewritten", mode

    def fell_back(self, why: str) -> None:
        self.fallback = why if self.fallback is None else f"{self.fallback}; {why}"

    def watch(self, plan: Generator[Request, Any, T]) -> Generator[Request, Any, T]:
        """Run a statistics plan, noting "engine" if it made any request (else the caller
        tells the snapshot from the cache)."""
        asked = False
        self.statistics = None
        try:
            step = next(plan)
            while True:
                asked = True
                try:
                    answer = yield step
                except BaseException as exc:
                    step = plan.throw(exc)
                else:
                    step = plan.send(answer)
        except StopIteration as stop:
            if asked:
                self.statistics = "engine"
            result: T = stop.value
            return result

    def emit(self, hook: DecisionHook | None) -> None:
        """Report the decision: one DEBUG line and ``hook``'s call. Nothing is built when
        neither would read it (no hook, DEBUG off): the record is a frozen dataclass of nine
        fields, which every search would otherwise pay for."""
        if self.reason is None:
            return
        debug = logger.isEnabledFor(logging.DEBUG)
        if hook is None and not debug:
            return
        decision = SearchDecision(
            self.index,
            self.requested,
            self.mode,
            self.reason == "rewritten",
            self.reason,
            self.statistics,
            self.fallback,
            self.fan_out,
            self.shard_weighted,
        )
        if debug:
            logger.debug("%s", decision.line())
        if hook is not None:
            try:
                hook(decision)
            except Exception:  # a metrics hook must not fail the application's search
                logger.warning(
                    "esqlog: on_decision raised; the search is unaffected", exc_info=True
                )
