"""esqlog search: run one query with q-log IDF (optionally next to the native ranking)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import click

from esqlog.calibration.record import Calibration
from esqlog.cli.hits import Hit, hits_of, search_kwargs
from esqlog.cli.query import QueryContext, prepare_query, query_arguments
from esqlog.cli.shared_options import connection_options
from esqlog.engine.connection import ConnectionSettings
from esqlog.errors import UsageError
from esqlog.wrapper.options import QUERY_MODES

#: the wrapper's modes that change a query (identifiers included: its own match set)
CLI_MODES = QUERY_MODES


# --- search ---------------------------------------------------------------------------------


def run_search(ctx: QueryContext, mode: str, size: int, joins: bool = False) -> list[Hit]:
    """The q-log ranking through esqlog's own wrapper, so the CLI tests what apps run.

    ``auto`` (the default) is the wrapper's choice for the calibration: identifiers where
    it says the field is code and holds the identifiers statistics, boost otherwise
    (esqlog.identifiers.calibrate.auto_mode).
    """
    from esqlog.wrapper import ScriptingUnavailable, wrap

    if mode == "auto":
        mode = resolve_auto(ctx.calibration, joins)[0]
    if mode == "identifiers":  # built directly from the files (see identifiers_view), so the
        # wrapper's identifiers mode has an independent reference to be tested against
        from esqlog.cli.identifiers_view import run_identifier_search

        return run_identifier_search(ctx, size)
    client = wrap(ctx.engine.client, ctx.calibration, joins=joins)
    kwargs = search_kwargs(ctx, size)
    try:
        response = client.search(**kwargs, esqlog_mode=mode)
    except ScriptingUnavailable:
        from esqlog.calibration.cluster_store import script_mode_problem_plan

        problem = ctx.engine.run(script_mode_problem_plan())
        if problem is not None:  # the fix that works on this cluster, not a guess
            raise problem from None
        raise
    return hits_of(response, ctx.field)


def resolve_auto(calibration: Calibration, joins: bool) -> tuple[str, str]:
    """What ``--mode auto`` is for this calibration, and why (joins are a boost option)."""
    if joins:
        return "boost", "--joins is a boost option"
    from esqlog.identifiers.calibrate import auto_mode

    return auto_mode(calibration)


def run_native(ctx: QueryContext, size: int) -> list[Hit]:
    """The engine's own BM25 ranking of the same request."""
    return hits_of(ctx.engine.client.search(**search_kwargs(ctx, size)), ctx.field)


def raise_if_too_many_terms(exc: BaseException, ctx: QueryContext) -> None:
    """The engine's clause limit is a property of the query text: say so as bad input."""
    from esqlog.engine.failures import error_reason, is_client_error

    reason = error_reason(exc) if is_client_error(exc) else ""
    if (
        "maxclausecount" in reason.lower()
        or "too_many" in reason.lower()
        or ("too many" in reason.lower() and "clause" in reason.lower())
    ):
        distinct = len(set(ctx.stats.terms))
        raise UsageError(
            f"the query has {distinct:,} distinct terms, more than the cluster "
            f"accepts in one query ({reason})",
            "search for fewer words",
        ) from None


def movement(hit: Hit, native_ranks: Mapping[str, int]) -> str:
    """How far a q-log hit moved against the native ranking: up 2, down 1, new, or ''."""
    before = native_ranks.get(hit.id)
    if before is None:
        return "new"
    if before == hit.rank:
        return ""
    return f"up {before - hit.rank}" if before > hit.rank else f"down {hit.rank - before}"


def format_hits(hits: Sequence[Hit]) -> str:
    """rank, id, score, label: one line per hit."""
    if not hits:
        return "no hits"
    width = max(len(h.id) for h in hits)
    return "\n".join(f"{h.rank:>3}  {h.id:<{width}}  {h.score:>10.4f}  {h.label}" for h in hits)


def format_compare(native: Sequence[Hit], qlog: Sequence[Hit]) -> str:
    """Native and q-log rankings side by side; q-log ids that moved are marked."""
    ranks = {h.id: h.rank for h in native}
    width = max([len(h.id) for h in [*native, *qlog]] + [len("native id")])
    lines = [
        f"{'rank':>4}  {'native id':<{width}}  {'score':>10}  |  "
        f"{'q-log id':<{width}}  {'score':>10}  moved"
    ]
    for i in range(max(len(native), len(qlog))):
        left = native[i] if i < len(native) else None
        right = qlog[i] if i < len(qlog) else None
        lines.append(
            f"{i + 1:>4}  {left.id if left else '':<{width}}  "
            f"{f'{left.score:.4f}' if left else '':>10}  |  "
            f"{right.id if right else '':<{width}}  "
            f"{f'{right.score:.4f}' if right else '':>10}  "
            f"{movement(right, ranks) if right else ''}".rstrip()
        )
    return "\n".join(lines)


def _hits_json(hits: Sequence[Hit]) -> list[dict[str, Any]]:
    return [{"rank": h.rank, "id": h.id, "score": h.score, "label": h.label} for h in hits]


@click.command("search")
@connection_options
@query_arguments
@click.option(
    "--mode",
    type=click.Choice(CLI_MODES),
    default="auto",
    show_default=True,
    help="auto: identifiers where the calibration says code, else boost; "
    "boost: per-term boosts (no scripts); script: stored Painless script; "
    "rerank: native top-N rescored here; "
    "identifiers: query words also match inside identifiers (needs "
    "calibrate --vocabulary --identifiers; a different match set).",
)
@click.option(
    "--size",
    type=click.IntRange(1, 10_000),
    default=10,
    show_default=True,
    help="How many hits to show.",
)
@click.option("--compare", is_flag=True, help="Show the native BM25 ranking next to q-log's.")
@click.option(
    "--joins/--no-joins",
    default=False,
    show_default=True,
    help="Add identifier joins (read file -> readfile, read_file) found in the index.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of a table.")
def search_command(
    connection: ConnectionSettings,
    index: str,
    text: str,
    field_name: str | None,
    calibration_file: Path,
    mode: str,
    size: int,
    compare: bool,
    joins: bool,
    as_json: bool,
) -> None:
    """Search INDEX for QUERY with q-log IDF (a match query on the calibrated field).

    The index is only read. With --compare the native BM25 ranking is shown beside it.
    """
    ctx = prepare_query(connection, index, field_name, text, calibration_file)
    if mode == "auto":  # the chosen mode is named in the output (esqlog calibrate says why)
        mode = resolve_auto(ctx.calibration, joins)[0]
    try:
        qlog = run_search(ctx, mode, size, joins)
        native = run_native(ctx, size) if compare else None
    except Exception as exc:
        raise_if_too_many_terms(exc, ctx)
        raise
    if as_json:
        out: dict[str, Any] = {
            "index": ctx.calibration.index,
            "field": ctx.field,
            "q": ctx.calibration.q,
            "mode": mode,
            "terms": list(dict.fromkeys(ctx.stats.terms)),
            "hits": _hits_json(qlog),
        }
        if native is not None:
            out["native"] = _hits_json(native)
        click.echo(json.dumps(out, ensure_ascii=False))
        return
    click.echo(
        f"q-log BM25 (q={ctx.calibration.q:g}, mode {mode}) on {ctx.calibration.index}/{ctx.field}"
    )
    click.echo(format_compare(native, qlog) if native is not None else format_hits(qlog))
