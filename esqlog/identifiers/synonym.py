"""The identifiers query through the esqlog-terms engine plugin: ``esqlog_terms`` groups.

Why: a ``span_or`` reads positions and cannot skip documents, so it is the slow part of the
identifiers query. The plugin (plugins/esqlog-terms, installed by
scripts/engines/build-plugin.sh) registers ``{"esqlog_terms": {"field", "terms", "boost"}}``,
a Lucene ``SynonymQuery``: the same ONE BM25 saturation of the terms' summed tf as the span,
with the field's own length norm, but over postings with impacts (no positions, dynamic
pruning). Only clusters that accept plugins have it, hence an option
(IdentifierSettings.engine_query), off by default.

What differs is the idf. SynonymQuery (Lucene 9.12 and 10.x, SynonymWeight) takes, over the
listed terms the scoring shard holds (local df > 0), docFreq = the LARGEST df and
totalTermFreq = their sum (which BM25 does not read), df from the dfs statistics under
``dfs_query_then_fetch`` and the shard's own without; N is the field's document count from
the same source. So a group's boost is ``weight / idf(max df of its terms there)`` (a span's
is ``weight / sum of idf``), and every word still scores ``weight * saturation(summed tf)``.

Where one query serves several shards (dfs), a group whose largest-df term is missing from a
shard holding others of its terms would take a larger idf there, and so score above its
weight. Such a group is cut (:func:`safe_parts`) into parts whose largest-df term every shard
holding a part's term holds too. Since a word's own term is nearly always on every shard,
this usually leaves a word's compounds as ONE group where spans needed one per shard set.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

Group = tuple[tuple[str, ...], float]  # (terms, boost)


def idf(df: float, n: float) -> float:
    """Lucene's BM25 idf, as the engine computes it for the pseudo-term."""
    return float(np.log1p((n - df + 0.5) / (df + 0.5)))


def clause(field: str, terms: Sequence[str], boost: float) -> dict[str, Any]:
    """The plugin query of one group."""
    return {"esqlog_terms": {"field": field, "terms": list(terms), "boost": boost}}


def boosted(terms: tuple[str, ...], weight: float, df: Mapping[str, float], n: float
            ) -> Group | None:
    """``terms`` with the boost that makes the engine score ``weight * saturation``
    (None when none of them is in the index)."""
    top = max((df.get(t, 0.0) for t in terms), default=0.0)
    if top <= 0:
        return None
    value = idf(top, n)
    return (terms, weight / value) if value > 0 else None


def safe_parts(terms: Sequence[str], df: Mapping[str, float],
               held: Mapping[str, tuple[bool, ...]]) -> list[tuple[str, ...]]:
    """``terms`` cut so that, in each part, the term of largest df is held by every shard
    that holds any term of the part (each part scores its weight exactly where it matches);
    parts and the terms in them keep the caller's order, which tests and explain read."""
    left = list(terms)
    parts: list[tuple[str, ...]] = []
    while left:
        top = max(left, key=lambda t: df.get(t, 0.0))
        where = held[top]
        part = tuple(t for t in left if all(w or not h for w, h in zip(where, held[t],
                                                                       strict=True)))
        parts.append(part)
        left = [t for t in left if t not in part]
    return parts


def word_groups(groups: Sequence[Group], weight: float, apart: bool, df: Mapping[str, float],
                n: float, held: Mapping[str, tuple[bool, ...]] | None = None) -> list[Group]:
    """A word's groups for the plugin: with ``held`` (one query for several shards) its
    compounds' groups merged and cut into safe parts, else as they are; each boost from the
    largest df (its own term, kept apart for a common sub-word, stays a group of its own)."""
    head = list(groups[:1]) if apart else []
    rest = groups[len(head):]
    if held is None:
        term_sets = [terms for terms, _ in (*head, *rest)]
    else:
        merged = tuple(dict.fromkeys(t for terms, _ in rest for t in terms))
        term_sets = [terms for terms, _ in head] + safe_parts(merged, df, held)
    out = [boosted(terms, weight, df, n) for terms in term_sets]
    return [g for g in out if g is not None]
