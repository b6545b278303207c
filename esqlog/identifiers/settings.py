"""How the identifiers query is built: its settings, each with the measurement behind it.

Why a module of its own: the settings are the mode's public knobs (``esqlog.wrap(...,
identifiers=IdentifierSettings(...))``), and each carries the figures that chose its default
(docs/benchmarks/identifiers.md: the result, and each measurement's log entry); the builder
(esqlog.identifiers.query) reads them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from esqlog.errors import UsageError
from esqlog.identifiers.families import FAMILY_EXCESS
from esqlog.scoring.matchspec import Operator

DEFAULT_BUDGET = 300  # clauses, on one shard
MULTI_SHARD_BUDGET = 200  # on several: every shard looks every listed term up, twice (dfs)
#: per shard, when each shard gets its own query (esqlog.identifiers.shards): no dfs phase, and each
#: shard looks up only the listed terms it holds. Measured on 3 shards
#: (docs/benchmarks/identifiers.md, f42a5b2): 300 is at or above the code reindex on all 16 code
#: rows (250: two rows just below it) at 3.3-3.6x the native p50, where the one dfs query at 200
#: took 3.7-4.1x.
FAN_OUT_BUDGET = 300
#: Which compounds the clause budget takes first (IdentifierSettings.select).
Selection = Literal["mass", "multi", "words", "cover", "all", "auto"]
#: What a common sub-word's compounds do (IdentifierSettings.common).
Common = Literal["split", "own"]
#: How a word's spans on several shards are scored (IdentifierSettings.shard_groups).
ShardGroups = Literal["max", "sum", "shard", "auto"]
#: The engine query of a group of terms (IdentifierSettings.engine_query).
EngineQuery = Literal["auto", "span", "plugin"]
# The runtime checks read the same Literals, so a type checker's choices and the
# UsageError's cannot drift apart (a caller without a type checker still gets the error).
SELECTIONS: tuple[Selection, ...] = get_args(Selection)
OPERATORS: tuple[Operator, ...] = get_args(Operator)
COMMON: tuple[Common, ...] = get_args(Common)
SHARD_GROUPS: tuple[ShardGroups, ...] = get_args(ShardGroups)
ENGINE_QUERIES: tuple[EngineQuery, ...] = get_args(EngineQuery)


@dataclass(frozen=True)
class IdentifierSettings:
    """How the query is built: clause budget, optional per-sub-word cap, q, matching."""

    #: Clauses of one query; None: DEFAULT_BUDGET on one shard, on several FAN_OUT_BUDGET
    #: in each shard's own query (and in the one dfs query holding the same terms, for
    #: searches that cannot go per shard: one match set, esqlog.wrapper.identifier_search),
    #: MULTI_SHARD_BUDGET in the one dfs query without the fan-out. In the dfs
    #: query the engine's cost is per listed term and per shard (each shard looks every
    #: term up, in the dfs phase and again in the query phase): 250 clauses measured 3.8-4.5x
    #: native latency on 3 shards, 200 3.5-3.75x at most 0.007 NDCG@10
    #: (docs/benchmarks/identifiers.md, 0b0e824).
    budget: int | None = None
    cap: int | None = None  # compounds per sub-word at most (None: budget only)
    #: 0.8, measured (docs/benchmarks/identifiers.md): the split stream's predicted q (0.66-0.74)
    #: lost 0.01-0.02 NDCG@10 on Go; None: use that prediction.
    q: float | None = 0.8
    operator: Operator = "or"
    minimum_should_match: int | str | None = None
    #: Which compounds the budget takes first: "cover" (those holding query words of the largest
    #: summed weight), "words" (holding the most query words), "multi" (holding two or more, as one
    #: tier), then by score mass; "mass": by score mass only. "cover" measured
    #: (docs/benchmarks/identifiers.md): up to +0.010 NDCG@10 over "multi", -0.005 on Ruby.
    #: "all": no budget, every compound of each word, as one group per word that the
    #: esqlog-terms plugin (1.11.0 and later) reads once per segment and keeps: near the
    #: plain match's speed, a ranking within -0.004 to +0.006 NDCG@10 of "cover" on Go and
    #: Java (docs/benchmarks/identifiers.md, "every compound of each word"); planned on the
    #: nodes only, elsewhere (spans, an older plugin) "cover" is taken, with one warning.
    #: "auto" (the default): "all" where every data node plans it (calibrate found
    #: esqlog-terms 1.11.1 or later: esqlog.wrapper.engine_query), "cover" elsewhere, without
    #: a warning. Measured on every Go and Java query (2,000 a set, 1 and 3 shards), "all" is
    #: within -0.0003 to +0.0061 NDCG@10 of "cover" (docs/benchmarks/identifiers.md,
    #: "select all by default").
    select: Selection = "auto"
    #: A sub-word in more than this share of documents keeps its own term out of the span
    #: (a plain term clause, which the engine can prune): a span cannot skip documents and
    #: a common word's own posting list is its longest. 1.0: every sub-word one span.
    span_max_df: float = 0.05
    #: What such a common sub-word's compounds do: ``split`` (one span of their own with the
    #: same weight, saturating apart from the word's own term), or ``own`` (dropped: the
    #: word scores by its own term alone, the cheapest and the least exact).
    common: Common = "split"
    #: Within the budget, the compounds of the query's rarer sub-words (under span_max_df)
    #: come before those of common ones: a rare word missing a compound loses the whole
    #: match of that document, a common one a little weight (and spans of common words'
    #: compounds are the long ones). Measured: +0.027 NDCG@10 on Go 153K without names.
    rare_first: bool = True
    #: On several shards a word's terms form one span per shard set (see the module docstring);
    #: "max" scores a document by the best of them (one dis_max per word, as one saturation would),
    #: "sum" adds them (a document holding terms of several shard sets counts the word's weight
    #: several times). Measured on 3 shards (docs/benchmarks/identifiers.md): "sum" lost up to 0.075
    #: NDCG@10 against "max" on the code rows. "shard": one span per shard under the dis_max,
    #: exactly one saturation (esqlog.identifiers.groups) at 1.6x the clauses. "auto" (the default):
    #: "shard" for the words where it repeats few and rare terms (shard_exact_clauses,
    #: shard_exact_df), "max" for the rest. Measured on 3 shards (docs/benchmarks/identifiers.md,
    #: c9a0c24): +0.001 to +0.013 NDCG@10 on 12 of the 14 code rows (Go 30K named 0.745 -> 0.753;
    #: "shard": 0.751; Java 30K -0.002 and 0), for 7-10% more time ("shard": 30-40%).
    shard_groups: ShardGroups = "auto"
    #: With shard_groups "auto", a word gets one exact span per shard when its listed terms
    #: held by every shard (those each shard's span repeats) have summed df at most this
    #: share of the documents ...
    shard_exact_df: float = 0.01
    #: ... and those spans hold at most this many more clauses than its shard-set groups:
    #: the engine's time follows the clauses and their postings. Such words are the query's
    #: own identifiers and their parts, whose documents hold rare compounds of several shard
    #: sets (the best of the groups undercounts them). 30 measured: 97% of the gain of no
    #: limit at 36% of its extra clauses.
    shard_exact_clauses: int = 30
    #: q < 1 and rare_first pay off through a rare identifier in the query (a function's
    #: own name). A query whose every word has a split-stream df above this holds none:
    #: there q < 1 only lifts the moderately rare words shared by many near-identical
    #: functions (Go's go-playground/locales: 'af_ZA' in every function of a locale's
    #: file), and the common words' compounds carry what tells those functions apart. Such
    #: a query is scored as the plain split stream: q = 1, the budget by score mass alone
    #: (select "mass", rare_first off; 8331d43 measured this option with select "cover":
    #: "mass" added 0.004 NDCG@10 on Go's family queries, f5273c3). Where the nodes keep
    #: whole words (select "all"/"auto") there is no budget: such a query takes every
    #: compound, the split stream itself (docs/benchmarks/identifiers.md, 2026-12-07: +0.030
    #: NDCG@10 on Go's family queries against "mass", at half the engine's time).
    #: None (the default): every query alike. Measured (docs/benchmarks/identifiers.md, 8331d43),
    #: 10 is a trade, not a default: on one shard Go 153K +0.011 NDCG@10 with names and
    #: +0.035 without (at or above the code reindex), Java, Python and Ruby -0.005 to
    #: -0.020; on 3 shards the same loss puts Python 30K and Ruby below the reindex.
    rare_word_df: int | None = None
    #: A query holding a word of a generated family (a df shared by this many times more words than
    #: the df values around it, beyond chance: IdentifierStats.family_excess) is scored as the plain
    #: split stream too: the family's members differ only in the words they all share, and q < 1
    #: lifts the family's own names (a locale code) over those. This is what rare_word_df was for,
    #: without its cost: on the benchmark corpora only Go's go-playground/locales spikes (4.4x and
    #: 30x; nothing else reaches 2.2x), so 3 fires on 23% of Go's named queries (94% of those about
    #: locales, 1% of the rest) and on none of Java's, Python's or Ruby's. Measured
    #: (docs/benchmarks/identifiers.md, f5273c3), all Go 153K queries on one shard: 0.641 -> 0.667
    #: NDCG@10 with names, 0.268 -> 0.311 without (the code reindex: 0.661, 0.293). None: off.
    family_excess: float | None = FAMILY_EXCESS
    #: On several shards, send each shard a query of its own (the terms it holds, boosts
    #: from its own statistics: esqlog.identifiers.shards) in one _msearch, without dfs,
    #: when calibrate recorded each shard's statistics and the search is a plain one
    #: (esqlog.wrapper.fan_out). Every word is then one exact saturation, as on one shard.
    #: False: one query for all shards, grouped by shard set, with dfs_query_then_fetch.
    fan_out: bool = True
    #: The engine query of a group of terms: "span" (span_or of span_term, any cluster) or
    #: "plugin" (esqlog_terms with ``"idf": false``, from the esqlog-terms engine plugin:
    #: the same one saturation per word without positions, with dynamic pruning and no
    #: engine idf, so the boost is the word's weight and ONE plain query, without dfs or
    #: the fan-out, scores every shard as the per-shard span queries do:
    #: esqlog.identifiers.synonym). ``fan_out`` then has no effect. The plugin must be
    #: installed on every data node. "auto" (the default): the plugin where the
    #: calibration found it on every data node (esqlog.calibration.plugin), spans
    #: otherwise; a search the cluster refuses as an unknown query goes again with spans,
    #: and the wrapper keeps to spans from then on (esqlog.wrapper.engine_query). A
    #: builder given "auto" unresolved builds spans.
    engine_query: EngineQuery = "auto"
    #: with the plugin: send each word with its weight and let the node choose the compounds
    #: (esqlog.identifiers.node_plan) where calibrate wrote the word lists and every data node
    #: runs esqlog-terms 1.9.0 or later; the same terms and scores, without the client's ~0.5
    #: ms of planning a search (docs/benchmarks/identifiers.md). False plans on the client.
    node_plan: bool = True

    def __post_init__(self) -> None:
        if self.budget is not None and self.budget < 1:
            raise UsageError(
                f"the clause budget must be at least 1, got {self.budget}",
                "pass a positive budget (OpenSearch allows 1,024 by default)",
            )
        if self.rare_word_df is not None and self.rare_word_df < 0:
            raise UsageError(
                f"rare_word_df must be >= 0, got {self.rare_word_df}",
                "pass a document frequency, e.g. 10, or None",
            )
        if self.family_excess is not None and self.family_excess <= 1.0:
            raise UsageError(
                f"family_excess must be above 1, got {self.family_excess}",
                "pass a ratio such as 3, or None",
            )
        if self.cap is not None and self.cap < 0:
            raise UsageError(f"the compound cap must be >= 0, got {self.cap}", "pass 0 or more")
        if not 0.0 <= self.span_max_df <= 1.0:
            raise UsageError(
                f"span_max_df must be between 0 and 1, got {self.span_max_df}",
                "pass a share of documents, e.g. 0.01",
            )
        if self.common not in COMMON:
            raise UsageError(
                f"common must be 'split' or 'own', got {self.common!r}",
                "pass common='split' or 'own'",
            )
        if self.shard_groups not in SHARD_GROUPS:
            raise UsageError(
                f"shard_groups must be one of {', '.join(SHARD_GROUPS)}, got {self.shard_groups!r}",
                "pass shard_groups='auto', 'max', 'sum' or 'shard'",
            )
        if not 0.0 <= self.shard_exact_df <= 1.0:
            raise UsageError(
                f"shard_exact_df must be between 0 and 1, got {self.shard_exact_df}",
                "pass a share of documents, e.g. 0.01",
            )
        if self.shard_exact_clauses < 0:
            raise UsageError(
                f"shard_exact_clauses must be >= 0, got {self.shard_exact_clauses}",
                "pass 0 or more, e.g. 30",
            )
        if self.engine_query not in ENGINE_QUERIES:
            raise UsageError(
                f"engine_query must be 'auto', 'span' or 'plugin', got {self.engine_query!r}",
                "pass engine_query='auto' (the plugin where calibrate found it), "
                "or 'plugin' only where the esqlog-terms engine plugin is "
                "installed",
            )
        if self.select not in SELECTIONS:
            raise UsageError(
                f"select must be one of {', '.join(SELECTIONS)}, got {self.select!r}",
                "pass select='auto', 'all', 'cover', 'words', 'multi' or 'mass'",
            )
        if self.operator not in OPERATORS:
            raise UsageError(
                f"operator must be 'or' or 'and', got {self.operator!r}",
                "pass operator='or' or 'and'",
            )

    @property
    def whole_words(self) -> bool:
        """Whether the nodes are to keep each word's whole group (select "all", or "auto"
        once esqlog.wrapper.engine_query resolved it to stay): no budget chooses there."""
        return self.select in ("all", "auto")

    @property
    def budget_select(self) -> Selection:
        """What the clause budget takes first where a budget chooses (on the client, or on
        a node for "cover"...): "all" and "auto" leave no choice to a budget on the nodes,
        and where a budget does choose they take the default's, "cover"."""
        return "cover" if self.whole_words else self.select

    def budget_for(self, shards: int, fan_out: bool = False) -> int:
        """The clause budget on an index of ``shards`` shards (``fan_out``: of each shard's
        own query, esqlog.identifiers.shards)."""
        if self.budget is not None:
            return self.budget
        if fan_out and shards > 1:
            return FAN_OUT_BUDGET
        return DEFAULT_BUDGET if shards <= 1 else MULTI_SHARD_BUDGET
