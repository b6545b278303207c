"""The CLI side of the identifiers mode: search with it, and explain its sub-words.

Kept apart from search_cmd/explain_cmd so that they only dispatch here; the query itself
comes from the I/O-free builder the wrapper uses too (esqlog.identifiers.query).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from esqlog.cli.hits import Hit, hits_of, search_kwargs
from esqlog.cli.query import QueryContext
from esqlog.errors import ClusterError
from esqlog.identifiers.files import load_with_vocabulary
from esqlog.identifiers.query import IdentifierPlan, plan_identifier_query
from esqlog.identifiers.settings import IdentifierSettings
from esqlog.identifiers.shards import shard_queries
from esqlog.identifiers.split_stats import IdentifierStats
from esqlog.statistics.vocabulary import Vocabulary
from esqlog.wrapper.fan_out import merge_responses


@dataclass(frozen=True)
class IdentifierContext:
    stats: IdentifierStats
    vocabulary: Vocabulary
    plan: IdentifierPlan
    settings: IdentifierSettings
    fan_out: bool = False  # one query per shard (esqlog.identifiers.shards)


def identifier_context(ctx: QueryContext, budget: int | None = None) -> IdentifierContext:
    """Load the calibration's snapshot and split statistics, and plan the query."""
    stats, vocab = load_with_vocabulary(ctx.calibration)
    settings = IdentifierSettings() if budget is None else IdentifierSettings(budget=budget)
    # as the wrapper plans a plain search: each shard its own query when calibrate
    # recorded the shards' statistics (esqlog.identifiers.shards)
    fan_out = settings.fan_out and stats.per_shard
    settings = replace(settings, budget=settings.budget_for(stats.shards, fan_out))
    plan = plan_identifier_query(ctx.text, stats, vocab.df_of, settings, 1 if fan_out else None)
    return IdentifierContext(stats, vocab, plan, settings, fan_out)


def run_identifier_search(ctx: QueryContext, size: int) -> list[Hit]:
    """The ranking of the identifiers mode (the same request shape as the other modes)."""
    found = identifier_context(ctx)
    kwargs = search_kwargs(ctx, size)
    if found.fan_out:
        return hits_of(_fanned_out(ctx, found, size), ctx.field)
    query = found.plan.query(ctx.field, found.settings)
    if "body" in kwargs:
        kwargs["body"] = {**kwargs["body"], "query": query}
    else:
        kwargs["query"] = query
    return hits_of(ctx.engine.client.search(**kwargs), ctx.field)


def _fanned_out(ctx: QueryContext, found: IdentifierContext, size: int) -> dict[str, Any]:
    """One request per shard in one msearch, merged (esqlog.wrapper.fan_out)."""
    searches: list[dict[str, Any]] = []
    for shard, query in enumerate(
        shard_queries(found.plan, found.stats, ctx.field, found.settings)
    ):
        searches += [
            {"index": ctx.index, "preference": f"_shards:{shard}"},
            {"query": query, "size": size, "_source": ["name", ctx.field]},
        ]
    key = "searches" if ctx.engine.flavor == "elasticsearch" else "body"
    raw = ctx.engine.client.msearch(**{key: searches})
    merged = merge_responses(raw["responses"], raw.get("took"), 0, size, None)
    if merged is None:
        errors = [r.get("error") for r in raw["responses"] if "error" in r]
        reason = errors[0].get("reason") if errors and isinstance(errors[0], dict) else errors
        raise ClusterError(
            f"a shard of {ctx.index!r} failed the identifiers search: {reason}",
            "check the cluster's health, then search again",
        )
    return merged


def subword_rows(found: IdentifierContext) -> list[dict[str, Any]]:
    """Per word of the query's split stream: split df, weight, compounds covered/total."""
    return [
        {
            "word": w.word,
            "occurrences": w.count,
            "df": w.df,
            "N": found.stats.split_docs,
            "weight": w.weight,
            "compounds": w.compounds_used,
            "compounds_total": w.compounds_total,
            "spans": len(w.groups) - int(w.apart),
            "own_term_apart": w.apart,
            "exact": w.exact,
        }
        for w in found.plan.words
    ]


def format_subword_rows(found: IdentifierContext) -> str:
    """A fixed-width table of :func:`subword_rows` with a header line."""
    rows = subword_rows(found)
    width = max([len(r["word"]) for r in rows] + [7])
    source = (
        "the split stream's prediction"
        if found.settings.q is None
        else f"fixed; the split stream predicts {found.stats.q:g}"
    )
    if found.plan.family:
        df = next(w.df for w in found.plan.words if w.word == found.plan.family)
        spike = found.stats.family_excess(df)
        source = (
            f"'{found.plan.family}' names a generated family ({spike:.1f}x the words "
            f"of df {df:,} around it): scored as the plain split stream"
        )
    elif found.plan.plain:
        source = (
            f"no word of split df <= {found.settings.rare_word_df} in the query: "
            "scored as the plain split stream"
        )
    lines = [
        f"identifiers mode: q {found.plan.q:g} ({source}, h_tok "
        f"{found.stats.h_tok:.4f}), {found.plan.clauses:,} clauses of a budget of "
        f"{found.settings.budget_for(found.stats.shards, found.fan_out):,}"
        + (
            f", sent to each of the {found.stats.shards} shards with its own statistics"
            if found.fan_out
            else ""
        ),
        f"{'sub-word':<{width}}  {'df':>9}  {'N':>9}  {'weight':>8}  {'compounds':>17}",
    ]
    for r in rows:
        covered = f"{r['compounds']:,}/{r['compounds_total']:,}"
        note = f"  x{r['occurrences']}" if r["occurrences"] > 1 else ""
        note += "  (own term apart)" if r["own_term_apart"] else ""
        if r["spans"] > 1:
            note += (
                f"  ({r['spans']} spans, one per shard: exact)"
                if r["exact"]
                else f"  ({r['spans']} spans by shard set: the best of them)"
                if found.settings.shard_groups != "sum"
                else f"  ({r['spans']} spans by shard set, added)"
            )
        lines.append(
            f"{r['word']:<{width}}  {r['df']:>9,}  {r['N']:>9,}  "
            f"{r['weight']:>8.4f}  {covered:>17}{note}"
        )
    return "\n".join(lines)
