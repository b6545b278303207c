"""Query-time rewrite of match / multi_match clauses into q-log BM25 (pure, no I/O).

Lucene scores a matched term ``boost * idf(n, N) * tfnorm``. A ``match`` query on a text field
is a BooleanQuery of one TermQuery per analyzed term, so replacing it by explicit ``term``
clauses whose boost is ``idf_q(n, N) / idf(n, N)`` turns BM25 into q-log BM25 exactly, with
the same set of matching documents and no reindexing.

Two phases let the caller fetch every statistic in one batched round trip (sync or async):

1. :func:`collect_body_texts` lists the ``(field, text)`` pairs that need analysis and statistics;
2. :func:`rewrite_body` / :func:`rewrite_query` consume the :class:`ResolvedText` answers.

Anything the rewrite cannot reproduce exactly (fuzziness, a query-level analyzer, synonyms at one
position, cross_fields, ...) passes through untouched: a native BM25 clause is always a safe
answer, a wrong match set never is.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from esqlog.scoring.clauses import DEFAULT_MAX_CLAUSES, count_clauses, filters_on_score
from esqlog.scoring.joins import confirmed_joins
from esqlog.scoring.matchspec import (  # phase 1 lives beside the parsing it is made of
    MatchOptions,
    MultiMatchSpec,
    is_int,
    parse_match,
    parse_multi_match,
    walk,
)
from esqlog.scoring.qlog import IDF_FORMS, boost_weights, validate_q
from esqlog.statistics.terms import TextStats

__all__ = [
    "FieldCalibration",
    "ResolvedText",
    "RewriteSettings",
    "filters_on_score",
    "resolved_from_stats",
    "rewrite_body",
    "rewrite_query",
    "rewrite_query_sharing",
]

RewriteMode = Literal["boost", "script"]


@dataclass(frozen=True)
class ResolvedText:
    """What the field's search analyzer and global statistics say about one ``(field, text)``.

    ``terms`` keeps duplicates in position order because ``match`` builds one clause per token;
    ``positions`` lets the rewrite detect synonyms / graphs (equal positions), which it must not
    flatten into independent term clauses.
    """

    terms: tuple[str, ...]
    positions: tuple[int, ...]
    df: Mapping[str, int]
    doc_count: int
    #: identifier-join candidates the index holds, with their df (see esqlog.scoring.joins)
    joins: tuple[tuple[str, int], ...] = ()

    def __post_init__(self) -> None:
        """Fail early on inconsistent statistics: a bad weight would silently skew rankings."""
        if len(self.terms) != len(self.positions):
            raise ValueError(
                f"{len(self.terms)} terms but {len(self.positions)} positions; need one per term"
            )
        if not is_int(self.doc_count) or self.doc_count < 0:
            raise ValueError(f"doc_count must be a non-negative integer, got {self.doc_count!r}")
        for term in self.terms:
            if term not in self.df:
                raise ValueError(f"no document frequency for term {term!r}")
            n = self.df[term]
            # Lucene guarantees df <= docCount (both count deleted docs); a violation means the
            # statistics were mixed up (e.g. per-shard df with a global doc count).
            if not is_int(n) or n < 0 or n > self.doc_count:
                raise ValueError(
                    f"df of {term!r} must be an integer in [0, doc_count={self.doc_count}], "
                    f"got {n!r}"
                )

    @property
    def rewritable(self) -> bool:
        """At least one term and no two at one position (synonyms would change the match set)."""
        return bool(self.terms) and len(set(self.positions)) == len(self.positions)


def resolved_from_stats(stats: TextStats) -> ResolvedText:
    """The rewrite's view of one analyzed text: terms, df, N and the confirmed joins."""
    return ResolvedText(
        stats.terms,
        stats.positions,
        stats.df,
        stats.field.doc_count,
        confirmed_joins(stats.terms, stats.extra_df),
    )


@dataclass(frozen=True)
class FieldCalibration:
    """The q (and IDF form) calibrated for one field; validated so a typo cannot reach a query."""

    q: float
    form: str = "lucene"

    def __post_init__(self) -> None:
        """Normalise q to a float in [0, 2] and reject unknown IDF forms."""
        object.__setattr__(self, "q", validate_q(self.q))
        if self.form not in IDF_FORMS:
            raise ValueError(f"unknown IDF form {self.form!r}; use one of {list(IDF_FORMS)}")


