"""The CLI side of the identifiers mode: search with it, and explain its sub-words.

Kept apart from search_cmd/explain_cmd so that they only dispatch here; the query itself
comes from the I/O-free builder the wrapper uses too (esqlog.identifiers).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from esqlog.cli.hits import Hit, hits_of, search_kwargs
from esqlog.cli.query import QueryContext
from esqlog.identifier_stats import IdentifierStats, load_for_calibration
from esqlog.identifiers import IdentifierPlan, IdentifierSettings, plan_identifier_query
from esqlog.vocabulary import Vocabulary, load_vocabulary


@dataclass(frozen=True)
class IdentifierContext:
    stats: IdentifierStats
    vocabulary: Vocabulary
    plan: IdentifierPlan
    settings: IdentifierSettings


def identifier_context(ctx: QueryContext, budget: int | None = None) -> IdentifierContext:
    """Load the calibration's snapshot and split statistics, and plan the query."""
    cal = ctx.calibration
    path = cal.vocabulary_path()
    stats = load_for_calibration(path, cal.vocabulary_sha256)
    assert path is not None  # load_for_calibration refuses a calibration without one
    vocab = load_vocabulary(path, cal.vocabulary_sha256)
    settings = IdentifierSettings() if budget is None else IdentifierSettings(budget=budget)
    plan = plan_identifier_query(ctx.text, stats, vocab.df_of, settings)
    return IdentifierContext(stats, vocab, plan, settings)


def run_identifier_search(ctx: QueryContext, size: int) -> list[Hit]:
    """The ranking of the identifiers mode (the same request shape as the other modes)."""
    found = identifier_context(ctx)
    kwargs = search_kwargs(ctx, size)
    query = found.plan.query(ctx.field, found.settings)
    if "body" in kwargs:
        kwargs["body"] = {**kwargs["body"], "query": query}
    else:
        kwargs["query"] = query
    return hits_of(ctx.engine.client.search(**kwargs), ctx.field)


def subword_rows(found: IdentifierContext) -> list[dict[str, Any]]:
    """Per word of the query's split stream: split df, weight, compounds covered/total."""
    return [{"word": w.word, "occurrences": w.count, "df": w.df,
             "N": found.stats.split_docs, "weight": w.weight,
             "compounds": w.compounds_used, "compounds_total": w.compounds_total,
             "spans": len(w.groups) - int(w.apart), "own_term_apart": w.apart,
             "exact": w.exact}
            for w in found.plan.words]


def format_subword_rows(found: IdentifierContext) -> str:
    """A fixed-width table of :func:`subword_rows` with a header line."""
    rows = subword_rows(found)
    width = max([len(r["word"]) for r in rows] + [7])
    source = ("the split stream's prediction" if found.settings.q is None
              else f"fixed; the split stream predicts {found.stats.q:g}")
    if found.plan.family:
        df = next(w.df for w in found.plan.words if w.word == found.plan.family)
        spike = found.stats.family_excess(df)
        source = (f"'{found.plan.family}' names a generated family ({spike:.1f}x the words "
                  f"of df {df:,} around it): scored as the plain split stream")
    elif found.plan.plain:
        source = (f"no word of split df <= {found.settings.rare_word_df} in the query: "
                  "scored as the plain split stream")
    lines = [f"identifiers mode: q {found.plan.q:g} ({source}, h_tok "
             f"{found.stats.h_tok:.4f}), {found.plan.clauses:,} clauses of a budget of "
             f"{found.settings.budget_for(found.stats.shards):,}",
             f"{'sub-word':<{width}}  {'df':>9}  {'N':>9}  {'weight':>8}  {'compounds':>17}"]
    for r in rows:
        covered = f"{r['compounds']:,}/{r['compounds_total']:,}"
        note = f"  x{r['occurrences']}" if r["occurrences"] > 1 else ""
        note += "  (own term apart)" if r["own_term_apart"] else ""
        if r["spans"] > 1:
            note += (f"  ({r['spans']} spans, one per shard: exact)" if r["exact"] else
                     f"  ({r['spans']} spans by shard set: the best of them)"
                     if found.settings.shard_groups != "sum" else
                     f"  ({r['spans']} spans by shard set, added)")
        lines.append(f"{r['word']:<{width}}  {r['df']:>9,}  {r['N']:>9,}  "
                     f"{r['weight']:>8.4f}  {covered:>17}{note}")
    return "\n".join(lines)
