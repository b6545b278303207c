"""What ``wrap()`` accepts: one frozen, validated options object.

Every option is checked here, once, when the wrapper is built, and every bound raises the
same type (:class:`~esqlog.errors.UsageError`, one line naming the problem and the fix), so a
misconfigured application fails at start-up rather than on its first search. The CLI's
choices are derived from the Literals below, so they cannot drift from the library's.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, get_args

from esqlog.errors import UsageError
from esqlog.identifiers.settings import IdentifierSettings
from esqlog.scoring.joins import DEFAULT_JOIN_WEIGHT
from esqlog.wrapper.decisions import DecisionHook

#: What a search does: rewrite with per-term boosts or a stored script, rerank the native
#: top-N, pass through, or match query words inside identifiers too (its own match set;
#: esqlog.wrapper.identifier_search); auto (the default): identifiers on an index whose
#: calibration says code and holds that mode's statistics, boost otherwise
#: (esqlog.wrapper.auto_mode).
SearchMode = Literal["boost", "script", "auto", "rerank", "native", "identifiers"]
#: Where term df comes from: the vocabulary snapshot when there is one, only it, or the cluster.
StatsSource = Literal["auto", "snapshot", "live"]
#: Where rerank mode rescores: the engine's rescore phase, or here from per-term scores.
RerankWhere = Literal["engine", "client"]
#: How boost mode scores several shards: one request whose boosts weight each term by its
#: shards' statistics (no dfs), one dfs_query_then_fetch search, or one request per shard.
BoostShards = Literal["weighted", "dfs", "fan_out"]

SEARCH_MODES: tuple[SearchMode, ...] = get_args(SearchMode)
#: the modes that change a query (the CLI's ``--mode`` choices)
QUERY_MODES: tuple[SearchMode, ...] = tuple(m for m in SEARCH_MODES if m != "native")
STATS_SOURCES: tuple[StatsSource, ...] = get_args(StatsSource)
RERANK_PLACES: tuple[RerankWhere, ...] = get_args(RerankWhere)
BOOST_SHARDS: tuple[BoostShards, ...] = get_args(BoostShards)

DEFAULT_TOP_N = 100
#: script mode scripts terms in at most this fraction of documents, boosts the rest
#: (same weights; see RewriteSettings.script_df_fraction and docs/benchmarks/latency.md)
DEFAULT_SCRIPT_DF_FRACTION = 0.01
#: seconds an index name's resolution (concrete index, UUID, shards) is trusted
DEFAULT_RESOLVE_TTL = 60.0


def join_weight_for(explicit: float | None, recorded: Iterable[float | None] = ()) -> float:
    """w of identifier joins: the caller's, else the first a calibration recorded, else the
    default. The one place the default applies (wrapper, ``eval`` and ``explain`` alike)."""
    if explicit is not None:
        return explicit
    return next((w for w in recorded if w), DEFAULT_JOIN_WEIGHT)


def _choice(name: str, value: object, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise UsageError(f"unknown {name} {value!r}", f"use one of {', '.join(allowed)}")


def _number(
    name: str,
    value: object,
    low: float,
    high: float = math.inf,
    *,
    low_open: bool = False,
    example: str,
) -> None:
    """One bound check for every numeric option: a finite number in range, else UsageError."""
    ok = (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and (value > low if low_open else value >= low)
        and value <= high
    )
    if not ok:
        bound = (
            f"in [{low:g}, {high:g}]"
            if high < math.inf
            else (f"> {low:g}" if low_open else f">= {low:g}")
        )
        raise UsageError(f"{name} must be {bound}, got {value!r}", f"pass e.g. {example}")


@dataclass(frozen=True)
class WrapOptions:
    """The options of :func:`esqlog.wrap`, validated on construction (see its docstring)."""

    mode: SearchMode = "auto"
    top_n: int = DEFAULT_TOP_N
    dfs: bool = True
    #: boost mode on several shards (esqlog.wrapper.shard_stats, esqlog.wrapper.boost_fan_out):
    #: weighted needs the per-shard statistics of ``calibrate --identifiers``, else is dfs
    boost_shards: BoostShards = "weighted"
    joins: bool = False
    join_weight: float | None = None
    stats_ttl: float = 60.0
    stats: StatsSource = "auto"
    script_df_fraction: float = DEFAULT_SCRIPT_DF_FRACTION
    rerank_in: RerankWhere = "engine"
    resolve_ttl: float = DEFAULT_RESOLVE_TTL
    #: the identifiers mode's clause budget and the like (its operator and
    #: minimum_should_match come from each match clause); None: esqlog.identifiers.query' defaults
    identifiers: IdentifierSettings | None = None
    #: called with each search's SearchDecision (esqlog.wrapper.decisions), e.g. to count
    #: rewritten and passed-through searches as metrics; None: only the DEBUG log line
    on_decision: DecisionHook | None = None

    def __post_init__(self) -> None:
        _choice("mode", self.mode, SEARCH_MODES)
        _choice("stats source", self.stats, STATS_SOURCES)
        _choice("rerank_in", self.rerank_in, RERANK_PLACES)
        _choice("boost_shards", self.boost_shards, BOOST_SHARDS)
        if isinstance(self.top_n, bool) or not isinstance(self.top_n, int) or self.top_n < 1:
            raise UsageError(f"top_n must be at least 1, got {self.top_n!r}", "pass e.g. top_n=100")
        _number(
            "script_df_fraction",
            self.script_df_fraction,
            0.0,
            1.0,
            example="0.01 (1.0 scripts every term)",
        )
        if self.join_weight is not None:
            _number("join_weight", self.join_weight, 0.0, low_open=True, example="0.5")
        _number("stats_ttl", self.stats_ttl, 0.0, example="60 (0 disables the cache)")
        _number(
            "resolve_ttl",
            self.resolve_ttl,
            0.0,
            example="60 (0 resolves the index name on every search)",
        )
        if self.identifiers is not None and not isinstance(self.identifiers, IdentifierSettings):
            raise UsageError(
                f"identifiers must be an IdentifierSettings, got {type(self.identifiers).__name__}",
                "pass esqlog.identifiers.query.IdentifierSettings(budget=...)",
            )
        if self.on_decision is not None and not callable(self.on_decision):
            raise UsageError(
                f"on_decision must be callable, got {type(self.on_decision).__name__}",
                "pass a function taking one SearchDecision",
            )
        if self.mode == "identifiers" and self.stats == "live":
            raise UsageError(
                "mode 'identifiers' reads its statistics from the vocabulary "
                "snapshot, and stats='live' uses none",
                "use stats='auto' or stats='snapshot'",
            )
