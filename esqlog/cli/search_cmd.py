"""esqlog search: run one query with q-log IDF (optionally next to the native ranking).

Also home of what ``search`` and ``explain`` share: checking the query text before it
reaches the cluster, and loading a calibration that belongs to the live index.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click

from esqlog.calibrate import Calibration, check_calibration_plan, load_calibration, stale_warning
from esqlog.cli.options import connection_options, open_engine
from esqlog.engine import ConnectionSettings, Engine
from esqlog.errors import UsageError
from esqlog.stats import TextStats, shard_routings_plan, text_stats_plan

MAX_QUERY_BYTES = 100 * 1024
LABEL_CHARS = 80
QUERY_MODES = ("boost", "script", "auto", "rerank", "identifiers")
_ALLOWED_CONTROLS = frozenset("\t\n")
F = TypeVar("F", bound=Callable[..., Any])


# --- shared with explain --------------------------------------------------------------------

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
    calibration = load_calibration(calibration_file)
    field = field_name or calibration.field
    if field != calibration.field:
        raise UsageError(f"the calibration is for field {calibration.field!r}, not {field!r}",
                         f"pass --field {calibration.field}, or calibrate --field {field}")
    engine = open_engine(connection)
    fresh = engine.run(check_calibration_plan(calibration, index))
    warning = stale_warning(calibration, fresh)
    if warning:
        click.echo(warning, err=True)
    routings = engine.run(shard_routings_plan(calibration.index, calibration.shards))
    stats = engine.run(text_stats_plan(calibration.index, field, text, routings))
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
                     type=click.Path(dir_okay=False, path_type=Path),
                     help="Calibration JSON written by esqlog calibrate --out."),
    ]):
        func = decorator(func)
    return func


# --- search ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Hit:
    """One ranked result as printed."""

    rank: int
    id: str
    score: float
    label: str


def _source_value(source: Mapping[str, Any], path: str) -> Any:
    """A field of _source by dotted path (objects nest; a flat dotted key also counts)."""
    if path in source:
        return source[path]
    node: Any = source
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def _as_text(value: Any) -> str:
    if isinstance(value, list):
        return " ".join(_as_text(v) for v in value if v is not None)
    return "" if value is None else str(value)


def hit_label(source: Mapping[str, Any], field: str) -> str:
    """The document's ``name`` if it has one, else the start of the searched field."""
    name = _as_text(_source_value(source, "name")).strip()
    if name:
        return shown(name, LABEL_CHARS)
    return shown(_as_text(_source_value(source, field)), LABEL_CHARS)


def hits_of(response: Any, field: str) -> list[Hit]:
    """Ranked hits of a search response (either client's response type)."""
    body = getattr(response, "body", response)
    hits = (body.get("hits") or {}).get("hits") or []
    return [Hit(i, str(h.get("_id")), float(h.get("_score") or 0.0),
                hit_label(h.get("_source") or {}, field)) for i, h in enumerate(hits, 1)]


def _search_kwargs(ctx: QueryContext, size: int) -> dict[str, Any]:
    """Keyword arguments for the client's own search: both clients, same request."""
    request: dict[str, Any] = {"query": {"match": {ctx.field: ctx.text}}, "size": size,
                               "_source": ["name", ctx.field]}
    kwargs: dict[str, Any] = {"index": ctx.index}
    if ctx.calibration.shards > 1:  # global statistics, as the q-log weights assume
        kwargs["search_type"] = "dfs_query_then_fetch"
    if ctx.engine.flavor == "opensearch":
        kwargs["body"] = request
    else:
        kwargs.update(query=request["query"], size=size, source=request["_source"])
    return kwargs


def run_search(ctx: QueryContext, mode: str, size: int, joins: bool = False) -> list[Hit]:
    """The q-log ranking through esqlog's own wrapper, so the CLI tests what apps run.

    ``auto`` is resolved here (script, then boost on ScriptingUnavailable) rather than by
    the wrapper, so the fallback always re-sends the original query in boost form and the
    reason reaches the user as one warning line.
    """
    from esqlog.wrapper import ScriptingUnavailable, wrap

    if mode == "identifiers":  # its own match set: no wrapper mode (yet), see identifiers_view
        from esqlog.cli.identifiers_view import run_identifier_search

        return run_identifier_search(ctx, size)
    client = wrap(ctx.engine.client, ctx.calibration, joins=joins)
    kwargs = _search_kwargs(ctx, size)
    if mode == "auto":
        try:
            response = client.search(**kwargs, esqlog_mode="script")
        except ScriptingUnavailable as exc:
            click.echo(f"warning: {exc.problem}; falling back to boost mode", err=True)
            response = client.search(**kwargs, esqlog_mode="boost")
    else:
        response = client.search(**kwargs, esqlog_mode=mode)
    return hits_of(response, ctx.field)


