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

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from esqlog.identifiers import synonym
from esqlog.identifiers.groups import group_words, plugin_groups
from esqlog.identifiers.settings import (
    DEFAULT_BUDGET,
    FAN_OUT_BUDGET,
    MULTI_SHARD_BUDGET,
    IdentifierSettings,
)
from esqlog.identifiers.split_stats import IdentifierStats
from esqlog.scoring.subwords import cased_tokens, split_identifier

#: the settings live in esqlog.identifiers.settings; they are imported from here too
__all__ = ["DEFAULT_BUDGET", "FAN_OUT_BUDGET", "MULTI_SHARD_BUDGET", "IdentifierPlan",
           "IdentifierSettings", "SubwordClause", "identifier_query", "plan_identifier_query"]

DfLookup = Callable[[Sequence[str]], Mapping[str, int]]
MULTI_SCAN = 5_000  # compounds per word looked at for those holding several query words
_BUCKETS = 1 << 16  # hash buckets _in_several first spreads those compound ids over


def _idf(n: int, big_n: int, q: float = 1.0) -> float:
    """Lucene's BM25 idf with the outer log replaced by ln_q (as esqlog.scoring.qlog.idf_lucene)."""
    log_x = math.log(1.0 + (big_n - n + 0.5) / (n + 0.5))
    return log_x if q == 1.0 else math.expm1((1.0 - q) * log_x) / (1.0 - q)


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

    def query(self, field: str, settings: IdentifierSettings,
              groups: Sequence[Sequence[tuple[tuple[str, ...], float]]] | None = None
              ) -> dict[str, Any]:
        """The engine query: one bool of spans and terms (plus a filter for and/msm).

        ``groups``: each word's groups to send instead of its own (one shard's, from
        esqlog.identifiers.shards); a word with none there has no clause."""
        should: list[dict[str, Any]] = []
        listed: dict[str, set[str]] = {}
        for k, w in enumerate(self.words):
            sent = w.groups if groups is None else groups[k]
            listed[w.word] = {t for terms, _ in sent for t in terms}
            clauses: list[dict[str, Any]] = []
            for terms, boost in sent:
                if settings.engine_query == "plugin":  # one term too: no engine idf
                    clauses.append(synonym.clause(field, terms, boost))
                elif len(terms) == 1:
                    clauses.append({"term": {field: {"value": terms[0], "boost": boost}}})
                else:
                    clauses.append({"span_or": {
                        "clauses": [{"span_term": {field: t}} for t in terms],
                        "boost": boost}})
            head = clauses[:1] if w.apart else []
            rest = clauses[len(head):]
            if settings.shard_groups != "sum" and len(rest) > 1:
                rest = [{"dis_max": {"queries": rest}}]
            should += head + rest
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
                          settings: IdentifierSettings | None = None,
                          shards: int | None = None) -> IdentifierPlan:
    """Split the query, weight each stream word, and choose its compounds within budget.

    The query's own casing splits a token first (``readFile``); a token typed without
    casing (``readfile``) takes the split calibrate learned for that vocabulary term.
    ``shards=1`` plans as on one shard (one group per word and part, the one-shard budget)
    for queries sent to each shard on its own (esqlog.identifiers.shards).
    """
    settings = settings or IdentifierSettings()
    # the plugin's groups score alike on every shard: always laid out as on one shard
    plugin = settings.engine_query == "plugin"
    layout = 1 if plugin else stats.shards if shards is None else shards
    q = stats.q if settings.q is None else settings.q
    tokens: list[tuple[str, tuple[str, ...]]] = []
    for token in cased_tokens(text):
        low = token.lower()
        tokens.append((low, split_identifier(token) or stats.parts_of(low)))
    counts = Counter(w for low, parts in tokens for w in (low, *parts))
    comps = {w: stats.compound_ids(w)[:settings.cap] for w in counts}
    engine_df = dict(df_lookup(list(counts)))
    split_df = {w: stats.split_df(w) or engine_df.get(w, 0) for w in counts}
    present = [w for w in counts if split_df[w] > 0]
    plain = (settings.rare_word_df is not None and bool(present)
             and min(split_df[w] for w in present) > settings.rare_word_df)
    family = "" if settings.family_excess is None else next(
        (w for w in present if stats.family_excess(split_df[w]) >= settings.family_excess), "")
    plain = plain or bool(family)
    if plain:  # the plain split stream (see rare_word_df and family_excess)
        q, settings = 1.0, replace(settings, rare_first=False, select="mass")
    weight = {w: _idf(split_df[w], stats.split_docs, q) * counts[w] for w in present}
    limit = settings.span_max_df * stats.split_docs
    common = {w for w in present if split_df[w] > limit and engine_df.get(w, 0) > 0}
    if settings.common == "own":  # common sub-words: their own term only (see settings)
        comps = {w: ids[:0] if w in common else ids for w, ids in comps.items()}
    chosen = _choose(present, comps, weight, engine_df, stats, settings, common, layout)
    if plugin:  # esqlog_terms without idf: a group's boost is its word's weight
        grouped = plugin_groups(present, engine_df, chosen, stats, weight, common)
    else:
        grouped = group_words(present, engine_df, chosen, stats, weight, common,
                              settings.shard_groups, settings.shard_exact_df,
                              settings.shard_exact_clauses, layout)
    words = [SubwordClause(w, counts[w], split_df[w], weight[w], groups,
                           int(stats.compound_ids(w).size), int(chosen[w].size),
                           w in common and settings.common == "split" and len(groups) > 1,
                           exact)
             for w, (groups, exact) in zip(present, grouped, strict=True) if groups]
    return IdentifierPlan(tuple(words), tuple(tokens), q, plain, family)


