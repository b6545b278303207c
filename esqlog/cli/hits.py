"""Ranked hits as the CLI prints them, and the one request search and explain both send.

A module of its own so that the CLI commands (search, the identifiers view) share it without
importing each other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from esqlog.cli.query import QueryContext, shown

LABEL_CHARS = 80


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
    return [
        Hit(
            i,
            str(h.get("_id")),
            float(h.get("_score") or 0.0),
            hit_label(h.get("_source") or {}, field),
        )
        for i, h in enumerate(hits, 1)
    ]


def search_kwargs(ctx: QueryContext, size: int) -> dict[str, Any]:
    """Keyword arguments for the client's own search: both clients, same request."""
    request: dict[str, Any] = {
        "query": {"match": {ctx.field: ctx.text}},
        "size": size,
        "_source": ["name", ctx.field],
    }
    kwargs: dict[str, Any] = {"index": ctx.index}
    if ctx.calibration.shards > 1:  # global statistics, as the q-log weights assume
        kwargs["search_type"] = "dfs_query_then_fetch"
    if ctx.engine.flavor == "opensearch":
        kwargs["body"] = request
    else:
        kwargs.update(query=request["query"], size=size, source=request["_source"])
    return kwargs
