"""esqlog explain: what q-log IDF does to each term of a query, from live statistics.

One ``_mtermvectors`` round trip analyzes the query with the field's analyzer and returns
global n and N; the numbers shown are then exactly the ones the query modes use, so a
surprising ranking can be traced to a term's weight.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import click

from esqlog.cli.query import QueryContext, prepare_query, query_arguments
from esqlog.cli.shared_options import connection_options
from esqlog.engine.connection import ConnectionSettings
from esqlog.scoring.qlog import boost_weight, idf, idf_lucene


@dataclass(frozen=True)
class TermRow:
    """One analyzed term with its statistics and q-log numbers."""

    term: str
    occurrences: int
    n: int
    N: int
    idf: float
    idf_q: float
    weight: float


def term_rows(ctx: QueryContext) -> list[TermRow]:
    """Per distinct term, in query order: n, N, Lucene idf, idf_q and the weight the query
    modes apply (qlog.boost_weight, the library's own: not recomputed here)."""
    cal = ctx.calibration
    N = ctx.stats.field.doc_count
    rows = []
    for term in dict.fromkeys(ctx.stats.terms):
        n = ctx.stats.df.get(term, 0)
        native = float(idf_lucene(n, N))
        target = float(idf(n, N, cal.q, cal.idf_form))
        rows.append(
            TermRow(
                term,
                ctx.stats.terms.count(term),
                n,
                N,
                native,
                target,
                float(boost_weight(n, N, cal.q, cal.idf_form)),
            )
        )
    return rows


def join_rows(ctx: QueryContext, weight: float) -> list[TermRow]:
    """Identifier joins of adjacent terms that the index holds (one extra request).

    Their ``weight`` column is w * idf_q / idf: the factor on the join term's own BM25
    score, as the query modes add it.
    """
    from esqlog.scoring.joins import join_candidates
    from esqlog.statistics.terms import term_stats_plan

    candidates = join_candidates(list(ctx.stats.terms))
    if not candidates:
        return []
    _, df = ctx.engine.run(
        term_stats_plan(ctx.calibration.index, ctx.field, candidates, ctx.routings)
    )
    cal = ctx.calibration
    N = ctx.stats.field.doc_count
    rows = []
    for term in candidates:
        n = df.get(term, 0)
        if n == 0:
            continue
        native = float(idf_lucene(n, N))
        target = float(idf(n, N, cal.q, cal.idf_form))
        rows.append(
            TermRow(
                f"+{term}",
                1,
                n,
                N,
                native,
                target,
                weight * float(boost_weight(n, N, cal.q, cal.idf_form)),
            )
        )
    return rows


def format_rows(rows: list[TermRow]) -> str:
    """A fixed-width table; terms absent from the index are flagged (they match nothing)."""
    width = max([len(r.term) for r in rows] + [4])
    lines = [f"{'term':<{width}}  {'n':>9}  {'N':>9}  {'idf':>8}  {'idf_q':>8}  {'weight':>7}"]
    for r in rows:
        note = "  (not in the index)" if r.n == 0 else ""
        note += f"  x{r.occurrences}" if r.occurrences > 1 else ""
        lines.append(
            f"{r.term:<{width}}  {r.n:>9,}  {r.N:>9,}  {r.idf:>8.4f}  "
            f"{r.idf_q:>8.4f}  {r.weight:>7.4f}{note}"
        )
    return "\n".join(lines)


@click.command("explain")
@connection_options
@query_arguments
@click.option(
    "--joins/--no-joins",
    default=False,
    show_default=True,
    help="Also list identifier joins (marked +) with their df and weight.",
)
@click.option(
    "--identifiers",
    "identifiers",
    is_flag=True,
    help="Show the identifiers mode's sub-words: split df, weight, compounds used.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of a table.")
def explain_command(
    connection: ConnectionSettings,
    index: str,
    text: str,
    field_name: str | None,
    calibration_file: Path,
    joins: bool,
    as_json: bool,
    identifiers: bool = False,
) -> None:
    """Show, per analyzed term of QUERY, n, N, idf, idf_q and the weight idf_q / idf.

    weight is the factor q-log IDF multiplies the term's BM25 score by: below 1 for
    common terms, close to 1 for rare ones when q < 1.
    """
    ctx = prepare_query(connection, index, field_name, text, calibration_file)
    cal = ctx.calibration
    rows = term_rows(ctx)
    if joins:
        from esqlog.wrapper.options import join_weight_for

        rows += join_rows(ctx, join_weight_for(None, [cal.join_weight]))
    header: dict[str, Any] = {
        "index": cal.index,
        "field": ctx.field,
        "q": cal.q,
        "idf_form": cal.idf_form,
        "predictor": f"{cal.predictor} v{cal.predictor_version}",
        "engine": ctx.engine.label,
        "calibrated_on": f"{cal.engine} {cal.engine_version}",
    }
    found = None
    if identifiers:
        from esqlog.cli.identifiers_view import identifier_context, subword_rows

        found = identifier_context(ctx)
        header["subwords"] = subword_rows(found)
    if as_json:
        click.echo(json.dumps({**header, "terms": [asdict(r) for r in rows]}, ensure_ascii=False))
        return
    click.echo(
        f"q {cal.q:g} ({header['predictor']}, idf form {cal.idf_form})  "
        f"engine {header['engine']}  index {cal.index}/{ctx.field}"
    )
    click.echo(format_rows(rows))
    if found is not None:
        from esqlog.cli.identifiers_view import format_subword_rows

        click.echo(format_subword_rows(found))
