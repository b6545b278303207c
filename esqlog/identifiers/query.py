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
  shard, and a word's groups go under one ``dis_max``: a document scores its best group
  (the price: a document holding terms of two groups of one word counts the tf of one).
  Summing the groups instead counted the word's weight once per group and lost up to 0.075
  NDCG@10 on 3 shards. ``shard_groups="shard"`` is exact (see esqlog.identifiers.groups)
  at 1.6x the clauses; ``"auto"``, the default, takes it where it is cheap (a word whose
  terms every shard holds are few and rare), which gains most of its quality for 7-10% more
  time than "max".
  With one shard there is one group. When calibrate recorded each shard's own statistics,
  the wrapper sends a plain search to each shard on its own instead (``fan_out``,
  esqlog.identifiers.shards): the plan is laid out as on one shard and each shard's query
  lists the terms it holds with boosts from its own df, exact without dfs.
- Engines cap the terms of one query (OpenSearch: 1,024). ``budget`` bounds the clauses;
  the compounds kept are those holding query words of the largest summed weight first,
  then those with the largest ``weight(s) * df(compound)`` (where the score mass is).
- A span cannot skip documents (no max-score pruning, positions read for every match), so
  its cost grows with its terms' posting lists. A common sub-word (over ``span_max_df`` of
  the documents) keeps its own long list out of the span: its own term is a plain term
  clause and its compounds a span of their own, both with its weight (two saturations
  instead of one). Measured through OpenSearch (docs/benchmarks/identifiers.md) this costs no
  quality (it gains a little on Go) at a fraction of the span postings.

Matching: a document matches when it holds any query token or sub-word, inside an
identifier or not (``operator="or"``, the default). ``operator="and"`` requires every
query token to be matched by itself or by one of its sub-words (inside any identifier);
``minimum_should_match`` counts such tokens. Either is a non-scoring filter, so scores
are the same. The match set differs from a native ``match`` on purpose.

Everything here is I/O-free: text + field + split statistics + a df lookup -> query dict.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from esqlog.identifiers import synonym
from esqlog.identifiers.groups import group_words, one_shard_groups
from esqlog.identifiers.selection import choose
from esqlog.identifiers.settings import (
    IdentifierSettings,
)
from esqlog.identifiers.split_stats import IdentifierStats
from esqlog.identifiers.word_facts import WordFacts
from esqlog.scoring.subwords import cased_tokens

DfLookup = Callable[[Sequence[str]], Mapping[str, int]]


def _idf(n: int, big_n: int, q: float = 1.0) -> float:
    """Lucene's BM25 idf with the outer log replaced by ln_q (as esqlog.scoring.qlog.idf_lucene)."""
    log_x = math.log(1.0 + (big_n - n + 0.5) / (n + 0.5))
    return log_x if q == 1.0 else math.expm1((1.0 - q) * log_x) / (1.0 - q)


#: :func:`_idf` of recent (df, N, q): a search weighs each of its words, and most words
#: recur; a value is the same float whether computed or remembered
_remembered_idf = functools.lru_cache(maxsize=8192)(_idf)


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
    apart: bool = False  # a common sub-word: its own term saturates apart from its compounds
    #: one saturation on every shard (one shard, or one span per shard); False: the best
    #: of its shard-set groups (see shard_groups)
    exact: bool = True


