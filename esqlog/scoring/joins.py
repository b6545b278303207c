"""Query-side identifier joining: recover identifier matches on a frozen analyzer.

Under the ``standard`` analyzer an index holds ``readfile`` and ``read_file`` as single
tokens while a natural-language query says "read file". From the analyzed query terms
t1..tk esqlog forms compounds of 2 and 3 adjacent terms, joined with "" and "_", keeps those
the index vocabulary holds (df > 0) and that are not already query terms, and adds them as
extra optional clauses with their own q-log IDF times a weight w < 1 (they overlap with
their parts). Everything stays a plain query on the existing index.

The candidates' statistics travel in the same ``_mtermvectors`` request as the query's own
analysis, so they cost no extra round trip: the request carries candidates made from a
client-side approximation of the tokenizer, and only those that the engine's real analysis
confirms (adjacent analyzed terms) are used.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence

SEPARATORS: tuple[str, ...] = ("", "_")
MAX_PARTS = 3
MAX_CANDIDATES = 64  # a bound per text, so a 100 KB query cannot explode the request
DEFAULT_JOIN_WEIGHT = 0.5

# The standard tokenizer keeps letters/digits/underscore runs and joins them across "." "'"
# ":" between letters; lowercasing follows. Close enough for proposing candidates.
_APPROX_TOKEN = re.compile(r"\w+(?:[.'’:]\w+)*", re.UNICODE)
_SPACE = re.compile(r"\s")


def approximate_terms(text: str) -> list[str]:
    """What the standard analyzer would probably make of ``text`` (lowercased words)."""
    return [t.lower() for t in _APPROX_TOKEN.findall(text)]


def join_candidates(terms: Sequence[str], max_parts: int = MAX_PARTS) -> list[str]:
    """Compounds of 2..max_parts adjacent terms with each separator, minus the terms themselves."""
    return list(_candidates(tuple(terms), max_parts))


@functools.lru_cache(maxsize=1024)
def _candidates(terms: tuple[str, ...], max_parts: int) -> tuple[str, ...]:
    """join_candidates, memoized: one search asks for the same terms' joins up to three
    times (statistics, rewrite, rerank), and the work is all string building."""
    return tuple(_form_candidates(terms, max_parts))


def _form_candidates(terms: Sequence[str], max_parts: int) -> list[str]:
    present = set(terms)
    spaced = {t for t in present if _SPACE.search(t)}  # no index term can contain a space
    windows = [
        terms[start : start + size]
        for size in range(2, max_parts + 1)
        for start in range(len(terms) - size + 1)
    ]
    if spaced:
        windows = [parts for parts in windows if not any(p in spaced for p in parts)]
    joined = dict.fromkeys(sep.join(parts) for parts in windows for sep in SEPARATORS)
    return [c for c in joined if c not in present][:MAX_CANDIDATES]


def proposed_candidates(text: str) -> list[str]:
    """Candidates to ask the engine about before the real analysis is known."""
    return join_candidates(approximate_terms(text))


def confirmed_joins(
    terms: Sequence[str], candidate_df: Mapping[str, int]
) -> tuple[tuple[str, int], ...]:
    """Joins of the real analyzed terms that the index holds, with their df."""
    if not candidate_df:  # joins off, or nothing asked: skip forming candidates
        return ()
    return tuple(
        (c, int(candidate_df[c])) for c in join_candidates(terms) if candidate_df.get(c, 0) > 0
    )


def joins_that_fit(
    texts: Sequence[tuple[Sequence[str], tuple[tuple[str, int], ...]]],
    max_clauses: int,
    fixed: int = 1,
) -> list[tuple[tuple[str, int], ...]]:
    """Each text's joins, cut so that one clause per distinct term, per join and ``fixed``
    more (a client rerank's ids filter) stay within ``max_clauses``, the engine's limit.

    A join is an extra clause the native query lacks: where it does not fit it is dropped
    (in candidate order, later texts first to lose), never the search.
    """
    budget = max_clauses - fixed - sum(len(set(terms)) for terms, _ in texts)
    out = []
    for _, joins in texts:
        kept = joins[: max(0, budget)]
        budget -= len(kept)
        out.append(kept)
    return out