@dataclass(frozen=True)
class RewriteSettings:
    """Which fields to rewrite and how: explicit term boosts, or a stored script per term."""

    fields: Mapping[str, FieldCalibration]
    mode: RewriteMode = "boost"
    script_id: str = "esqlog-qlog-term"
    #: weight w of identifier-join clauses; None leaves joins out (and the match set alone)
    join_weight: float | None = None
    #: script mode: terms found in more than this fraction of the documents get the same
    #: weight as a boost instead of a script. A script_score clause cannot tell Lucene its
    #: maximum score, so every document it matches must be scored: scripting "the" would
    #: score most of the index, while a boost keeps max-score pruning. 1.0 scripts every term.
    script_df_fraction: float = 1.0
    #: a query name for each (field, term) clause (rerank reads each term's own score back
    #: with include_named_queries_score); None names nothing
    term_names: Mapping[tuple[str, str], str] | None = None
    #: the engine's clause limit: joins are added only while the whole query stays under it
    max_clauses: int = DEFAULT_MAX_CLAUSES
    #: per (field, term): the global idf over the idf the engine will multiply the boost by,
    #: when that is not the global one (a request to one shard without dfs scores with the
    #: shard's own df and N: esqlog.wrapper.boost_fan_out); None: the engine's idf is global
    idf_scale: Mapping[tuple[str, str], float] | None = None

    def __post_init__(self) -> None:
        """Reject a mode or script id the engine would only refuse at query time."""
        if self.join_weight is not None and not (
            math.isfinite(self.join_weight) and self.join_weight > 0
        ):
            raise ValueError(f"join_weight must be a positive number, got {self.join_weight!r}")
        if not 0.0 <= self.script_df_fraction <= 1.0:
            raise ValueError(
                f"script_df_fraction must be in [0, 1], got {self.script_df_fraction!r}"
            )
        if self.mode not in ("boost", "script"):
            raise ValueError(f"mode must be 'boost' or 'script', got {self.mode!r}")
        if not isinstance(self.script_id, str) or not self.script_id:
            raise ValueError("script_id must be a non-empty string")


# --------------------------------------------------------------------------- phase 2


@dataclass(frozen=True)
class _Context:
    resolved: Mapping[tuple[str, str], ResolvedText]
    settings: RewriteSettings
    #: join clauses the clause limit still allows (one-element list: shared, decremented)
    join_budget: list[int] | None = None

    def take_joins(self, joins: tuple[tuple[str, int], ...]) -> tuple[tuple[str, int], ...]:
        """The joins that still fit under the clause limit (in candidate order)."""
        if self.join_budget is None or self.settings.join_weight is None:
            return joins if self.settings.join_weight is not None else ()
        kept = joins[: max(0, self.join_budget[0])]
        self.join_budget[0] -= len(kept)
        return kept


def _weights(ns: list[int], doc_count: int, cal: FieldCalibration) -> list[float]:
    """idf_q / idf of each df as plain floats (JSON), in one numpy call per text.

    A non-finite weight would poison every score, so it is refused.
    """
    weights = boost_weights(ns, doc_count, cal.q, cal.form)
    for n, weight in zip(ns, weights, strict=True):
        if not math.isfinite(weight):
            raise ValueError(f"non-finite q-log weight for n={n}, N={doc_count}, q={cal.q}")
    return weights


def _term_clauses(
    field: str,
    terms: list[tuple[str, int]],
    res: ResolvedText,
    cal: FieldCalibration,
    settings: RewriteSettings,
    scale: float = 1.0,
) -> list[dict[str, Any]]:
    """One scoring clause per (term, df): a boosted term, or a term under the stored script."""
    weights = _weights([n for _, n in terms], res.doc_count, cal)
    if settings.idf_scale is not None:
        scale_of = settings.idf_scale
        weights = [
            w * scale_of.get((field, term), 1.0)
            for (term, _), w in zip(terms, weights, strict=True)
        ]
    return [
        _term_clause(field, term, n, weight, res, cal, settings, scale)
        for (term, n), weight in zip(terms, weights, strict=True)
    ]


