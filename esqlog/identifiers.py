"""The ``identifiers`` mode: score query words inside identifiers on a frozen standard index.

Why: under the ``standard`` analyzer ``handleWebSocketUpgrade`` is one token, so the query
"upgrade the web socket" cannot match it; an identifier-splitting reindex fixes that, and
this mode gets the same ranking with a plain query instead.

How (checked with ``explain`` on both engines): Lucene scores a ``span_or`` over
``span_term`` clauses in ONE BM25 saturation, ``boost * (sum of the terms' idf) *
tf(freq = sum of the terms' tf, the field's own length norm)``. For a query sub-word s,
a ``span_or`` over s and the vocabulary terms whose split contains s, with ``boost =
idf_q(s in the split stream) / sum of the engine's idf``, scores s as a split-and-keep
index would (q-log idf of the split stream's df; the standard field's length norm).

Two engine limits shape the query:

- Lucene sums the idf over the span's terms present *on the shard that scores it* (a term
  absent from a shard's dictionary is left out, under ``dfs_query_then_fetch`` too). So on
  several shards one span per sub-word cannot be exact; the terms are grouped by the set
  of shards that hold them (calibrate records it), one span per group, each exact on every
  shard. The price: a document holding terms of two groups of one sub-word gets two
  saturations instead of one. With one shard there is one group.
- Engines cap the terms of one query (OpenSearch: 1,024). ``budget`` bounds the clauses;
  the compounds kept are those with the largest ``weight(s) * df(compound)`` (where the
  score mass is), always a most-frequent-first prefix of each sub-word's list.

Matching: a document matches when it holds any query token or sub-word, inside an
identifier or not (``operator="or"``, the default). ``operator="and"`` requires every
query token to be matched by itself or by one of its sub-words (inside any identifier);
``minimum_should_match`` counts such tokens. Either is a non-scoring filter, so scores
are the same. The match set differs from a native ``match`` on purpose.

Everything here is I/O-free: text + field + split statistics + a df lookup -> query dict.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from esqlog.errors import UsageError
from esqlog.identifier_stats import IdentifierStats
from esqlog.subwords import cased_tokens, split_identifier

DfLookup = Callable[[Sequence[str]], Mapping[str, int]]
DEFAULT_BUDGET = 1000
OPERATORS = ("or", "and")


def _idf(n: int, big_n: int, q: float = 1.0) -> float:
    """Lucene's BM25 idf with the outer log replaced by ln_q (as esqlog.qlog.idf_lucene)."""
    log_x = math.log(1.0 + (big_n - n + 0.5) / (n + 0.5))
    return log_x if q == 1.0 else math.expm1((1.0 - q) * log_x) / (1.0 - q)


@dataclass(frozen=True)
class IdentifierSettings:
    """How the query is built: clause budget, optional per-sub-word cap, q, matching."""

    budget: int = DEFAULT_BUDGET
    cap: int | None = None  # compounds per sub-word at most (None: budget only)
    q: float | None = None  # None: the q calibrate predicted for the split stream
    operator: str = "or"
    minimum_should_match: int | str | None = None

    def __post_init__(self) -> None:
        if self.budget < 1:
            raise UsageError(f"the clause budget must be at least 1, got {self.budget}",
                             "pass a positive budget (OpenSearch allows 1,024 by default)")
        if self.cap is not None and self.cap < 0:
            raise UsageError(f"the compound cap must be >= 0, got {self.cap}", "pass 0 or more")
        if self.operator not in OPERATORS:
            raise UsageError(f"operator must be 'or' or 'and', got {self.operator!r}",
                             "pass operator='or' or 'and'")


@dataclass(frozen=True)
class SubwordClause:
    """One word of the query's split stream and how it is scored."""

    word: str
    count: int  # occurrences in the query's split stream
    df: int  # split-stream df (the term's own df when it is no sub-word)
    weight: float  # idf_q(df) * count: the score of a tf-saturated occurrence
    groups: tuple[tuple[tuple[str, ...], float], ...]  # (terms, boost) per span or term
    compounds_total: int
    compounds_used: int


