"""Parsing match / multi_match clauses, and walking a query to them (pure, no I/O).

Split from esqlog.scoring.rewrite: which clause shapes and options the rewrite can reproduce exactly
is decided here, so an option this module does not know makes the clause pass through.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any, Literal

Operator = Literal["or", "and"]

# Options whose meaning the rewrite reproduces exactly. Everything else (fuzziness, analyzer,
# cutoff_frequency, zero_terms_query, lenient, prefix_length, ...) makes the clause pass through,
# so an option this module does not know can never silently change the match set.
# auto_generate_synonyms_phrase_query only acts on multi-position synonyms, which are excluded
# by the distinct-positions check.
# fuzziness 0 ("0") allows no edit: both engines score such a clause exactly as without it
# (tests/engine/test_bodies_engine.py); any other fuzziness expands terms and passes through.
_MATCH_OPTIONS = frozenset(
    {
        "query",
        "operator",
        "minimum_should_match",
        "boost",
        "_name",
        "auto_generate_synonyms_phrase_query",
        "fuzziness",
    }
)
_NO_EDITS = (0, "0")
_MULTI_MATCH_OPTIONS = _MATCH_OPTIONS | {"fields", "type", "tie_breaker"}
# Default tie_breaker per supported multi_match type (what Elasticsearch uses when none is given).
MULTI_MATCH_TIE_BREAKER = {"best_fields": 0.0, "most_fields": 1.0}


# --------------------------------------------------------------------------- parsing


@dataclass(frozen=True)
class MatchOptions:
    """The scoring-relevant options shared by match and multi_match (raw values kept)."""

    operator: Operator
    raw_operator: Any  # as written, for the native match fallback inside multi_match
    msm: Any  # minimum_should_match verbatim, None when absent
    boost: float
    name: str | None
    extra: Mapping[str, Any]  # harmless options carried into native fallbacks


@dataclass(frozen=True)
class MatchSpec:
    field: str
    text: str
    options: MatchOptions


@dataclass(frozen=True)
class MultiMatchSpec:
    text: str
    fields: tuple[tuple[str, float], ...]
    tie_breaker: float
    options: MatchOptions


def is_int(value: object) -> bool:
    if type(value) is int:  # the common case, without the slow ABC check
        return True
    return isinstance(value, Integral) and not isinstance(value, bool)


def as_boost(value: object) -> float | None:
    """A finite non-negative number, else None (the engine, not us, should reject the rest)."""
    if isinstance(value, bool) or not isinstance(value, Real):
        return None
    number = float(value)
    return number if math.isfinite(number) and number >= 0.0 else None


def _parse_options(spec: Mapping[str, Any], allowed: frozenset[str]) -> MatchOptions | None:
    """Options of a long-form clause, or None when one of them is not reproducible."""
    if not set(spec) <= allowed:
        return None
    raw_operator = spec.get("operator")
    operator = "or" if raw_operator is None else raw_operator
    if not isinstance(operator, str) or operator.lower() not in ("or", "and"):
        return None
    boost = as_boost(spec.get("boost", 1.0))
    msm = spec.get("minimum_should_match")
    name = spec.get("_name")
    if boost is None or not (msm is None or isinstance(msm, str) or is_int(msm)):
        return None
    if not (name is None or isinstance(name, str)):
        return None
    fuzziness = spec.get("fuzziness", 0)
    if type(fuzziness) not in (int, str) or fuzziness not in _NO_EDITS:
        return None
    extra = {k: spec[k] for k in ("auto_generate_synonyms_phrase_query", "fuzziness") if k in spec}
    op: Operator = "and" if operator.lower() == "and" else "or"
    return MatchOptions(op, raw_operator, msm, boost, name, extra)


DEFAULT_OPTIONS = MatchOptions("or", None, None, 1.0, None, {})


def parse_match(inner: Mapping[str, Any]) -> MatchSpec | None:
    """``{"f": "text"}`` or ``{"f": {"query": "text", ...}}``; None when not reproducible."""
    if len(inner) != 1:
        return None
    field, spec = next(iter(inner.items()))
    if isinstance(spec, str):
        return MatchSpec(field, spec, DEFAULT_OPTIONS)
    if not isinstance(spec, Mapping) or not isinstance(spec.get("query"), str):
        return None
    options = _parse_options(spec, _MATCH_OPTIONS)
    return None if options is None else MatchSpec(field, spec["query"], options)


def _parse_field_boost(entry: object) -> tuple[str, float] | None:
    """``"title^2"`` -> ("title", 2.0); None for wildcards or unparsable boosts."""
    if not isinstance(entry, str) or not entry or "*" in entry:
        return None
    name, caret, boost_text = entry.partition("^")
    if not caret:
        return name, 1.0
    try:
        boost = as_boost(float(boost_text))
    except ValueError:
        return None
    return None if boost is None or not name else (name, boost)


def parse_multi_match(inner: Mapping[str, Any]) -> MultiMatchSpec | None:
    """A best_fields / most_fields multi_match over explicit fields; None otherwise."""
    text = inner.get("query")
    kind = inner.get("type", "best_fields")
    raw_fields = inner.get("fields")
    if not isinstance(text, str) or kind not in MULTI_MATCH_TIE_BREAKER:
        return None
    if isinstance(raw_fields, str):
        raw_fields = [raw_fields]
    if not isinstance(raw_fields, list) or not raw_fields:
        return None
    fields = [_parse_field_boost(entry) for entry in raw_fields]
    parsed = tuple(f for f in fields if f is not None)
    if len(parsed) != len(fields) or len({name for name, _ in parsed}) != len(parsed):
        return None  # wildcard, bad boost or a repeated field: let the engine resolve it
    tie_breaker = as_boost(inner.get("tie_breaker", MULTI_MATCH_TIE_BREAKER[kind]))
    options = _parse_options(inner, _MULTI_MATCH_OPTIONS)
    if tie_breaker is None or options is None:
        return None
    return MultiMatchSpec(text, parsed, tie_breaker, options)


# --------------------------------------------------------------------------- traversal

LeafFn = Callable[[str, Mapping[str, Any]], dict[str, Any] | None]

# Scoring children of compound queries. filter / must_not / constant_score do not score, so a
# rewrite there could only risk the match set for no gain; they are never entered.
# boosting scores positive x (negative_boost if negative matches, else 1): negative is only
# a match test, so q-log weights inside positive keep both the match set and that factor.
_SCORING_CHILDREN: dict[str, tuple[str, ...]] = {
    "bool": ("must", "should"),
    "dis_max": ("queries",),
    "function_score": ("query",),
    "boosting": ("positive",),
}


def walk(clause: Any, leaf: LeafFn) -> Any:
    """Apply ``leaf`` to every match / multi_match in scoring position; rebuild the path to it."""
    if not isinstance(clause, Mapping) or len(clause) != 1:
        return clause
    kind, inner = next(iter(clause.items()))
    if not isinstance(inner, Mapping):
        return clause
    if kind in ("match", "multi_match"):
        replaced = leaf(kind, inner)
        return clause if replaced is None else replaced
    children = _SCORING_CHILDREN.get(kind)
    if children is None or "min_score" in inner:  # a threshold on native scores
        return clause
    rebuilt = dict(inner)
    for key in children:
        if key in rebuilt:
            rebuilt[key] = _walk_each(rebuilt[key], leaf)
    return {kind: rebuilt}


def _walk_each(value: Any, leaf: LeafFn) -> Any:
    """Children may be a single clause or a list (bool accepts both); keep the shape."""
    if isinstance(value, list):
        return [walk(child, leaf) for child in value]
    return walk(value, leaf)


def with_default_fields(query: Any, default_fields: Collection[str]) -> Any:
    """The query with each fields-less multi_match given the index's default fields.

    A multi_match without ``fields`` searches ``index.query.default_field``; given as an
    explicit list, the engines search exactly those fields, as if the clause named them (the
    same hits and scores on both engines, tests/engine/test_bodies_engine.py). The default ``*``
    (every field, lenient) is left alone: which fields it expands to is the engine's call.
    """
    fields = list(default_fields)
    if not fields or any("*" in f for f in fields):
        return query

    def leaf(kind: str, inner: Mapping[str, Any]) -> dict[str, Any] | None:
        if kind == "multi_match" and "fields" not in inner:
            return {"multi_match": {**inner, "fields": fields}}
        return None

    return walk(query, leaf)


# --------------------------------------------------------------------------- phase 1 of the rewrite


def collect_query_texts(query: Any, fields: Collection[str]) -> list[tuple[str, str]]:
    """Unique ``(field, text)`` pairs, first-seen order, a query clause needs resolved."""
    seen: dict[tuple[str, str], None] = {}

    def record(kind: str, inner: Mapping[str, Any]) -> None:
        if kind == "match":
            parsed = parse_match(inner)
            pairs = [] if parsed is None else [(parsed.field, parsed.text)]
        else:
            multi = parse_multi_match(inner)
            pairs = [] if multi is None else [(name, multi.text) for name, _ in multi.fields]
        for pair in pairs:
            if pair[0] in fields:
                seen.setdefault(pair, None)
        return None

    walk(query, record)
    return list(seen)


def collect_body_texts(body: Mapping[str, Any], fields: Collection[str]) -> list[tuple[str, str]]:
    """Unique ``(field, text)`` pairs, first-seen order, of every rewritable clause in ``query``.

    Only syntactic checks happen here (the analysis is not known yet), so a pair may still turn
    out not rewritable (no terms, synonyms); resolving it is then wasted but harmless.
    """
    return collect_query_texts(body.get("query"), fields)