def _term_clause(
    field: str,
    term: str,
    n: int,
    weight: float,
    res: ResolvedText,
    cal: FieldCalibration,
    settings: RewriteSettings,
    scale: float,
) -> dict[str, Any]:
    name = settings.term_names.get((field, term)) if settings.term_names else None
    if settings.mode == "boost" or n > settings.script_df_fraction * res.doc_count:
        spec = {"value": term, "boost": weight * scale}
        if name is not None:
            spec["_name"] = name
        return {"term": {field: spec}}
    params = {"q": cal.q, "n": n, "N": int(res.doc_count), "form": cal.form}
    script: dict[str, Any] = {
        "query": {"term": {field: {"value": term}}},
        "script": {"id": settings.script_id, "params": params},
    }
    if scale != 1.0:
        script["boost"] = scale
    if name is not None:
        script["_name"] = name
    return {"script_score": script}


def _with_joins(
    core: dict[str, Any],
    field: str,
    res: ResolvedText,
    cal: FieldCalibration,
    options: MatchOptions,
    boost: float,
    settings: RewriteSettings,
    allowed: tuple[tuple[str, int], ...],
) -> dict[str, Any]:
    """Add identifier-join clauses (weight w times their own q-log IDF) beside the match.

    With operator "and" the joins only add score (the match stays required); otherwise a
    document matching a join alone also matches, which is the point: "read file" reaches a
    document whose only token is ``read_file``.
    """
    if settings.join_weight is None or not allowed:
        return core
    joins = _term_clauses(
        field, list(allowed), res, cal, settings, scale=settings.join_weight * boost
    )
    if options.operator == "and":
        return {"bool": {"must": [core], "should": joins}}
    inner = core.get("bool")
    if isinstance(inner, dict) and set(inner) == {"should"}:
        # A plain disjunction: the joins join its clause list, one BooleanQuery instead of a
        # nested one (same documents, same sum; measured ~0.05 ms cheaper per search).
        return {"bool": {"should": [*inner["should"], *joins]}}
    return {"bool": {"should": [core, *joins]}}


def _decorate_single(clause: dict[str, Any], boost: float, name: str | None) -> dict[str, Any]:
    """Fold the match boost / _name into a lone term clause, as Lucene's lone TermQuery gets it."""
    if "term" in clause:
        (spec,) = clause["term"].values()
        spec["boost"] = spec["boost"] * boost
        target = spec
    else:
        target = clause["script_score"]
        if boost != 1.0:
            target["boost"] = boost
    if name is not None and "_name" in target:  # the term's own name is taken (rerank)
        return {"bool": {"should": [clause], "_name": name}}  # one clause: same score
    if name is not None:
        target["_name"] = name
    return clause


def _wrap(clauses: list[dict[str, Any]], options: MatchOptions, boost: float) -> dict[str, Any]:
    """Combine term clauses exactly as match's BooleanQuery does (SHOULD+msm, or all MUST)."""
    if len(clauses) == 1:
        return _decorate_single(clauses[0], boost, options.name)
    bool_spec: dict[str, Any]
    if options.operator == "and":
        bool_spec = {"must": clauses}
        # The engines apply msm to match's all-MUST BooleanQuery too, counted against its
        # zero SHOULD clauses: "1" or "2" match nothing, "50%" or "-1" change nothing.
        # The same msm on the same bool lets the same engine decide, exactly.
        if options.msm is not None:
            bool_spec["minimum_should_match"] = options.msm
    else:
        # A bool of SHOULD clauses only already needs one match; stating msm=1 explicitly
        # would be the same set but costs the engine ~15% (it leaves its fastest path).
        bool_spec = {"should": clauses}
        if options.msm is not None:
            bool_spec["minimum_should_match"] = options.msm
    if boost != 1.0:
        bool_spec["boost"] = boost
    if options.name is not None:
        bool_spec["_name"] = options.name
    return {"bool": bool_spec}


def _rewrite_field(
    field: str, text: str, options: MatchOptions, boost: float, ctx: _Context
) -> dict[str, Any] | None:
    """The q-log equivalent of match(field, text), or None when it cannot be exact."""
    cal = ctx.settings.fields.get(field)
    if cal is None:
        return None
    res = ctx.resolved.get((field, text))
    if res is None or not res.rewritable:
        return None
    clauses = _term_clauses(field, [(t, int(res.df[t])) for t in res.terms], res, cal, ctx.settings)
    return _with_joins(
        _wrap(clauses, options, boost),
        field,
        res,
        cal,
        options,
        boost,
        ctx.settings,
        ctx.take_joins(res.joins) if res.joins else (),
    )