def _choose(present: list[str], comps: Mapping[str, np.ndarray], weight: Mapping[str, float],
            engine_df: Mapping[str, int], stats: IdentifierStats,
            settings: IdentifierSettings, common: set[str],
            shards: int) -> dict[str, np.ndarray]:
    """Compound ids per word within the clause budget.

    Every word first gets one clause: itself, or its most frequent compound when it occurs
    only inside identifiers. The rest goes to the (word, compound) pairs of largest
    ``weight(word) * df(compound)``, the score mass a compound carries. Unless ``select``
    is ``"mass"``, compounds holding two or more of the query's words (the query's own
    identifiers, usually rare) come first: by the summed weight of the words they hold
    (``"cover"``), by how many (``"words"``) or as one tier (``"multi"``). With
    ``rare_first`` the compounds of words outside ``common`` come next.
    """
    first = {w: 0 if engine_df.get(w, 0) > 0 or not comps[w].size else 1 for w in present}
    # laid out as on one shard on an index of several: one query per shard (fan-out)
    room = max(settings.budget_for(stats.shards, shards <= 1 < stats.shards) - len(present), 0)
    held: list[np.ndarray] = []  # per word: how many query words each compound holds
    covered: list[np.ndarray] = []  # per word: the summed weight of those words
    multi: np.ndarray = np.zeros(0, dtype=np.int32)
    if settings.select != "mass" and len(present) > 1:
        held, covered, multi = _in_several([comps[w][:MULTI_SCAN] for w in present],
                                           [weight[w] for w in present])
    tiers, ids_of = [], []  # per word: its tier, its candidates
    heads: list[tuple[int, Any]] = []  # per word: its multi-word head's size and tiers
    for k, w in enumerate(present):
        ids = comps[w][first[w]:]
        if held:
            several = held[k][first[w]:]  # the head: the list's first MULTI_SCAN
            boosted = several > 1
            head, rest = ids[:boosted.size], ids[:room]
            in_multi = boosted[:rest.size] if rest.size <= boosted.size else np.concatenate(
                (boosted, np.isin(rest[boosted.size:], multi)))
            picked_head = head[boosted]
            ids = np.concatenate((picked_head, rest[~in_multi]))
            # "multi": one tier; "words": the more query words a compound holds, the
            # sooner; "cover": the more weight of the query it holds, the sooner
            heads.append((picked_head.size, -several[boosted] if settings.select == "words"
                          else -covered[k][first[w]:][boosted] if settings.select == "cover"
                          else 0.0))
        else:
            ids = ids[:room]
            heads.append((0, 0.0))
        tiers.append(2 if settings.rare_first and w in common else 1)
        ids_of.append(ids)
    out = {w: comps[w][:first[w]] for w in present}
    if room and ids_of:
        # one gather and one repeat over all words' candidates, not one of each per word
        sizes = [ids.size for ids in ids_of]
        cid = np.concatenate(ids_of)
        owner = np.repeat(np.arange(len(present)), sizes)
        key = np.repeat(np.asarray([weight[w] for w in present], np.float64), sizes) * (
            stats.df_engine[cid].astype(np.float64))
        tier = np.repeat(np.asarray(tiers, np.float64), sizes)
        start = 0
        for size, (boosted_size, head_tier) in zip(sizes, heads, strict=True):
            if boosted_size:
                tier[start:start + boosted_size] = head_tier
            start += size
        top = np.lexsort((-key, tier))[:room]  # by tier, then mass
        # each word's picks in df order, the sub-word's own list order (most frequent
        # first), ties in the order chosen: one stable sort by (word, -df), then cut
        picked, by = cid[top], owner[top]
        picked = picked[np.lexsort((-stats.df_engine[picked].astype(np.int64), by))]
        ends = np.cumsum(np.bincount(by, minlength=len(present))).tolist()
        for k, w in enumerate(present):
            part = picked[(ends[k - 1] if k else 0):ends[k]]
            out[w] = np.concatenate((out[w], part)) if out[w].size else part
    return out