def run_native(ctx: QueryContext, size: int) -> list[Hit]:
    """The engine's own BM25 ranking of the same request."""
    return hits_of(ctx.engine.client.search(**_search_kwargs(ctx, size)), ctx.field)


def raise_if_too_many_terms(exc: BaseException, ctx: QueryContext) -> None:
    """The engine's clause limit is a property of the query text: say so as bad input."""
    from esqlog.engine import error_reason, is_client_error

    reason = error_reason(exc) if is_client_error(exc) else ""
    if "maxclausecount" in reason.lower() or "too_many" in reason.lower() or (
            "too many" in reason.lower() and "clause" in reason.lower()):
        distinct = len(set(ctx.stats.terms))
        raise UsageError(f"the query has {distinct:,} distinct terms, more than the cluster "
                         f"accepts in one query ({reason})", "search for fewer words") from None


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
    lines = [f"{'rank':>4}  {'native id':<{width}}  {'score':>10}  |  "
             f"{'q-log id':<{width}}  {'score':>10}  moved"]
    for i in range(max(len(native), len(qlog))):
        left = native[i] if i < len(native) else None
        right = qlog[i] if i < len(qlog) else None
        lines.append(
            f"{i + 1:>4}  {left.id if left else '':<{width}}  "
            f"{f'{left.score:.4f}' if left else '':>10}  |  "
            f"{right.id if right else '':<{width}}  "
            f"{f'{right.score:.4f}' if right else '':>10}  "
            f"{movement(right, ranks) if right else ''}".rstrip())
    return "\n".join(lines)


def _hits_json(hits: Sequence[Hit]) -> list[dict[str, Any]]:
    return [{"rank": h.rank, "id": h.id, "score": h.score, "label": h.label} for h in hits]


@click.command("search")
@connection_options
@query_arguments
@click.option("--mode", type=click.Choice(QUERY_MODES), default="boost", show_default=True,
              help="boost: per-term boosts (no scripts); script: stored Painless script; "
                   "auto: script, else boost; rerank: native top-N rescored here; "
                   "identifiers: query words also match inside identifiers (needs "
                   "calibrate --vocabulary --identifiers; a different match set).")
@click.option("--size", type=click.IntRange(1, 10_000), default=10, show_default=True,
              help="How many hits to show.")
@click.option("--compare", is_flag=True, help="Show the native BM25 ranking next to q-log's.")
@click.option("--joins/--no-joins", default=False, show_default=True,
              help="Add identifier joins (read file -> readfile, read_file) found in the index.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of a table.")
def search_command(connection: ConnectionSettings, index: str, text: str,
                   field_name: str | None, calibration_file: Path, mode: str, size: int,
                   compare: bool, joins: bool, as_json: bool) -> None:
    """Search INDEX for QUERY with q-log IDF (a match query on the calibrated field).

    The index is only read. With --compare the native BM25 ranking is shown beside it.
    """
    ctx = prepare_query(connection, index, field_name, text, calibration_file)
    try:
        qlog = run_search(ctx, mode, size, joins)
        native = run_native(ctx, size) if compare else None
    except Exception as exc:
        raise_if_too_many_terms(exc, ctx)
        raise
    if as_json:
        out: dict[str, Any] = {"index": ctx.calibration.index, "field": ctx.field,
                               "q": ctx.calibration.q, "mode": mode,
                               "terms": list(dict.fromkeys(ctx.stats.terms)),
                               "hits": _hits_json(qlog)}
        if native is not None:
            out["native"] = _hits_json(native)
        click.echo(json.dumps(out, ensure_ascii=False))
        return
    click.echo(f"q-log BM25 (q={ctx.calibration.q:g}, mode {mode}) on "
               f"{ctx.calibration.index}/{ctx.field}")
    click.echo(format_compare(native, qlog) if native is not None else format_hits(qlog))
