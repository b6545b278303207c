"""The clause budget of an identifiers query: which compounds of each query word are sent.

Why a module of its own: this selection runs on every search, before the request, and was
the largest part of the Python time of the identifiers mode (docs/benchmarks/identifiers.md);
so it is written as a few whole-array steps over every word's candidates at once rather than a
numpy step per word, and checked against a plain per-word reference on hypothesis-drawn
inputs (tests/unit/test_identifier_choose.py): the same compounds in the same order.

What it chooses (the settings are esqlog.identifiers.settings'): every word first gets one
clause, itself, or its most frequent compound when it occurs only inside identifiers. The
rest goes to the (word, compound) pairs of largest ``weight(word) * df(compound)``, the
score mass a compound carries. Unless ``select`` is ``"mass"``, compounds holding two or more
of the query's words (the query's own identifiers, usually rare) come first: by the summed
weight of the words they hold (``"cover"``), by how many (``"words"``) or as one tier
(``"multi"``). With ``rare_first`` the compounds of words outside ``common`` come next.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from itertools import accumulate
from typing import Any

import numpy as np

from esqlog.identifiers.settings import IdentifierSettings, Selection

MULTI_SCAN = 5_000  # compounds per word looked at for those holding several query words
#: candidates sorted whole rather than partitioned first (first_by_tier_then_mass): below
#: this the partitions' dozen numpy calls cost more than the larger sort
SORT_ALL = 2_048
_BUCKETS = 1 << 16  # hash buckets the count of ids the marks cannot hold spreads them over
#: ids past this are counted by buckets, so that the tables below stay small: 3 bytes a
#: word of the statistics, per thread that searches (1 MB on Go 153K's 338K words)
MARKS_LIMIT = 1 << 23
#: ids a count finds the repeats of in its table of ranks (uint16: their positions), and
#: shared ids it numbers there; past it, the ids are sorted and the shared ones searched
RANKS = (1 << 16) - 1
_MARKS = threading.local()  # each thread's tables (esqlog.wrapper serves threads at once)


def choose(
    present: list[str],
    comps: Mapping[str, np.ndarray],
    weight: Mapping[str, float],
    engine_df: Mapping[str, int],
    stats: Any,
    settings: IdentifierSettings,
    common: set[str],
    shards: int,
) -> dict[str, np.ndarray]:
    """Compound ids per word within the clause budget, each word's in df order (its own
    list's order: most frequent first), ties in the order chosen.

    ``comps``: each word's compound ids, most frequent first; ``stats`` needs ``shards``
    and ``df_engine`` (the engine df per compound id); ``shards`` is the layout (1: laid
    out as on one shard on an index of several, the fan-out's budget)."""
    n = len(present)
    lists = [comps[w] for w in present]
    first = [
        0 if engine_df.get(w, 0) > 0 or not a.size else 1
        for w, a in zip(present, lists, strict=True)
    ]
    room = max(settings.budget_for(stats.shards, shards <= 1 < stats.shards) - n, 0)
    out = {w: a[:f] for w, a, f in zip(present, lists, first, strict=True)}
    if not room or not n:
        return out
    weights = np.asarray([weight[w] for w in present], np.float64)
    tiers = [2.0 if settings.rare_first and w in common else 1.0 for w in present]
    tier_of = np.asarray(tiers)
    select = settings.budget_select
    if select != "mass" and n > 1:
        cid, owner, tier = _candidates_by_cover(
            lists, weights, tier_of, min(tiers), first, room, select
        )
    else:  # by score mass only: each word's first ``room`` after its first clause
        parts = [a[f : f + room] for a, f in zip(lists, first, strict=True)]
        cid = np.concatenate(parts).astype(np.intp)
        owner = np.repeat(np.arange(n, dtype=np.int64), [a.size for a in parts])
        tier = tier_of[owner]
    df = stats.df_engine[cid]
    key = weights[owner] * df  # the df as float64, as numpy promotes it
    top = first_by_tier_then_mass(tier, key, room)
    # each word's picks in df order, ties in the order chosen: one stable sort by (word, -df)
    by = owner[top].astype(np.int64, copy=False)  # the word above the df's 32 bits, also
    # where numpy's default int is 32 bits (Windows, numpy 1.x)
    picked = cid[top[np.argsort((by << 32) - df[top], kind="stable")]]
    begin = 0
    for w, end in zip(present, accumulate(np.bincount(by, minlength=n).tolist()), strict=True):
        if end > begin:
            part = picked[begin:end]
            out[w] = np.concatenate((out[w], part)) if out[w].size else part
        begin = end
    return out


def _candidates_by_cover(
    lists: list[np.ndarray],
    weights: np.ndarray,
    tier_of: np.ndarray,
    lowest: float,
    first: list[int],
    room: int,
    select: Selection,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(compound id, word, tier) of every candidate: per word, those of its list's head
    (first MULTI_SCAN) that other words' heads hold too, in list order, then its first
    ``room`` others. The multi-word ones are tiered by ``select`` (negated, so first).

    Only the shared ones and each word's first ``room`` are ever gathered: the heads (~14K
    ids on a dozen words) are touched once, by the shared count. When the shared ones
    number ``room`` or more and are all tiered before the others (a plain tier is 1 or 2, a
    shared one's at most 0 for positive weights: their sum negated), they are the only
    candidates: none of the others could be taken (7 queries in 10 on Go 153K: ~600
    candidates instead of ~2,600). The ids come back as ``intp``: numpy gathers by an
    index of that type about 3x faster than by the lists' int32."""
    n = len(lists)
    heads = [a if a.size <= MULTI_SCAN else a[:MULTI_SCAN] for a in lists]
    sizes = [h.size for h in heads]
    ids = np.concatenate(heads)
    index = ids.astype(np.intp)
    where, run, mass, owner_shared = _shared(ids, sizes, weights, index)
    held_by_several = ids[where]  # before the first clauses are lifted out of them
    # the shared ones' tier, negated so first: "words", how many query words hold each
    # (counted before a first clause is lifted); "cover", their summed weight
    multi_tier = (
        -np.bincount(run)[run].astype(np.float64)
        if select == "words"
        else -mass
        if select == "cover"
        else np.zeros(where.size)
    )
    starts = [0, *accumulate(sizes[:-1])]
    # a word's first clause (its list's first compound) stays where it is
    dropped = [s for s, f in zip(starts, first, strict=True) if f]
    if dropped and where.size:
        at = np.searchsorted(where, dropped)
        hit = at[where[np.minimum(at, where.size - 1)] == dropped]
        if hit.size:
            kept = np.ones(where.size, bool)
            kept[hit] = False
            where, multi_tier, owner_shared = where[kept], multi_tier[kept], owner_shared[kept]
    if where.size >= room and multi_tier.max() < lowest:
        # the shared ones fill the budget, tiered before any other: no other can be taken
        return index[where], owner_shared, multi_tier
    # each word's first ``room`` after its first clause, less the shared ones
    first_at = np.asarray(first)
    size_of = np.asarray(sizes)
    begin = np.asarray(starts) + first_at
    count = np.clip(np.minimum(size_of - first_at, room), 0, None)
    plain = np.repeat(begin, count) + _within(count)
    taken = np.zeros(ids.size, bool)
    taken[where] = True
    free = ~taken[plain]
    plain, owner_plain = plain[free], np.repeat(np.arange(n), count)[free]
    position = np.concatenate((where, plain))
    owner = np.concatenate((owner_shared, owner_plain))
    tier = np.concatenate((multi_tier, tier_of[owner_plain]))
    # by word, its shared ones first, list order kept: a stable sort of a small int
    group = owner * 2 + (np.arange(owner.size) >= where.size)
    order = np.argsort(group.astype(np.int16 if n < 16_000 else np.int64), kind="stable")
    cid, owner, tier = index[position[order]], owner[order], tier[order]
    beyond = [a[MULTI_SCAN : f + room] for a, f in zip(lists, first, strict=True)]
    if any(b.size for b in beyond):  # a budget larger than the head: the rest, the
        # compounds shared within the heads left out (they were lifted or not scanned)
        shared = np.unique(held_by_several)
        beyond = [b[~np.isin(b, shared)] for b in beyond]
        extra_owner = np.repeat(np.arange(n), [b.size for b in beyond])
        cid = np.concatenate((cid, *beyond)).astype(np.intp)
        owner = np.concatenate((owner, extra_owner))
        tier = np.concatenate((tier, tier_of[extra_owner]))
        order = np.argsort(owner, kind="stable")  # each word's after its head's
        cid, owner, tier = cid[order], owner[order], tier[order]
    return cid, owner, tier


def first_by_tier_then_mass(tier: np.ndarray, key: np.ndarray, room: int) -> np.ndarray:
    """``np.lexsort((-key, tier))[:room]``: the first ``room`` positions by tier, then by
    mass (largest first), then by position, without sorting every candidate.

    Why: a dozen words bring ~4,000 candidates for ~300 clauses, and sorting them all was
    the largest step of the budget after the shared count. Here two partitions find the
    tier and the mass of the last one taken; only those taken are sorted. Equal masses at
    that boundary are taken in position order, as the stable sort takes them."""
    if tier.size <= max(room, SORT_ALL):
        return np.lexsort((-key, tier))[:room]
    last_tier = np.partition(tier, room - 1)[room - 1]
    before = tier < last_tier
    need = room - int(np.count_nonzero(before))
    at = np.flatnonzero(tier == last_tier)
    if at.size > need:
        mass = key[at]
        bound = np.partition(mass, at.size - need)[at.size - need]  # the need-th largest
        above = mass > bound
        ties = np.flatnonzero(mass == bound)[: need - int(np.count_nonzero(above))]
        taken = np.zeros(at.size, bool)
        taken[above] = True
        taken[ties] = True
        at = at[taken]
    # each part in position order (the sort's last key), and their tiers differ
    chosen = np.concatenate((np.flatnonzero(before), at))
    found: np.ndarray = chosen[np.lexsort((-key[chosen], tier[chosen]))]
    return found


def _within(count: np.ndarray) -> np.ndarray:
    """0, 1, ... count[k] - 1 for each k, concatenated."""
    starts = np.repeat(np.cumsum(count) - count, count)
    out: np.ndarray = np.arange(starts.size) - starts
    return out


def shared_counts(
    ids: np.ndarray, sizes: Sequence[int] | np.ndarray, weights: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where the concatenated lists (each holds an id at most once) hold an id that
    another list holds too, in order: those positions, how many lists hold the id there,
    and the summed weight of those lists. Every other id is held by its own list alone.

    The count as the tests read it (tests/unit/test_identifier_choose.py compares it with a
    reference count); the budget itself takes :func:`_shared`'s id numbers instead."""
    where, run, mass, _ = _shared(ids, sizes, weights)
    return where, np.bincount(run)[run], mass


def _shared(
    ids: np.ndarray,
    sizes: Sequence[int] | np.ndarray,
    weights: np.ndarray,
    index: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`shared_counts` with, instead of how many lists hold each position's id, a
    number per shared id (equal at the positions holding the same id: the count is their
    ``bincount``), and the list of each position (its word); ``index``: the ids as
    ``intp`` when the caller has them (else converted here).

    Built on every search over ~14K ids (a dozen lists' heads) of which ~600 are shared.
    The positions of the ids held twice are found without sorting the ids
    (:func:`_repeats`: each position written into this thread's table of ranks, one cell a
    word of the statistics, and read back; docs/benchmarks/identifiers.md, "The shared
    count without a sort": a sort of the 14K ids took ~200 us on some CPUs, ~40% of the
    budget), in position order; past RANKS ids by a sort and a table of marks
    (:func:`_repeats_by_sort`). The table of ranks then numbers the shared ids. The
    weights are summed in position order, so the masses are the same floats whichever way
    the shared ids were found."""
    bounds = list(accumulate(sizes))
    if not ids.size:
        return _nothing_shared()
    if ids.dtype.itemsize > 4 or ids.dtype.kind not in "iu":  # ids too wide for the marks
        return _shared_by_bucket(ids, bounds, weights)
    low, high = int(ids.min()), int(ids.max())
    if low < 0 or high >= MARKS_LIMIT:
        return _shared_by_bucket(ids, bounds, weights)
    index = ids.astype(np.intp) if index is None else index
    marks, ranks = _tables(high + 1)
    if ids.size <= RANKS:
        where, shared = _repeats(index, ranks)
    else:
        where, shared = _repeats_by_sort(ids, index, marks)
    if not where.size:
        return _nothing_shared()
    # which shared id each position holds: a number per id (one of its repeats' numbers,
    # each unique to that id), read back only where just written (a binary search per
    # position instead mispredicts its branches: ~3x the time amid a search); past the
    # numbers the ranks hold (only past RANKS ids, never on real queries), by that binary
    # search of the sorted shared ids
    if shared.size <= RANKS:
        ranks[shared] = np.arange(shared.size, dtype=ranks.dtype)
        run = ranks[index[where]]
    else:
        run = np.searchsorted(shared, ids[where])
    owner = np.searchsorted(bounds, where, side="right")
    mass = np.bincount(run, weights=weights[owner])[run]
    return where, run, mass, owner


def _repeats(index: np.ndarray, ranks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The positions of ``index`` (at most RANKS of them) whose id another position holds
    too, in order, and those ids (each at least once, in no particular order).

    Each position is written into its id's cell of ``ranks``; whichever write lands last,
    the cell holds one of that id's positions, so each of its other positions reads back a
    number not its own, and an id held once reads back its own. The positions read back
    wrong are all of a shared id's but the one its cell holds, which is added from the
    cell. Two passes over the ids and a mask of their positions, instead of a sort of the
    ids and a pass over a table of marks (~4x faster on 14K ids)."""
    at = np.arange(index.size, dtype=ranks.dtype)
    ranks[index] = at
    later = np.flatnonzero(ranks[index] != at)
    shared = index[later]
    held = np.zeros(index.size, bool)
    held[later] = True
    held[ranks[shared]] = True  # each shared id's position its cell kept
    return np.flatnonzero(held), shared


def _repeats_by_sort(
    ids: np.ndarray, index: np.ndarray, marks: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_repeats` for more ids than its positions fit (RANKS): the shared ids found by
    a sort (sorted: an id held k times is there k - 1 times), their positions by marks."""
    ordered = np.sort(ids)
    shared = ordered[1:][ordered[1:] == ordered[:-1]]
    if not shared.size:
        return shared, shared
    try:  # the marks are cleared whatever happens: a mark left set would count for ever
        marks[shared] = True
        where = np.flatnonzero(marks[index])
    finally:
        marks[shared] = False
    return where, shared


def _nothing_shared() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    empty = np.zeros(0, np.intp)
    return empty, empty, np.zeros(0, np.float64), empty


def _tables(size: int) -> tuple[np.ndarray, np.ndarray]:
    """This thread's marks (``size`` or more, every one False) and ranks (as many; what
    they hold is only read where the caller has just written it)."""
    marks: np.ndarray | None = getattr(_MARKS, "marks", None)
    if marks is None or marks.size < size:
        # grown by doubling, never past MARKS_LIMIT (the caller asks at most that): 3 bytes
        # a word of the statistics per searching thread at most
        size = min(max(size, 2 * (0 if marks is None else marks.size)), MARKS_LIMIT)
        fresh_marks, fresh_ranks = np.zeros(size, bool), np.zeros(size, np.uint16)
        _MARKS.marks, _MARKS.ranks = fresh_marks, fresh_ranks  # both or neither
        return fresh_marks, fresh_ranks
    return marks, _MARKS.ranks


def _shared_by_bucket(
    ids: np.ndarray, bounds: Sequence[int], weights: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_shared` for ids the marks cannot hold (wider than 32 bits, negative or past
    MARKS_LIMIT): hashed into 65,536 buckets, only those sharing a bucket sorted to be
    counted exactly."""
    bucket = ids & (_BUCKETS - 1)
    maybe = np.flatnonzero(np.bincount(bucket, minlength=_BUCKETS)[bucket] > 1)
    if not maybe.size:
        return _nothing_shared()
    owner = np.searchsorted(bounds, maybe, side="right")
    each = weights[owner]
    unique, inverse, runs = np.unique(ids[maybe], return_inverse=True, return_counts=True)
    mass = np.bincount(inverse, weights=each, minlength=unique.size)[inverse]
    shared = runs[inverse] > 1  # every position of such an id is kept: a run per id
    return maybe[shared], inverse[shared], mass[shared], owner[shared]
