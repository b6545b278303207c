"""The clause that replaces one match in an identifiers search: planned on the nodes
(``esqlog_identifiers``) where the plugin plans it, else on the client, within the engine's
clause limit.

Why a module of its own: the rewriter (esqlog.wrapper.identifier_search) decides which
matches of a search become identifiers queries and on which shards; what one match becomes,
and how many terms that costs against the engine's limit, is this module's concern.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from functools import lru_cache
from typing import Any

from esqlog.identifiers import node_plan, synonym
from esqlog.identifiers.query import IdentifierPlan, weigh_words
from esqlog.identifiers.settings import IdentifierSettings
from esqlog.identifiers.shards import matching_query, one_query, shard_queries
from esqlog.identifiers.split_stats import IdentifierStats
from esqlog.scoring.matchspec import MatchSpec, Operator
from esqlog.statistics.vocabulary import Vocabulary
from esqlog.wrapper.lru import LRU
from esqlog.wrapper.plan_memory import remembered, remembered_plan

#: (key, message) -> one warning per key
Warn = Callable[[str, str], None]


def terms_in(node: Any) -> int:
    """Terms Lucene counts against its clause limit in a generated identifiers query."""
    if isinstance(node, list):
        return sum(terms_in(child) for child in node)
    if not isinstance(node, Mapping):
        return 0
    total = 0
    for key, value in node.items():
        if key in ("term", "span_term"):
            total += 1
        elif key == synonym.QUERY_NAME and isinstance(value, Mapping):
            total += len(value.get("terms", ()))
        elif key == "terms" and isinstance(value, Mapping):
            total += sum(len(v) for v in value.values() if isinstance(v, list))
        else:
            total += terms_in(value)
    return total


def decorated(query: dict[str, Any], spec: MatchSpec) -> dict[str, Any]:
    """The match clause's ``boost`` and ``_name`` on the clause that replaces it."""
    kind, inner = next(iter(query.items()))
    extra: dict[str, Any] = {}
    if spec.options.boost != 1.0:
        extra["boost"] = spec.options.boost
    if spec.options.name is not None:
        extra["_name"] = spec.options.name
    return {kind: {**inner, **extra}} if extra else query


def build_clauses(
    base: IdentifierSettings,
    spec: MatchSpec,
    stats: IdentifierStats,
    vocab: Vocabulary,
    allowed: int,
    fan_out: bool,
    index: str,
    matching: bool,
    warn: Warn,
    plans: LRU | None = None,
    lists: str | None = None,
) -> list[dict[str, Any]] | None:
    """The clause for one match (``fan_out``: one per shard), within ``allowed`` terms;
    None (left as written) when even a budget of one clause per word does not fit the
    engine's limit.

    Whether sent per shard or not, the terms are chosen the same way (the module
    docstring): laid out as on one shard when the statistics allow the fan-out."""
    plugin = base.engine_query == "plugin"  # one query, laid out as on one shard
    per_shard = base.fan_out and stats.per_shard and not plugin
    layout = 1 if per_shard else None
    one_shard = per_shard or plugin
    settings = _settings(
        base, spec.options.operator, spec.options.msm, base.budget_for(stats.shards, one_shard)
    )
    filtered = spec.options.operator == "and" or spec.options.msm is not None
    if lists is not None and plugin and not filtered and not matching:
        # the node chooses the compounds (esqlog.identifiers.node_plan): the same terms
        budget = settings.budget_for(stats.shards, one_shard)
        weighed = remembered(spec.text, stats, vocab, settings, None, plans, weigh_words)
        if node_plan.fits(budget, len(weighed.present), allowed, settings.whole_words):
            return [decorated(node_plan.node_clause(weighed, spec.field, lists, budget), spec)]
    if settings.select == "all":  # every compound is the nodes' plan only; the budget here
        # takes "cover" (IdentifierSettings.budget_select), said once ("auto" means that)
        warn(
            f"select-all:{index}",
            (
                f"esqlog: select='all' needs the nodes' plan (esqlog-terms {node_plan.EVERY} "
                "or later, one shard's layout, no and/minimum_should_match); this search "
                "takes the clause budget's choice (select='cover') instead"
            ),
        )
    while True:
        plan = remembered_plan(spec.text, stats, vocab, settings, layout, plans)
        # without an and/msm filter any query of the plan (one shard's too, laid out as on
        # one shard) lists at most the plan's terms, as span_term, term or esqlog_terms: the
        # plan counts them (walking the built query cost as much as planning it), and the
        # per-shard queries need no query of the whole plan built
        query = None if per_shard and not filtered else plan.query(spec.field, settings)
        used = terms_in(query) if filtered else plan.clauses
        if used <= allowed:
            if not per_shard:
                assert query is not None
                return [decorated(query, spec)]
            if fan_out:
                return [
                    decorated(q, spec) for q in shard_queries(plan, stats, spec.field, settings)
                ]
            if matching:
                return [decorated(matching_query(plan, spec.field, settings), spec)]
            return [
                decorated(_one_query(plan, stats, spec.field, settings, allowed, index, warn), spec)
            ]
        budget = settings.budget_for(stats.shards, one_shard)
        if budget <= 1:
            return None
        settings = replace(settings, budget=max(1, budget * allowed // used - 1))


@lru_cache(maxsize=64)
def _settings(
    base: IdentifierSettings, operator: Operator, msm: int | str | None, budget: int
) -> IdentifierSettings:
    """The settings of one match clause: built (and checked) once per combination, not on
    every search."""
    return replace(base, operator=operator, minimum_should_match=msm, budget=budget)


def _one_query(
    plan: IdentifierPlan,
    stats: IdentifierStats,
    field: str,
    settings: IdentifierSettings,
    allowed: int,
    index: str,
    warn: Warn,
) -> dict[str, Any]:
    """The per-shard queries' terms as one dfs query: one span per shard (exact up to
    the length norm's average), or by shard set where that exceeds the clause limit
    (the same match set; one warning: some words score by their best group)."""
    query = one_query(plan, stats, field, settings)
    if terms_in(query) <= allowed:
        return query
    warn(
        f"groups:{index}",
        (
            f"esqlog: a search of {index!r} that cannot go to each shard on its own holds "
            "too many terms for one span per shard under the engine's clause limit; its "
            "words score by their best shard-set group (the same match set)"
        ),
    )
    return one_query(plan, stats, field, settings, exact=False)