@dataclass(frozen=True)
class IdentifierPlan:
    """The scored words of one query text and the tokens they came from."""

    words: tuple[SubwordClause, ...]
    tokens: tuple[tuple[str, tuple[str, ...]], ...]  # (token, its sub-words)
    q: float

    @property
    def clauses(self) -> int:
        return sum(len(terms) for w in self.words for terms, _ in w.groups)

    def query(self, field: str, settings: IdentifierSettings) -> dict[str, Any]:
        """The engine query: one bool of spans and terms (plus a filter for and/msm)."""
        should: list[dict[str, Any]] = []
        listed: dict[str, set[str]] = {}
        for w in self.words:
            listed[w.word] = {t for terms, _ in w.groups for t in terms}
            for terms, boost in w.groups:
                if len(terms) == 1:
                    should.append({"term": {field: {"value": terms[0], "boost": boost}}})
                else:
                    should.append({"span_or": {
                        "clauses": [{"span_term": {field: t}} for t in terms],
                        "boost": boost}})
        if not should:
            return {"match_none": {}}
        body: dict[str, Any] = {"should": should}
        if settings.operator == "and" or settings.minimum_should_match is not None:
            per_token = []
            for token, parts in self.tokens:
                found = set().union(*(listed.get(w, set()) for w in (token, *parts)))
                per_token.append({"terms": {field: sorted(found)}} if found
                                 else {"match_none": {}})
            if settings.operator == "and":
                body["filter"] = per_token
            else:
                body["filter"] = [{"bool": {
                    "should": per_token,
                    "minimum_should_match": settings.minimum_should_match}}]
        return {"bool": body}


def plan_identifier_query(text: str, stats: IdentifierStats, df_lookup: DfLookup,
                          settings: IdentifierSettings | None = None) -> IdentifierPlan:
    """Split the query, weight each stream word, and choose its compounds within budget.

    The query's own casing splits a token first (``readFile``); a token typed without
    casing (``readfile``) takes the split calibrate learned for that vocabulary term.
    """
    settings = settings or IdentifierSettings()
    q = stats.q if settings.q is None else settings.q
    tokens: list[tuple[str, tuple[str, ...]]] = []
    for token in cased_tokens(text):
        low = token.lower()
        tokens.append((low, split_identifier(token) or stats.parts_of(low)))
    counts = Counter(w for low, parts in tokens for w in (low, *parts))
    comps = {w: stats.compounds_of(w) for w in counts}
    cap = settings.cap
    if cap is not None:
        comps = {w: ids[:cap] for w, ids in comps.items()}
    engine_df = dict(df_lookup(list(counts)))
    split_df = {w: stats.split_df(w) or engine_df.get(w, 0) for w in counts}
    present = [w for w in counts if split_df[w] > 0]
    weight = {w: _idf(split_df[w], stats.split_docs, q) * counts[w] for w in present}
    # every word gets one clause first: itself, or its most frequent compound when the
    # word occurs only inside identifiers; the rest of the budget goes by score mass
    first = {w: 0 if engine_df.get(w, 0) > 0 or not comps[w] else 1 for w in present}
    room = max(settings.budget - len(present), 0)
    candidates = ((weight[w] * float(stats.df_engine[c]), w, k)
                  for w in present for k, c in enumerate(comps[w][first[w]:room + first[w]]))
    chosen = Counter(first)
    chosen.update(w for _, w, _ in heapq.nlargest(room, candidates))
    names = {w: [stats.words[c] for c in comps[w][:chosen[w]]] for w in present}
    engine_df.update(df_lookup([t for ts in names.values() for t in ts]))
    words = []
    for w in present:
        terms = ([w] if engine_df.get(w, 0) > 0 else []) + names[w]
        groups = _groups(terms, stats, engine_df, weight[w])
        if groups:
            words.append(SubwordClause(w, counts[w], split_df[w], weight[w], groups,
                                       len(stats.compounds_of(w)), len(names[w])))
    return IdentifierPlan(tuple(words), tuple(tokens), q)


def _groups(terms: list[str], stats: IdentifierStats, engine_df: Mapping[str, int],
            weight: float) -> tuple[tuple[tuple[str, ...], float], ...]:
    """Terms grouped by the shards that hold them, each group with its exact boost."""
    by_mask: dict[int, list[str]] = {}
    for t in terms:
        if engine_df.get(t, 0) <= 0:
            continue  # absent from the index: no clause (its idf would not be summed)
        i = stats.word_id.get(t)
        mask = int(stats.mask[i]) if (stats.shards > 1 and i is not None) else 0
        by_mask.setdefault(mask, []).append(t)
    out = []
    for group in by_mask.values():
        idf_sum = sum(_idf(engine_df[t], stats.doc_count) for t in group)
        if idf_sum > 0:
            out.append((tuple(group), weight / idf_sum))
    return tuple(out)


def identifier_query(text: str, field: str, stats: IdentifierStats, df_lookup: DfLookup,
                     settings: IdentifierSettings | None = None) -> dict[str, Any]:
    """The query dict of the identifiers mode for one text (what a wrapper would send)."""
    settings = settings or IdentifierSettings()
    return plan_identifier_query(text, stats, df_lookup, settings).query(field, settings)
