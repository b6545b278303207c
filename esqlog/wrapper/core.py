"""The wrapper's core: the parts that decide what a search does, wired together.

It holds no logic of its own beyond choosing a mode and building the rewrites; each part
is its own module (index resolution, snapshot guard, statistics, scripting support), and
the search flow that uses them is :func:`esqlog.wrapper.search.search_plan`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from esqlog.calibration.cluster_store import TERM_SCRIPT_ID
from esqlog.calibration.plugin import node_plan_for
from esqlog.calibration.record import Calibration
from esqlog.engine.client import Flavor, version_plan
from esqlog.engine.steps import Plan
from esqlog.errors import UsageError
from esqlog.identifiers.settings import IdentifierSettings
from esqlog.rerank import ScoredText
from esqlog.scoring.clauses import DEFAULT_MAX_CLAUSES, max_clause_count_plan
from esqlog.scoring.joins import confirmed_joins, joins_that_fit
from esqlog.scoring.matchspec import with_default_fields
from esqlog.scoring.rewrite import (
    FieldCalibration,
    RewriteMode,
    RewriteSettings,
    resolved_from_stats,
    rewrite_query_sharing,
)
from esqlog.statistics.stats_cache import StatsCache
from esqlog.statistics.terms import TextStats
from esqlog.statistics.vocabulary import Vocabulary
from esqlog.wrapper.auto_mode import AutoModes
from esqlog.wrapper.engine_query import EngineQueryChoice
from esqlog.wrapper.identifier_search import IdentifierRewriter, load_identifier_statistics
from esqlog.wrapper.lru import LRU
from esqlog.wrapper.options import SearchMode, WrapOptions, join_weight_for
from esqlog.wrapper.pits import PitIndexes
from esqlog.wrapper.query_terms import StatisticsResolver, TextKey
from esqlog.wrapper.resolve import IndexResolver, IndexTarget
from esqlog.wrapper.scripting import ScriptSupport
from esqlog.wrapper.shard_stats import load_shard_statistics
from esqlog.wrapper.snapshots import SnapshotGuard, load_snapshots


class WrapperCore:
    """Everything one wrapped client decides, shared by its sync and async search paths."""

    def __init__(
        self, calibrations: Sequence[Calibration], options: WrapOptions, flavor: Flavor
    ) -> None:
        self.options = options
        self.flavor = flavor
        self.by_index: dict[str, list[Calibration]] = {}
        for cal in calibrations:
            self.by_index.setdefault(cal.index, []).append(cal)
        #: index -> field -> its q and IDF form (validated once, here)
        self.fields = {
            index: {c.field: FieldCalibration(c.q, c.idf_form) for c in cals}
            for index, cals in self.by_index.items()
        }
        self.resolver = IndexResolver(
            {
                index: {c.field: c.standard_analysis for c in cals}
                for index, cals in self.by_index.items()
            },
            options.resolve_ttl,
            LRU(),
        )
        snapshots = load_snapshots(calibrations, options.stats)
        self.snapshots = SnapshotGuard(snapshots, self.by_index)
        #: mode="auto": per index, identifiers or boost, and why (esqlog.wrapper.auto_mode)
        self.modes = AutoModes(calibrations, snapshots) if options.mode == "auto" else None
        #: the identifiers mode's split statistics, loaded beside their snapshots (when the
        #: wrapper is built for that mode: a missing file is an error at wrap() time; for
        #: mode="auto", those of the indices it chose the mode for)
        self.engine_query = EngineQueryChoice(
            options.identifiers or IdentifierSettings(), calibrations
        )
        stats = (
            load_identifier_statistics(calibrations, snapshots)
            if options.mode == "identifiers"
            else self.modes.statistics
            if self.modes is not None
            else {}
        )
        self.identifiers = (
            IdentifierRewriter(
                stats,
                self.engine_query.settings,
                {(c.index, c.field): c.word_lists or "" for c in calibrations if node_plan_for(c)},
            )
            if (options.mode == "identifiers" or stats)
            else None
        )
        if self.modes is not None:
            self.modes.log(self.engine_query if self.identifiers is not None else None)
        #: boost mode's per-shard statistics, for several shards without dfs (weighted
        #: boosts or one request per shard: esqlog.wrapper.shard_stats); empty when boost
        #: goes the dfs way (boost_shards="dfs", dfs=False, or none recorded)
        self.shard_stats = (
            load_shard_statistics(calibrations, snapshots, stats)
            if options.boost_shards != "dfs" and options.dfs
            else {}
        )
        self.statistics = StatisticsResolver(
            self.snapshots,
            StatsCache(options.stats_ttl) if options.stats_ttl > 0 else None,
            options.joins,
        )
        self.scripts = ScriptSupport()
        self.pits = PitIndexes()  # point-in-time id -> the index it reads
        self._version: tuple[int, ...] | None = None
        self.max_clauses = DEFAULT_MAX_CLAUSES  # the engine's clause limit, asked when joins
        self._max_clauses_known = False

    def snapshot_for(self, index: str, field_name: str) -> Vocabulary | None:
        return self.snapshots.snapshot_for(index, field_name)

    def effective_mode(self, mode: SearchMode | None, index: Any = None) -> SearchMode:
        """The call's mode, else the wrapper's; auto is identifiers on an index whose
        calibration says code (an alias is resolved by the identifiers flow, which hands
        a prose index back to boost), else boost."""
        chosen = mode or self.options.mode
        if chosen == "auto":
            code = (
                self.modes is not None
                and self.identifiers is not None
                and (self.modes.code(index, self.by_index))
            )
            return "identifiers" if code else "boost"
        if chosen == "identifiers" and self.identifiers is None:
            raise UsageError(
                "esqlog_mode='identifiers' needs a wrapper built for that mode "
                "(it loads the identifier statistics)",
                "wrap(client, calibration, mode='identifiers')",
            )
        return chosen

    def use_spans(self, settings: IdentifierSettings) -> None:
        """engine_query="auto" fell back to spans: the rewriter builds them from now on."""
        if self.identifiers is not None:
            self.identifiers.settings = settings

    def version_plan(self) -> Plan[tuple[int, ...]]:
        """The engine's version, asked once per wrapper (only client-side reranks need it)."""
        if self._version is None:
            self._version = yield from version_plan()
        return self._version

    def clause_limit_plan(self) -> Plan[None]:
        """Ask the engine's clause limit once per wrapper, when joins or the identifiers
        mode may add clauses."""
        extra = self.options.joins or self.identifiers is not None
        if extra and not self._max_clauses_known:
            self.max_clauses = yield from max_clause_count_plan(self.flavor)
            self._max_clauses_known = True

    def join_weight(self, index: str) -> float | None:
        """w of identifier joins for this index, or None when joins are off."""
        if not self.options.joins:
            return None
        return join_weight_for(
            self.options.join_weight, (c.join_weight for c in self.by_index[index])
        )

    def rewritten(
        self,
        target: IndexTarget,
        query: Any,
        stats: Mapping[TextKey, TextStats],
        mode: RewriteMode,
        idf_scale: Mapping[tuple[str, str], float] | None = None,
    ) -> dict[str, Any]:
        """The caller's query with q-log weights (boost clauses or the stored script);
        ``idf_scale``: boosts for a shard scoring with its own statistics (one request per
        shard, esqlog.wrapper.boost_fan_out)."""
        query = with_default_fields(query, target.default_fields)
        resolved = {key: resolved_from_stats(s) for key, s in stats.items()}
        settings = RewriteSettings(
            self.fields[target.index],
            mode,
            TERM_SCRIPT_ID,
            self.join_weight(target.index),
            script_df_fraction=self.options.script_df_fraction,
            max_clauses=self.max_clauses,
            idf_scale=idf_scale,
        )
        return rewrite_query_sharing(query, resolved, settings)

    def named_native(
        self,
        target: IndexTarget,
        query: Any,
        stats: Mapping[TextKey, TextStats],
        names: Mapping[tuple[str, str], str],
    ) -> dict[str, Any]:
        """The query with native scores (q = 1: every weight 1) and each term clause named,
        so one search returns the top-N and every term's own score for the rerank."""
        query = with_default_fields(query, target.default_fields)
        resolved = {key: resolved_from_stats(s) for key, s in stats.items()}
        fields = {f: FieldCalibration(1.0, "lucene") for f in self.fields[target.index]}
        settings = RewriteSettings(fields, "boost", TERM_SCRIPT_ID, None, term_names=names)
        return rewrite_query_sharing(query, resolved, settings)

    def scored_texts(
        self, target: IndexTarget, stats: Mapping[TextKey, TextStats]
    ) -> list[ScoredText]:
        """The texts with their field's q, for the rerank's corrections."""
        fields = self.fields[target.index]
        weight = self.join_weight(target.index)
        joins = joins_that_fit(
            [
                (s.terms, confirmed_joins(s.terms, s.extra_df) if weight else ())
                for s in stats.values()
            ],
            self.max_clauses,
        )
        return [
            ScoredText(f, s, fields[f].q, fields[f].form, kept, weight or 0.0)
            for ((f, _), s), kept in zip(stats.items(), joins, strict=True)
        ]