@dataclass(frozen=True)
class IdentifierPlan:
    """The scored words of one query text and the tokens they came from."""

    words: tuple[SubwordClause, ...]
    tokens: tuple[tuple[str, tuple[str, ...]], ...]  # (token, its sub-words)
    q: float
    plain: bool = False  # scored as the plain split stream (rare_word_df, family_excess)
    family: str = ""  # the query word that marked a generated family, if one did

    @property
    def clauses(self) -> int:
        return sum(len(terms) for w in self.words for terms, _ in w.groups)

    def query(
        self,
        field: str,
        settings: IdentifierSettings,
        groups: Sequence[Sequence[tuple[tuple[str, ...], float]]] | None = None,
    ) -> dict[str, Any]:
        """The engine query: one bool of spans and terms (plus a filter for and/msm).

        ``groups``: each word's groups to send instead of its own (one shard's, from
        esqlog.identifiers.shards); a word with none there has no clause."""
        should: list[dict[str, Any]] = []
        filtered = settings.operator == "and" or settings.minimum_should_match is not None
        plugin = settings.engine_query == "plugin"
        listed: dict[str, set[str]] = {}  # each word's terms, for the and/msm filter
        for k, w in enumerate(self.words):
            sent = w.groups if groups is None else groups[k]
            if filtered:
                listed[w.word] = {t for terms, _ in sent for t in terms}
            if len(sent) == 1:  # the usual word: one group, one clause (apart or not)
                should.append(_clause(field, *sent[0], plugin))
                continue
            clauses = [_clause(field, terms, boost, plugin) for terms, boost in sent]
            head = clauses[:1] if w.apart else []
            rest = clauses[len(head) :]
            if settings.shard_groups != "sum" and len(rest) > 1:
                rest = [{"dis_max": {"queries": rest}}]
            should += head + rest
        if not should:
            return {"match_none": {}}
        body: dict[str, Any] = {"should": should}
        if filtered:
            per_token = []
            for token, parts in self.tokens:
                found = set().union(*(listed.get(w, set()) for w in (token, *parts)))
                per_token.append({"terms": {field: sorted(found)}} if found else {"match_none": {}})
            if settings.operator == "and":
                body["filter"] = per_token
            else:
                body["filter"] = [
                    {
                        "bool": {
                            "should": per_token,
                            "minimum_should_match": settings.minimum_should_match,
                        }
                    }
                ]
        return {"bool": body}


def _clause(field: str, terms: tuple[str, ...], boost: float, plugin: bool) -> dict[str, Any]:
    """One group's clause: esqlog_terms through the plugin (one term too: no engine idf),
    else a term for one term and a span_or of span_terms for several."""
    if plugin:
        return synonym.clause(field, terms, boost)
    if len(terms) == 1:
        return {"term": {field: {"value": terms[0], "boost": boost}}}
    return {"span_or": {"clauses": [{"span_term": {field: t}} for t in terms], "boost": boost}}


@dataclass(frozen=True)
class WeighedWords:
    """The first half of a plan: each word of the query's split stream with its weight and
    its compounds, before the clause budget chooses among them (on the client, or on the node
    by esqlog.identifiers.node_plan: the same inputs)."""

    present: tuple[str, ...]  # the words with a split df, in the query's order
    counts: Mapping[str, int]
    split_df: Mapping[str, int]
    engine_df: Mapping[str, int]
    weight: Mapping[str, float]
    every: Mapping[str, np.ndarray]  # each word's compound ids, most frequent first
    comps: Mapping[str, np.ndarray]  # those the budget may take (cap, common="own")
    common: frozenset[str]  # common sub-words (span_max_df): their own term apart
    settings: IdentifierSettings  # as resolved for this text (plain: select "mass")
    tokens: tuple[tuple[str, tuple[str, ...]], ...]
    q: float
    plain: bool
    family: str
    #: the nodes keep each word's whole group (IdentifierSettings.whole_words, before a plain
    #: text's select "mass"): there a plain text takes every compound, the split stream itself
    whole_words: bool = False

    def first(self, word: str) -> int:
        """1 when the word's first clause is its most frequent compound (the index lacks the
        word itself), else 0."""
        return 0 if self.engine_df.get(word, 0) > 0 or not self.comps[word].size else 1


