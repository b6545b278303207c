"""esqlog compare: native vs esqlog on a query log without judgments, before a rollout."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from esqlog.cli.search_cmd import CLI_MODES
from esqlog.cli.shared_options import connection_options, open_engine, progress_factory, warn_once
from esqlog.engine.connection import ConnectionSettings
from esqlog.errors import UsageError
from esqlog.evaluation.overlap import DEFAULT_P
from esqlog.evaluation.rollout import QueryChange, Summary


@click.command("compare")
@connection_options
@click.option("--index", required=True, help="Index (or alias) the application searches.")
@click.option(
    "--queries",
    "queries_path",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Query log: one query per line, or qid<TAB>text, BEIR/esqlog JSONL, TREC topics.",
)
@click.option(
    "--calibration",
    "calibration_file",
    required=True,
    type=click.Path(path_type=Path),
    help="Calibration JSON (esqlog calibrate --out).",
)
@click.option("--field", "field_name", help="The calibrated field (default: the calibration's).")
@click.option(
    "--mode",
    type=click.Choice(CLI_MODES),
    default="auto",
    show_default=True,
    help="The esqlog mode to compare with native BM25 (auto: what wrap() uses "
    "with no mode: identifiers on code, else boost).",
)
@click.option(
    "--joins/--no-joins", default=False, show_default=True, help="With boost: add identifier joins."
)
@click.option(
    "-k",
    "k",
    type=click.IntRange(1, 1000),
    default=10,
    show_default=True,
    help="Page size for overlap@k and the first-result check.",
)
@click.option(
    "--p",
    "p",
    type=click.FloatRange(0.01, 0.999),
    default=DEFAULT_P,
    show_default=True,
    help="RBO persistence (0.9: the top 10 carry 86% of the weight).",
)
@click.option(
    "--depth",
    type=click.IntRange(1, 10_000),
    default=100,
    show_default=True,
    help="Hits fetched per search (RBO looks this deep).",
)
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Only the first N queries.")
@click.option(
    "--show",
    type=click.IntRange(0, 1000),
    default=10,
    show_default=True,
    help="How many of the most changed queries to list.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (every query).")
def compare_command(
    connection: ConnectionSettings,
    index: str,
    queries_path: Path,
    calibration_file: Path,
    field_name: str | None,
    mode: str,
    joins: bool,
    k: int,
    p: float,
    depth: int,
    limit: int | None,
    show: int,
    as_json: bool,
) -> None:
    """What esqlog would change on your own queries, without any judgments.

    Runs every query of the log natively and through esqlog (the wrapper an application
    uses; alternating which goes first, so neither gets the warmer cache), and reports
    overlap@k, rank-biased overlap, how many queries change their first result, the
    queries that change most, and the latency of each. Reads only.
    """
    from esqlog.calibration.files import load_calibration
    from esqlog.calibration.freshness import check_calibration_plan, stale_warning
    from esqlog.cli.eval_inputs import show_notes
    from esqlog.evaluation.judgments import Notes, read_queries
    from esqlog.evaluation.rollout import changes, summarize
    from esqlog.evaluation.systems import Target, run_paired, searcher

    record = load_calibration(calibration_file)
    if mode == "auto" and joins:
        mode = "boost"  # joins are a boost option
    elif mode == "auto":  # the chosen mode is named in the report (esqlog calibrate says why)
        from esqlog.identifiers.calibrate import auto_mode

        mode = auto_mode(record)[0]
    if joins and mode != "boost":
        raise UsageError(f"--joins works with --mode boost, not {mode}", "drop --joins")
    field = field_name or record.field
    if field != record.field:
        raise UsageError(
            f"the calibration is for field {record.field!r}, not {field!r}",
            f"pass --field {record.field}, or calibrate --field {field}",
        )
    notes = Notes()
    log = read_queries(queries_path, notes, plain_lines=True)
    show_notes(notes)
    ids, texts = log.ids[:limit], log.texts[:limit]
    engine = open_engine(connection)
    warning = stale_warning(record, engine.run(check_calibration_plan(record, index)))
    if warning:
        warn_once(warning, "drift")
    target = Target(engine, record.index, field, calibration_file, size=depth, shards=record.shards)
    system = "boost+joins" if joins else mode
    bars = progress_factory(sys.stderr.isatty(), unit="queries")  # a minute or more
    search = searcher(target, system)
    if bars is not None and texts:
        search = _counted(search, bars(f"native and {system}", len(texts)))
    native, esqlog = run_paired(
        ("native", searcher(target, "native")), (system, search), ids, texts
    )
    rows = changes(native, esqlog, texts, k, p)
    summary = summarize(rows, k, p)
    if as_json:
        from esqlog.evaluation.rollout import as_json as report

        out = {
            "index": record.index,
            "field": field,
            "mode": system,
            "q": record.q,
            "notes": notes.lines(),
            **report(summary, rows, show),
        }
        click.echo(json.dumps(out, ensure_ascii=False, default=_finite))
        return
    _print_report(f"{record.index}/{field}", system, record.q, summary, rows, show)


def _counted(search: Callable[[str], Any], advance: Callable[[int], None]) -> Callable[[str], Any]:
    """The search, advancing the bar once per query after the untimed first call; only
    esqlog's side counts, so the bar's own cost can only make esqlog look slower."""
    calls = 0

    def counted(text: str) -> Any:
        nonlocal calls
        found = search(text)
        calls += 1
        if calls > 1:
            advance(1)
        return found

    return counted


def _finite(value: object) -> object:
    return None if isinstance(value, float) and math.isnan(value) else str(value)


def _print_report(
    where: str, system: str, q: float, summary: Summary, rows: list[QueryChange], show: int
) -> None:
    """The summary and the most changed queries, with rich when it is installed."""
    from esqlog.evaluation.rollout import headline, most_changed

    shown_q = "" if system == "identifiers" else f" (q={q:g})"  # that mode has its own q
    title = f"esqlog {system}{shown_q} vs native BM25 on {where}: {summary.queries:,} queries"
    top = most_changed(rows, show)
    columns = [
        "query",
        f"overlap@{summary.k}",
        "RBO",
        "native #1",
        "esqlog #1",
        "native ms",
        "esqlog ms",
    ]
    cells = [
        [
            _short(r.text, 50),
            f"{r.overlap:.0%}",
            f"{r.rbo:.3f}",
            r.native_first or "-",
            r.esqlog_first or "-",
            f"{r.native_ms:.1f}",
            f"{r.esqlog_ms:.1f}",
        ]
        for r in top
    ]
    try:
        from rich.console import Console
        from rich.table import Table
        from rich.text import Text
    except ImportError:  # the 'eval' extra is not installed: plain text
        from esqlog.evaluation.reports import format_table

        click.echo(title)
        click.echo("\n".join(headline(summary)))
        if top:
            click.echo(
                "\nmost changed queries (lowest RBO first):\n"
                + format_table([dict(zip(columns, c, strict=True)) for c in cells], columns)
            )
        return
    # user text goes in as Text, never as markup: "a[i]" in a query must print as typed

    # a pipe or a file gets a wide fixed width, not rich's 80 columns folding every query
    console = Console(soft_wrap=False, width=None if sys.stdout.isatty() else 140)
    console.print(Text(title, style="bold"))
    for sentence in headline(summary):
        console.print(Text(f"  {sentence}"))
    if top:
        table = Table(title="most changed queries (lowest RBO first)", title_justify="left")
        for i, name in enumerate(columns):
            table.add_column(name, justify="left" if i in (0, 3, 4) else "right", overflow="fold")
        for row in cells:
            table.add_row(*(Text(cell) for cell in row))
        console.print(table)


def _short(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
