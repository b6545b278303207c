"""Query helpers shared by ``esqlog search`` and ``esqlog explain``: check the query text
(esqlog.scoring.query_text), load and check the calibration, analyze the text, and the
arguments both commands take."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click

from esqlog.calibration.files import load_calibration
from esqlog.calibration.freshness import check_calibration_plan, stale_warning
from esqlog.calibration.record import Calibration
from esqlog.cli.shared_options import open_engine, warn_once
from esqlog.engine.client import Engine
from esqlog.engine.connection import ConnectionSettings
from esqlog.errors import UsageError
from esqlog.scoring.query_text import check_query_text
from esqlog.statistics.analysis import search_analyses_plan
from esqlog.statistics.terms import TextStats, shard_routings_plan, text_stats_plan

F = TypeVar("F", bound=Callable[..., Any])


def shown(text: str, limit: int = 60) -> str:
    """A short single-line rendering of user text for error messages."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def load_for_field(calibration_file: Path, field_name: str | None) -> tuple[Calibration, str]:
    """The calibration and its field; a --field naming another field is refused, because
    its q and statistics describe only the field it was calibrated on."""
    calibration = load_calibration(calibration_file)
    field = field_name or calibration.field
    if field != calibration.field:
        raise UsageError(
            f"the calibration is for field {calibration.field!r}, not {field!r}",
            f"pass --field {calibration.field}, or calibrate --field {field}",
        )
    return calibration, field


@dataclass(frozen=True)
class QueryContext:
    """A live engine, a calibration checked against it, and the analyzed query text."""

    engine: Engine
    calibration: Calibration
    index: str
    field: str
    text: str
    stats: TextStats
    routings: tuple[str, ...]


def prepare_query(
    connection: ConnectionSettings,
    index: str,
    field_name: str | None,
    text: str,
    calibration_file: Path,
) -> QueryContext:
    """Validate input, load the calibration, check it is this index's, analyze the text.

    A calibration of another index (different UUID) is refused; a stale one is used with a
    warning on stderr, since its q is still the best one known.
    """
    check_query_text(text)
    calibration, field = load_for_field(calibration_file, field_name)
    engine = open_engine(connection)
    fresh = engine.run(check_calibration_plan(calibration, index))
    warning = stale_warning(calibration, fresh)
    if warning:
        warn_once(warning, "drift")  # the wrapper's snapshot check may notice it too
    routings = engine.run(shard_routings_plan(calibration.index, calibration.shards))
    analysis = engine.run(search_analyses_plan(calibration.index, [field], {}))  # as match does
    stats = engine.run(
        text_stats_plan(calibration.index, field, text, routings, analysis.per_field().get(field))
    )
    if not stats.terms:
        raise UsageError(
            f"query text {shown(text)!r} analyzes to no terms with the analyzer of field {field!r}",
            "search for words, not only punctuation or stop words",
        )
    return QueryContext(engine, calibration, index, field, text, stats, routings)


def query_arguments(func: F) -> F:
    """INDEX, QUERY, --field and --calibration: what search and explain both take."""
    for decorator in reversed(
        [
            click.argument("index"),
            click.argument("text", metavar="QUERY"),
            click.option(
                "--field",
                "field_name",
                help="The calibrated text field (default: the calibration's field).",
            ),
            click.option(
                "--calibration",
                "calibration_file",
                required=True,
                type=click.Path(path_type=Path),
                help="Calibration JSON written by esqlog calibrate --out.",
            ),
        ]
    ):
        func = decorator(func)
    return func