def _in_several(lists: list[np.ndarray], weights: list[float]
                ) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray]:
    """Per list, how many of the lists hold each of its ids and the summed weight of those
    lists, and the ids held by two or more (each list holds an id at most once).

    Built on every search over ~14K ids (a dozen lists' heads) of which ~300 are shared:
    the ids are first hashed into 65,536 buckets, and only those sharing a bucket (every
    shared id, and ~20% more by collision) are sorted to be counted exactly, instead of
    sorting them all with their inverse (measured 0.82 -> 0.58 ms a query)."""
    ids = np.concatenate(lists)
    sizes = [a.size for a in lists]
    each = np.repeat(np.asarray(weights, np.float64), sizes)
    ends = np.cumsum(sizes).tolist()
    starts = [0, *ends[:-1]]
    held = np.ones(ids.size, dtype=np.int64)
    mass = each.copy()
    bucket = ids & (_BUCKETS - 1)
    maybe = np.flatnonzero(np.bincount(bucket, minlength=_BUCKETS)[bucket] > 1)
    shared = ids[:0]
    if maybe.size:
        unique, inverse, runs = np.unique(ids[maybe], return_inverse=True, return_counts=True)
        held[maybe] = runs[inverse]
        mass[maybe] = np.bincount(inverse, weights=each[maybe], minlength=unique.size)[inverse]
        shared = unique[runs > 1]
    return ([held[i:j] for i, j in zip(starts, ends, strict=True)],
            [mass[i:j] for i, j in zip(starts, ends, strict=True)], shared)


def identifier_query(text: str, field: str, stats: IdentifierStats, df_lookup: DfLookup,
                     settings: IdentifierSettings | None = None) -> dict[str, Any]:
    """The query dict of the identifiers mode for one text (what a wrapper would send)."""
    settings = settings or IdentifierSettings()
    return plan_identifier_query(text, stats, df_lookup, settings).query(field, settings)
