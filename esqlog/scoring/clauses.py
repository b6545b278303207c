"""What the engine will make of a query tree, before sending it (pure, no I/O).

Two questions the wrapper must answer to keep the native match set:

* Does the search filter on scores (``min_score``, top-level or in ``function_score`` /
  ``script_score``)? Then the threshold applies to native scores and any change to a score
  (q-log weights, or merely ``dfs_query_then_fetch`` moving per-shard statistics to global
  ones) changes which documents pass it. No translation of the threshold is exact, so such a
  search is sent untouched.
* How many clauses will Lucene count? Lucene refuses a query whose leaf clauses exceed its
  limit (``maxClauseCount``; 1,024 on OpenSearch by default, derived from the heap and at
  least 1,024 on Elasticsearch 8). Identifier joins add clauses the native query does not
  have, so they may only be added while the whole query stays under the limit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from esqlog.engine.client import Flavor
from esqlog.engine.steps import Plan, Request

#: Lucene's limit when nothing says otherwise: OpenSearch's default, Elasticsearch's minimum
DEFAULT_MAX_CLAUSES = 1024
#: a count meaning "unknown, assume too many" (a clause whose expansion cannot be bounded)
UNBOUNDED = 1 << 30

_SCORED_WRAPPERS = ("function_score", "script_score")
# Compound queries and the keys holding their child clauses.
_CHILDREN: dict[str, tuple[str, ...]] = {
    "bool": ("must", "should", "filter", "must_not"),
    "dis_max": ("queries",),
    "constant_score": ("filter",),
    "function_score": ("query",),
    "script_score": ("query",),
    "boosting": ("positive", "negative"),
    "nested": ("query",),
    "has_child": ("query",),
    "has_parent": ("query",),
    "hybrid": ("queries",),
}
# Leaves whose text is analyzed into one clause per token (at most one per character).
_TEXT_LEAVES = frozenset(
    {
        "match",
        "match_bool_prefix",
        "combined_fields",
        "query_string",
        "simple_query_string",
        "multi_match",
    }
)


def filters_on_score(min_score: Any, query: Any) -> bool:
    """True when the search's match set depends on score values (see the module doc)."""
    return min_score is not None or _has_score_filter(query)


def _has_score_filter(node: Any) -> bool:
    if isinstance(node, list):
        return any(_has_score_filter(item) for item in node)
    if not isinstance(node, Mapping):
        return False
    for key, value in node.items():
        if key in _SCORED_WRAPPERS and isinstance(value, Mapping) and "min_score" in value:
            return True
        if isinstance(value, Mapping | list) and _has_score_filter(value):
            return True
    return False


MatchSize = Callable[[str, str], int | None]


def count_clauses(query: Any, match_size: MatchSize) -> int:
    """An upper bound of the leaf clauses Lucene will count in ``query``.

    ``match_size(field, text)`` gives the exact number of terms of a text already analyzed
    (None when unknown); unknown texts count one clause per character, wildcard or missing
    field lists count as unbounded: overcounting can only cost optional join clauses.
    """
    if isinstance(query, list):
        return sum(count_clauses(child, match_size) for child in query)
    if not isinstance(query, Mapping) or len(query) != 1:
        return 1
    kind, inner = next(iter(query.items()))
    if not isinstance(inner, Mapping):
        return 1
    if kind in _CHILDREN:
        total = sum(
            count_clauses(inner[key], match_size) for key in _CHILDREN[kind] if key in inner
        )
        if kind == "function_score":  # each function's filter is a clause too
            total += sum(
                count_clauses(f.get("filter"), match_size)
                for f in inner.get("functions") or []
                if isinstance(f, Mapping) and f.get("filter") is not None
            )
        return max(total, 1)
    if kind in _TEXT_LEAVES:
        return _text_clauses(kind, inner, match_size)
    return 1


def _text_clauses(kind: str, inner: Mapping[str, Any], match_size: MatchSize) -> int:
    if kind in ("match", "match_bool_prefix"):
        if len(inner) != 1:
            return UNBOUNDED
        field, spec = next(iter(inner.items()))
        text = spec.get("query") if isinstance(spec, Mapping) else spec
        return _field_clauses(field, text, match_size)
    text = inner.get("query")
    fields = inner.get("fields")
    if isinstance(fields, str):
        fields = [fields]
    if not isinstance(fields, list) or not fields:
        return UNBOUNDED  # the index's default fields: unknown
    names = [f.partition("^")[0] if isinstance(f, str) else "*" for f in fields]
    if any("*" in name for name in names):
        return UNBOUNDED
    return sum(_field_clauses(name, text, match_size) for name in names)


def _field_clauses(field: str, text: Any, match_size: MatchSize) -> int:
    if not isinstance(text, str):
        return 1
    known = match_size(field, text)
    return max(1, known if known is not None else len(text))


def max_clause_count_plan(flavor: Flavor) -> Plan[int]:
    """The clause limit to stay under: at most 1,024, lower when the cluster says so.

    OpenSearch enforces ``indices.query.bool.max_clause_count`` (node or cluster setting);
    Elasticsearch 8 ignores that setting and derives its limit from the heap, never below
    1,024, while still reporting a default of 4,096. So an explicitly set value lowers the
    bound on both, OpenSearch's reported default too, and nothing raises it. A cluster that
    will not say (no monitor privilege) gets the safe 1,024.
    """
    try:
        body = yield Request(
            "GET",
            "/_cluster/settings",
            {"include_defaults": "true", "filter_path": "**.max_clause_count"},
        )
    except Exception:
        return DEFAULT_MAX_CLAUSES
    sections = ["persistent", "transient"] + (["defaults"] if flavor == "opensearch" else [])
    found = [DEFAULT_MAX_CLAUSES]
    for section in sections:
        value: Any = (body or {}).get(section)
        for key in ("indices", "query", "bool", "max_clause_count"):
            value = value.get(key) if isinstance(value, Mapping) else None
        try:
            found.append(int(value))
        except (TypeError, ValueError):
            continue
    return max(1, min(found))