def weigh_words(
    text: str,
    stats: IdentifierStats,
    df_lookup: DfLookup,
    settings: IdentifierSettings | None = None,
) -> WeighedWords:
    """Split the query and weight each stream word (see :func:`plan_identifier_query`)."""
    settings = settings or IdentifierSettings()
    q = stats.q if settings.q is None else settings.q
    # each token's split, each word's compounds and split df: remembered across searches
    facts = stats.facts if stats.facts is not None else WordFacts(stats)
    tokens = [facts.token(token) for token in cased_tokens(text)]
    counts = Counter([w for low, parts in tokens for w in (low, *parts)])
    engine_df = dict(df_lookup(list(counts)))
    # one pass over the words (a search runs this on a cold cache, where each pass costs)
    every: dict[str, np.ndarray] = {}
    split_df: dict[str, int] = {}
    present = []
    for w, (ids, df) in facts.words(counts).items():
        every[w] = ids
        split_df[w] = df = df or engine_df.get(w, 0)
        if df > 0:
            present.append(w)
    comps = every if settings.cap is None else {w: ids[: settings.cap] for w, ids in every.items()}
    plain = (
        settings.rare_word_df is not None
        and bool(present)
        and min(split_df[w] for w in present) > settings.rare_word_df
    )
    family = (
        ""
        if settings.family_excess is None
        else next(
            (w for w in present if stats.family_excess(split_df[w]) >= settings.family_excess), ""
        )
    )
    plain = plain or bool(family)
    whole_words = settings.whole_words
    if plain:  # the plain split stream (see rare_word_df and family_excess)
        q, settings = 1.0, replace(settings, rare_first=False, select="mass")
    weight = {w: _remembered_idf(split_df[w], stats.split_docs, q) * counts[w] for w in present}
    limit = settings.span_max_df * stats.split_docs
    common = {w for w in present if split_df[w] > limit and engine_df.get(w, 0) > 0}
    if settings.common == "own":  # common sub-words: their own term only (see settings)
        comps = {w: ids[:0] if w in common else ids for w, ids in comps.items()}
    return WeighedWords(
        tuple(present),
        counts,
        split_df,
        engine_df,
        weight,
        every,
        comps,
        frozenset(common),
        settings,
        tuple(tokens),
        q,
        plain,
        family,
        whole_words,
    )


def plan_identifier_query(
    text: str,
    stats: IdentifierStats,
    df_lookup: DfLookup,
    settings: IdentifierSettings | None = None,
    shards: int | None = None,
) -> IdentifierPlan:
    """Split the query, weight each stream word, and choose its compounds within budget.

    The query's own casing splits a token first (``readFile``); a token typed without
    casing (``readfile``) takes the split calibrate learned for that vocabulary term.
    ``shards=1`` plans as on one shard (one group per word and part, the one-shard budget)
    for queries sent to each shard on its own (esqlog.identifiers.shards).
    """
    weighed = weigh_words(text, stats, df_lookup, settings)
    settings = weighed.settings
    # the plugin's groups score alike on every shard: always laid out as on one shard
    plugin = settings.engine_query == "plugin"
    layout = 1 if plugin else stats.shards if shards is None else shards
    present, weight, common = list(weighed.present), weighed.weight, set(weighed.common)
    engine_df, comps = weighed.engine_df, weighed.comps
    chosen = choose(present, comps, weight, engine_df, stats, settings, common, layout)
    if layout <= 1:  # as on one shard (always for the plugin): no shard sets to find
        # esqlog_terms without idf: a group's boost is its word's weight; a span's divides
        # it by the engine's idf sum
        grouped = one_shard_groups(present, engine_df, chosen, stats, weight, common, not plugin)
    else:
        grouped = group_words(
            present,
            engine_df,
            chosen,
            stats,
            weight,
            common,
            settings.shard_groups,
            settings.shard_exact_df,
            settings.shard_exact_clauses,
            layout,
        )
    words = [
        SubwordClause(
            w,
            weighed.counts[w],
            weighed.split_df[w],
            weight[w],
            groups,
            int(weighed.every[w].size),
            int(chosen[w].size),
            w in common and settings.common == "split" and len(groups) > 1,
            exact,
        )
        for w, (groups, exact) in zip(present, grouped, strict=True)
        if groups
    ]
    return IdentifierPlan(tuple(words), weighed.tokens, weighed.q, weighed.plain, weighed.family)


def identifier_query(
    text: str,
    field: str,
    stats: IdentifierStats,
    df_lookup: DfLookup,
    settings: IdentifierSettings | None = None,
) -> dict[str, Any]:
    """The query dict of the identifiers mode for one text (what a wrapper would send)."""
    settings = settings or IdentifierSettings()
    return plan_identifier_query(text, stats, df_lookup, settings).query(field, settings)
