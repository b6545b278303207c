"""The span groups of an identifiers query: each word's terms by the shards that hold them.

Why a module of its own: Lucene sums a span's idf only over the terms present on the shard
that scores it (see esqlog.identifiers.query), so on several shards a word's terms are grouped by
shard set, one span per group with its own exact boost. The query is built on every search,
and grouping word by word cost a dozen small numpy calls per word (about half of the build
time on a three-shard Go index); here every word of the query is grouped in one pass.
With ``layout="shard"`` the groups are one per shard instead (see :func:`_per_shard`): exact,
at more clauses. ``"auto"`` takes that exact layout for the words where it costs little (see
:func:`group_words`) and the best-of-groups one for the rest.

Order, which the engine does not care about but tests and ``esqlog explain`` do: words in the
caller's order; within a word the group holding its first term first, then by shard mask;
within a group the terms in the caller's order (the word itself first, then its compounds).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import itemgetter

import numpy as np

from esqlog.identifiers.split_stats import IdentifierStats
from esqlog.statistics.mapped_terms import MappedTerms, remember_positions

Groups = tuple[tuple[tuple[str, ...], float], ...]  # (terms, boost) per span or term


def group_words(
    words: Sequence[str],
    word_df: Mapping[str, int],
    chosen: Mapping[str, np.ndarray],
    stats: IdentifierStats,
    weight: Mapping[str, float],
    alone: set[str],
    layout: str = "max",
    exact_df: float = 0.0,
    exact_clauses: int = 0,
    shards: int | None = None,
) -> list[tuple[Groups, bool]]:
    """Per word: its own term (when the index holds it) and its chosen compounds, grouped,
    and whether the word scores in one saturation on every shard (exact).

    A compound's engine df is the df snapshot's, copied into the split statistics by the
    same calibration; the word's own df comes from ``word_df``. A term absent from the index
    gets no clause: the engine would not sum its idf either. A word in ``alone`` (a common
    sub-word, see span_max_df) has its own term as a group of its own, its compounds apart.

    ``layout`` "max" and "sum": one group per shard set; "shard": one span per shard (exact);
    "auto": one span per shard for a word where that repeats few terms (at most
    ``exact_clauses`` more clauses than its shard sets) and rare ones (its listed terms held
    by every shard, its own term included, have summed df at most ``exact_df`` of the
    documents), shard sets for the others. Each repeated term costs a lookup per shard and
    phase and its positions once per span: the words where this is cheap are the query's own
    identifiers and their parts, whose documents also hold rare compounds of other shard
    sets (where the best of the groups undercounts them).

    ``shards=1`` lays the query out as on one shard whatever the index has: for queries
    sent to each shard on its own (esqlog.identifiers.shards).
    """
    if not words:
        return []
    one_shard = (stats.shards if shards is None else shards) <= 1
    owner, part, position, df, mask, names_all = _rows(
        words, word_df, chosen, stats, alone, one_shard
    )
    if one_shard or layout in ("max", "sum"):
        single = _one_set_per_part(owner, part, mask, len(words)) if not one_shard else None
        return [
            (g, single is None or bool(single[k]))
            for k, g in enumerate(
                _by_shard_set(
                    words, stats, weight, owner, part, position, df, mask, names_all, one_shard
                )
            )
        ]
    if layout == "shard":
        return [
            (g, True)
            for g in _per_shard(words, stats, weight, owner, part, position, df, mask, names_all)
        ]
    everywhere = (mask == 0) | (mask == np.uint64((1 << stats.shards) - 1))  # 0: unknown
    cost = np.bincount(owner, weights=df * everywhere, minlength=len(words))
    rare = cost <= exact_df * stats.doc_count
    rows = np.flatnonzero(rare[owner])  # one span per shard only for the words rare enough
    exact = _per_shard(
        words,
        stats,
        weight,
        owner[rows],
        part[rows],
        position[rows],
        df[rows],
        mask[rows],
        [names_all[r] for r in rows.tolist()],
    )
    sets = _by_shard_set(words, stats, weight, owner, part, position, df, mask, names_all, False)
    single = _one_set_per_part(owner, part, mask, len(words))
    cheap = [
        ok and _size(e) - _size(g) <= exact_clauses
        for e, g, ok in zip(exact, sets, rare.tolist(), strict=True)
    ]
    return [
        (e, True) if ok else (g, bool(one))
        for e, g, ok, one in zip(exact, sets, cheap, single, strict=True)
    ]


def _rows(
    words: Sequence[str],
    word_df: Mapping[str, int],
    chosen: Mapping[str, np.ndarray],
    stats: IdentifierStats,
    alone: set[str],
    one_shard: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """Every term of the query as one row of parallel arrays, built in one pass for all words:
    (owner word, part, position in its word, engine df, shard mask, name).

    Rows are each word's own term (position 0, when the index holds it), then its compounds
    the index holds (positions 1, 2, ...): a term absent from the index gets no clause.
    Part 1 marks the compounds of a word in ``alone``, grouped apart from its own term. The
    shard masks are all 0 when the query is laid out as on one shard.
    """
    sizes = [chosen[w].size for w in words]
    comp = np.concatenate([chosen[w] for w in words]).astype(np.int64)
    comp_df = stats.df_engine[comp].astype(np.float64)
    comp_owner = np.repeat(np.arange(len(words)), sizes)
    keep = comp_df > 0
    comp, comp_df, comp_owner = comp[keep], comp_df[keep], comp_owner[keep]
    own_rows = [k for k, w in enumerate(words) if word_df.get(w, 0) > 0]
    own_df = np.asarray([float(word_df[words[k]]) for k in own_rows])
    own_ids = [stats.word_id.get(words[k]) for k in own_rows]
    if one_shard:
        own_mask = np.zeros(len(own_rows), np.uint64)
        comp_mask = np.zeros(comp.size, np.uint64)
    else:
        own_mask = np.asarray([0 if i is None else int(stats.mask[i]) for i in own_ids], np.uint64)
        comp_mask = stats.mask[comp].astype(np.uint64)
    has_own = np.zeros(len(words), bool)
    has_own[own_rows] = True
    split_apart = np.asarray([w in alone for w in words], bool) & has_own
    # rows: each word's own term (position 0), then its compounds (positions 1, 2, ...)
    owner = np.concatenate((np.asarray(own_rows, np.int64), comp_owner))
    position = np.concatenate(
        (np.zeros(len(own_rows), np.int64), _positions_within(comp_owner) + 1)
    )
    df = np.concatenate((own_df, comp_df))
    mask = np.concatenate((own_mask, comp_mask))
    own = np.concatenate((np.ones(len(own_rows), bool), np.zeros(comp.size, bool)))
    # part 1: the compounds of a word whose own term is a group of its own
    part = (split_apart[owner] & ~own).astype(np.int64)
    names_all = [words[k] for k in own_rows] + _names(stats.words, comp)
    return owner, part, position, df, mask, names_all


def one_shard_groups(
    words: Sequence[str],
    word_df: Mapping[str, int],
    chosen: Mapping[str, np.ndarray],
    stats: IdentifierStats,
    weight: Mapping[str, float],
    alone: set[str],
    engine_idf: bool,
) -> list[tuple[Groups, bool]]:
    """:func:`group_words` for a query laid out as on one shard: per word its own term (when
    the index holds it) and its compounds the index holds, as one group or two (the own
    term apart for a word in ``alone``). Each boost is the word's weight: the esqlog_terms
    plugin's layout (no engine idf), or with ``engine_idf`` that weight over the engine's
    idf sum of the group's terms: spans on one shard, or each shard sent its own query
    (summed as group_words sums them, so the bodies are the same to the bit).

    Why apart from group_words: on one shard its shard-set machinery finds one set per
    part, at three times the cost of these groups (0.22 against 0.07 ms a search, Go 153K).
    Spans sent per shard remember the compounds' positions for the per-shard queries,
    which look them up by name next (esqlog.identifiers.shards)."""
    if not words:
        return []
    # every word's compounds in one gather: those the index holds, then their names
    parts = [chosen[w] for w in words]
    sizes = [a.size for a in parts]
    ids = np.concatenate(parts).astype(np.intp, copy=False)  # numpy gathers by intp fastest
    held = stats.df_engine[ids] > 0
    kept = sizes  # the usual case: every chosen compound is still in the index
    if not held.all():
        ids = ids[held]
        owner = np.repeat(np.arange(len(words)), sizes)
        kept = np.bincount(owner[held], minlength=len(words)).tolist()
    names = _names(stats.words, ids)
    out: list[tuple[Groups, bool]] = []
    owned: list[bool] = []
    start = 0
    for w, n in zip(words, kept, strict=True):
        comps = tuple(names[start : start + n])
        start += n
        own = (w,) if word_df.get(w, 0) > 0 else ()
        owned.append(bool(own))
        if own and comps and w in alone:
            out.append((((own, weight[w]), (comps, weight[w])), True))
        elif own or comps:
            out.append((((own + comps, weight[w]),), True))
        else:
            out.append(((), True))
    if not engine_idf:
        return out
    if stats.shards > 1:  # each shard's own query looks these up by name next
        remember_positions(stats.word_id, names, ids)
    return _span_boosts(words, word_df, stats, weight, out, owned, ids)


def _span_boosts(
    words: Sequence[str],
    word_df: Mapping[str, int],
    stats: IdentifierStats,
    weight: Mapping[str, float],
    grouped: list[tuple[Groups, bool]],
    owned: list[bool],
    ids: np.ndarray,
) -> list[tuple[Groups, bool]]:
    """``grouped``'s groups with their word's weight over the engine's idf sum of their
    terms (a group whose sum is not positive dropped): each term's idf in group order (a
    word's own term when ``owned``, then its compounds, ``ids`` in order), summed by one
    reduceat as group_words sums them."""
    sizes = [len(terms) for groups, _ in grouped for terms, _ in groups]
    df = np.empty(sum(sizes), np.float64)
    is_own = np.zeros(df.size, bool)
    firsts = np.cumsum([0] + [sum(len(t) for t, _ in groups) for groups, _ in grouped])[:-1]
    is_own[firsts[np.asarray(owned, bool)]] = True
    df[is_own] = [float(word_df[w]) for w, o in zip(words, owned, strict=True) if o]
    df[~is_own] = stats.df_engine[ids]
    bounds = np.cumsum([0, *sizes])[:-1]
    sums = np.add.reduceat(_engine_idf(df, stats), bounds).tolist() if sizes else []
    out: list[tuple[Groups, bool]] = []
    g = 0
    for w, (groups, _) in zip(words, grouped, strict=True):
        boosted = []
        for terms, _ in groups:
            if sums[g] > 0:
                boosted.append((terms, weight[w] / sums[g]))
            g += 1
        out.append((tuple(boosted), True))
    return out


def _names(words: Sequence[str], ids: np.ndarray) -> list[str]:
    """The words at ``ids``: one gather of a memory-mapped word list's bytes
    (MappedTerms.take), one C-level gather from a list (the loaded statistics' words), else
    one lookup each."""
    if isinstance(words, MappedTerms):
        return words.take(ids)
    positions = ids.tolist()
    if isinstance(words, list) and len(positions) > 1:
        return list(itemgetter(*positions)(words))
    return [words[i] for i in positions]


def _one_set_per_part(
    owner: np.ndarray, part: np.ndarray, mask: np.ndarray, n_words: int
) -> np.ndarray:
    """Per word: whether each of its parts lies on one shard set, so that its shard-set
    groups are one span per part and already exact (a word's terms on the same shards)."""
    key = owner.astype(np.int64) * 2 + part  # part is 0 or 1
    order = np.lexsort((mask, key))
    key, by_mask = key[order], mask[order]
    new_part = np.ones(key.size, bool)
    new_part[1:] = key[1:] != key[:-1]
    new_set = new_part.copy()
    new_set[1:] |= by_mask[1:] != by_mask[:-1]
    single: np.ndarray = np.bincount(key[new_set] // 2, minlength=n_words) == np.bincount(
        key[new_part] // 2, minlength=n_words
    )
    return single


def _size(groups: Groups) -> int:
    """The clauses (listed terms) of a word's groups."""
    return sum(len(terms) for terms, _ in groups)


def _by_shard_set(
    words: Sequence[str],
    stats: IdentifierStats,
    weight: Mapping[str, float],
    owner: np.ndarray,
    part: np.ndarray,
    position: np.ndarray,
    df: np.ndarray,
    mask: np.ndarray,
    names_all: list[str],
    one_shard: bool,
) -> list[Groups]:
    """Per word (and part), one span per set of shards holding its terms (one on one shard)."""
    # the group holding a part's first term comes first in that part
    by_part = np.lexsort((position, part, owner))
    first = np.ones(by_part.size, bool)
    first[1:] = (owner[by_part][1:] != owner[by_part][:-1]) | (
        part[by_part][1:] != part[by_part][:-1]
    )
    lead_mask = mask[by_part[first]][np.cumsum(first) - 1]
    in_lead = np.empty(by_part.size, bool)
    in_lead[by_part] = mask[by_part] == lead_mask
    key = np.zeros_like(mask) if one_shard else mask
    order = np.lexsort((position, key, ~in_lead, part, owner))
    o = owner[order]
    bounds, ends, sums = _idf_runs(_engine_idf(df, stats)[order], o, part[order], key[order])
    names = [names_all[i] for i in order.tolist()]
    out: list[list[tuple[tuple[str, ...], float]]] = [[] for _ in words]
    for b, e, s, k in zip(bounds, ends, sums, o[bounds].tolist(), strict=True):
        if s > 0:
            out[k].append((tuple(names[b:e]), weight[words[k]] / s))
    return [tuple(groups) for groups in out]


def _per_shard(
    words: Sequence[str],
    stats: IdentifierStats,
    weight: Mapping[str, float],
    owner: np.ndarray,
    part: np.ndarray,
    position: np.ndarray,
    df: np.ndarray,
    mask: np.ndarray,
    names_all: list[str],
) -> list[Groups]:
    """Per word (and part), one span per shard over the terms that shard holds.

    On shard k the span of k has every term present, so the engine's idf sum is the one
    the boost divides by and the document gets one exact saturation over all its terms;
    any other shard's span holds a subset of those terms with a boost over a larger sum,
    so under a dis_max (tie 0) the span of k wins on shard k: the word scores exactly as
    in the split stream on every shard. Identical spans (a word whose terms all sit on the
    same shards) are sent once.
    """
    shards = stats.shards
    held = np.where(mask == 0, np.uint64((1 << shards) - 1), mask)  # 0: unknown, assume all
    bits = (held[:, None] >> np.arange(shards, dtype=np.uint64)[None, :]) & np.uint64(1)
    row, shard = np.nonzero(bits)
    order = np.lexsort((position[row], shard, part[row], owner[row]))
    row, shard = row[order], shard[order]
    o, p = owner[row], part[row]
    bounds, ends, sums = _idf_runs(_engine_idf(df, stats)[row], o, p, shard)
    out: list[dict[tuple[int, tuple[str, ...]], float]] = [{} for _ in words]
    for b, e, s, k, q in zip(
        bounds, ends, sums, o[bounds].tolist(), p[bounds].tolist(), strict=True
    ):
        if s > 0:
            out[k].setdefault(
                (q, tuple(names_all[r] for r in row[b:e].tolist())), weight[words[k]] / s
            )
    return [tuple((terms, boost) for (_, terms), boost in groups.items()) for groups in out]


def _engine_idf(df: np.ndarray, stats: IdentifierStats) -> np.ndarray:
    """The engine's BM25 idf of each df (dfs: the index's N and df)."""
    n = float(stats.doc_count)
    return np.log1p((n - df + 0.5) / (df + 0.5))


def _idf_runs(idf: np.ndarray, *keys: np.ndarray) -> tuple[list[int], list[int], list[float]]:
    """Runs of rows with equal keys (rows sorted by them): starts, ends and idf sums."""
    start = np.zeros(idf.size, bool)
    start[:1] = True
    for key in keys:
        start[1:] |= key[1:] != key[:-1]
    bounds = np.flatnonzero(start)
    if not bounds.size:
        return [], [], []
    sums = np.add.reduceat(idf, bounds)
    return bounds.tolist(), np.append(bounds[1:], idf.size).tolist(), sums.tolist()


def _positions_within(owner: np.ndarray) -> np.ndarray:
    """0, 1, 2, ... within each run of equal (sorted) owners."""
    if not owner.size:
        return owner.astype(np.int64)
    starts = np.flatnonzero(np.concatenate(([True], owner[1:] != owner[:-1])))
    run = np.repeat(starts, np.diff(np.append(starts, owner.size)))
    return np.arange(owner.size) - run
