"""Query helpers shared by ``esqlog search`` and ``esqlog explain``: check the query text,
load and check the calibration, analyze the text, and the arguments both commands take."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click

from esqlog.analysis import search_analyses_plan
from esqlog.calibrate import Calibration, check_calibration_plan, load_calibration, stale_warning
from esqlog.cli.options import open_engine, warn_once
from esqlog.connection import ConnectionSettings
from esqlog.engine import Engine
from esqlog.errors import UsageError
from esqlog.stats import TextStats, shard_routings_plan, text_stats_plan

MAX_QUERY_BYTES = 100 * 1024
_ALLOWED_CONTROLS = frozenset("\t\n")
F = TypeVar("F", bound=Callable[..., Any])


def check_query_text(text: str) -> str:
    """Reject query text that cannot be a sensible search, before any request is sent.

    Order matters: bytes that are not UTF-8 cannot even be measured or shown safely, so
    they are named first.
    """
    bad = next((i for i, ch in enumerate(text) if "\ud800" <= ch <= "\udfff"), None)
    if bad is not None:
        raw = text[bad].encode("utf-8", "surrogateescape")
        raise UsageError(
            f"query text is not valid UTF-8 (byte 0x{raw.hex()} at character {bad})",
            "pass the query as UTF-8 text (check the terminal's or file's encoding)")
    size = len(text.encode("utf-8"))
    if size > MAX_QUERY_BYTES:
        raise UsageError(f"query text is {size:,} bytes, more than the {MAX_QUERY_BYTES:,} "
                         "esqlog accepts", "search for fewer words")
    control = next((i for i, ch in enumerate(text)
                    if ch not in _ALLOWED_CONTROLS and unicodedata.category(ch) == "Cc"), None)
    if control is not None:
        raise UsageError(
            f"query text contains a control character (U+{ord(text[control]):04X} at "
            f"character {control})", "remove it; only tab and newline are allowed")
    if not text.strip():
        raise UsageError("query text is empty", "pass the words to search for")
    return text


def shown(text: str, limit: int = 60) -> str:
    """A short single-line rendering of user text for error messages."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit - 3] + "..."


def load_for_field(calibration_file: Path, field_name: str | None) -> tuple[Calibration, str]:
    """The calibration and its field; a --field naming another field is refused, because
    its q and statistics describe only the field it was calibrated on."""
    calibration = load_calibration(calibration_file)
    field = field_name or calibration.field
    if field != calibration.field:
        raise UsageError(f"the calibration is for field {calibration.field!r}, not {field!r}",
                         f"pass --field {calibration.field}, or calibrate --field {field}")
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


def prepare_query(connection: ConnectionSettings, index: str, field_name: str | None,
                  text: str, calibration_file: Path) -> QueryContext:
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
    stats = engine.run(text_stats_plan(calibration.index, field, text, routings,
                                       analysis.per_field().get(field)))
    if not stats.terms:
        raise UsageError(
            f"query text {shown(text)!r} analyzes to no terms with the analyzer of field {field!r}",
            "search for words, not only punctuation or stop words")
    return QueryContext(engine, calibration, index, field, text, stats, routings)


def query_arguments(func: F) -> F:
    """INDEX, QUERY, --field and --calibration: what search and explain both take."""
    for decorator in reversed([
        click.argument("index"),
        click.argument("text", metavar="QUERY"),
        click.option("--field", "field_name",
                     help="The calibrated text field (default: the calibration's field)."),
        click.option("--calibration", "calibration_file", required=True,
                     type=click.Path(path_type=Path),
                     help="Calibration JSON written by esqlog calibrate --out."),
    ]):
        func = decorator(func)
    return func