def _native_match(field: str, text: str, options: MatchOptions, boost: float) -> dict[str, Any]:
    """The per-field match Elasticsearch builds inside multi_match, for fields left native."""
    spec: dict[str, Any] = {"query": text}
    if options.raw_operator is not None:
        spec["operator"] = options.raw_operator
    if options.msm is not None:
        spec["minimum_should_match"] = options.msm
    if boost != 1.0:
        spec["boost"] = boost
    spec.update(options.extra)
    return {"match": {field: spec}}


def _rewrite_multi_match(parsed: MultiMatchSpec, ctx: _Context) -> dict[str, Any] | None:
    """dis_max over per-field clauses (ES's own expansion); None when no field is rewritten."""
    # Field boosts go on each field's clause; the overall boost and _name go on the dis_max.
    per_field_options = replace(parsed.options, boost=1.0, name=None)
    queries: list[dict[str, Any]] = []
    rewritten = False
    for field, field_boost in parsed.fields:
        clause = _rewrite_field(field, parsed.text, per_field_options, field_boost, ctx)
        rewritten = rewritten or clause is not None
        queries.append(clause or _native_match(field, parsed.text, parsed.options, field_boost))
    if not rewritten:
        return None
    spec: dict[str, Any] = {"queries": queries, "tie_breaker": parsed.tie_breaker}
    if parsed.options.boost != 1.0:
        spec["boost"] = parsed.options.boost
    if parsed.options.name is not None:
        spec["_name"] = parsed.options.name
    return {"dis_max": spec}


def _rewrite_leaf(kind: str, inner: Mapping[str, Any], ctx: _Context) -> dict[str, Any] | None:
    if kind == "match":
        parsed = parse_match(inner)
        if parsed is None:
            return None
        return _rewrite_field(parsed.field, parsed.text, parsed.options, parsed.options.boost, ctx)
    multi = parse_multi_match(inner)
    return None if multi is None else _rewrite_multi_match(multi, ctx)


def rewrite_query(
    query: Mapping[str, Any],
    resolved: Mapping[tuple[str, str], ResolvedText],
    settings: RewriteSettings,
) -> dict[str, Any]:
    """A new query clause scoring with q-log IDF on calibrated fields; the input is not touched.

    The input is deep-copied first so the result shares nothing with it: callers may mutate
    either afterwards.
    """
    return rewrite_query_sharing(copy.deepcopy(query), resolved, settings)


def rewrite_query_sharing(
    query: Mapping[str, Any],
    resolved: Mapping[tuple[str, str], ResolvedText],
    settings: RewriteSettings,
) -> dict[str, Any]:
    """rewrite_query without the defensive copy: the result may share untouched subtrees
    with ``query`` (nothing here mutates the input). For the wrapper, which only serializes
    the result; a deep copy per search cost as much as the rewrite itself."""
    budget: list[int] | None = None
    if settings.join_weight is not None and any(r.joins for r in resolved.values()):
        # Joins are clauses native does not have: count what the query makes without them
        # and add joins only while the total stays under the engine's limit.
        bare = _Context(resolved, replace(settings, join_weight=None))
        base = walk(query, lambda kind, inner: _rewrite_leaf(kind, inner, bare))
        budget = [settings.max_clauses - count_clauses(base, _resolved_size(resolved))]
    ctx = _Context(resolved, settings, budget)
    return dict(walk(query, lambda kind, inner: _rewrite_leaf(kind, inner, ctx)))


def _resolved_size(
    resolved: Mapping[tuple[str, str], ResolvedText],
) -> Callable[[str, str], int | None]:
    """Terms of an analyzed text: the clauses a native match on it makes (None: unknown)."""

    def size(field: str, text: str) -> int | None:
        found = resolved.get((field, text))
        return None if found is None else len(found.terms)

    return size


def rewrite_body(
    body: Mapping[str, Any],
    resolved: Mapping[tuple[str, str], ResolvedText],
    settings: RewriteSettings,
) -> dict[str, Any]:
    """A new search body where only ``query`` may differ (aggs, sort, knn, ... are copies)."""
    return {
        key: rewrite_query(value, resolved, settings)
        if key == "query" and isinstance(value, Mapping)
        else copy.deepcopy(value)
        for key, value in body.items()
    }
