"""Responses of a rerank: the client's own response type, esqlog's traces removed."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from esqlog.rerank.scoring import NAME_PREFIX

if TYPE_CHECKING:
    from esqlog.engine.search_call import SearchCall


def response_like(original: Any, body: dict[str, Any]) -> Any:
    """A response of the client's own type carrying ``body``."""
    if isinstance(original, dict):
        return body
    return type(original)(body=body, meta=original.meta)


def body_of(response: Any) -> dict[str, Any]:
    """The JSON body of a search response, whichever client returned it."""
    return dict(getattr(response, "body", response))


def rerank_window(call: SearchCall) -> tuple[int, int] | None:
    """(from, size) of the page asked for, or None when rerank must not apply."""
    if call.get("search_after") is not None or call.get("sort") is not None:
        return None
    if call.get("scroll") is not None:
        return None
    size = call.get("size")
    start = call.get("from")
    window = int(start or 0), int(10 if size is None else size)
    if min(window) < 0:  # invalid: let the engine refuse it with the client's own error
        return None
    return window


def rerank_response(
    native: dict[str, Any], hits: list[dict[str, Any]], start: int, size: int
) -> dict[str, Any]:
    """The native response with the reranked page in place of the native hits."""
    body = copy.copy(native)
    hits_block = dict(body.get("hits", {}))
    page = hits[start : start + size]
    hits_block["hits"] = page
    hits_block["max_score"] = hits[0]["_score"] if hits else hits_block.get("max_score")
    body["hits"] = hits_block
    return body


def without_names(hit: dict[str, Any], keep_scores: bool) -> dict[str, Any]:
    """A hit's matched_queries as the caller's own query would have them (esqlog's dropped)."""
    matched = hit.get("matched_queries")
    if not isinstance(matched, Mapping):
        return hit
    own = {k: v for k, v in matched.items() if not k.startswith(NAME_PREFIX)}
    cleaned = dict(hit)
    if not own:
        cleaned.pop("matched_queries", None)
    else:
        cleaned["matched_queries"] = own if keep_scores else list(own)
    return cleaned
