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

from collections.abc import Mapping
from typing import Any

import numpy as np

from esqlog.identifiers.settings import IdentifierSettings

MULTI_SCAN = 5_000  # compounds per word looked at for those holding several query words
_BUCKETS = 1 << 16  # hash buckets the count of ids too wide to pack spreads them over


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
    first = np.asarray(
        [0 if engine_df.get(w, 0) > 0 or not comps[w].size else 1 for w in present], np.int64
    )
    room = max(settings.budget_for(stats.shards, shards <= 1 < stats.shards) - n, 0)
    out = {w: comps[w][:f] for w, f in zip(present, first.tolist(), strict=True)}
    if not room or not n:
        return out
    weights = np.asarray([weight[w] for w in present], np.float64)
    tier_of = np.asarray([2.0 if settings.rare_first and w in common else 1.0 for w in present])
    if settings.select != "mass" and n > 1:
        cid, owner, tier = _candidates_by_cover(
            present, comps, weights, tier_of, first, room, settings
        )
    else:  # by score mass only: each word's first ``room`` after its first clause
        lists = [comps[w][f : f + room] for w, f in zip(present, first.tolist(), strict=True)]
        cid = np.concatenate(lists)
        owner = np.repeat(np.arange(n), [a.size for a in lists])
        tier = tier_of[owner]
    df = stats.df_engine[cid]
    key = weights[owner] * df.astype(np.float64)
    top = first_by_tier_then_mass(tier, key, room)
    # each word's picks in df order, ties in the order chosen: one stable sort by (word, -df)
    picked, by = cid[top], owner[top]
    picked = picked[np.lexsort((-df[top].astype(np.int64), by))]
    ends = np.cumsum(np.bincount(by, minlength=n)).tolist()
    for k, w in enumerate(present):
        part = picked[(ends[k - 1] if k else 0) : ends[k]]
        out[w] = np.concatenate((out[w], part)) if out[w].size else part
    return out


def _candidates_by_cover(
    present: list[str],
    comps: Mapping[str, np.ndarray],
    weights: np.ndarray,
    tier_of: np.ndarray,
    first: np.ndarray,
    room: int,
    settings: IdentifierSettings,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(compound id, word, tier) of every candidate: per word, those of its list's head
    (first MULTI_SCAN) that other words' heads hold too, in list order, then its first
    ``room`` others. The multi-word ones are tiered by ``select`` (negated, so first).

    Only the shared ones and each word's first ``room`` are ever gathered: the heads (~14K
    ids on a dozen words) are touched once, by the shared count. When the shared ones
    number ``room`` or more and are all tiered before the others (a plain tier is 1 or 2, a
    shared one's at most 0 for positive weights: their sum negated), they are the only
    candidates: none of the others could be taken (7 queries in 10 on Go 153K: ~600
    candidates instead of ~2,600)."""
    n = len(present)
    heads = [comps[w][:MULTI_SCAN] for w in present]
    sizes = np.asarray([h.size for h in heads], np.int64)
    ids = np.concatenate(heads)
    starts = np.cumsum(sizes) - sizes
    where, held, mass = shared_counts(ids, sizes, weights)
    owner_shared = np.searchsorted(starts, where, side="right") - 1
    lifted = where - starts[owner_shared] >= first[owner_shared]  # a word's first clause stays
    where, held, mass, owner_shared = (
        where[lifted],
        held[lifted],
        mass[lifted],
        owner_shared[lifted],
    )
    multi_tier = (
        -held.astype(np.float64)
        if settings.select == "words"
        else -mass
        if settings.select == "cover"
        else np.zeros(where.size)
    )
    if where.size >= room and multi_tier.max() < tier_of.min():
        # the shared ones fill the budget, tiered before any other: no other can be taken
        return ids[where], owner_shared, multi_tier
    # each word's first ``room`` after its first clause, less the shared ones
    begin = starts + first
    count = np.clip(np.minimum(sizes - first, room), 0, None)
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
    cid, owner, tier = ids[position[order]], owner[order], tier[order]
    beyond = [comps[w][MULTI_SCAN : f + room] for w, f in zip(present, first.tolist(), strict=True)]
    if any(b.size for b in beyond):  # a budget larger than the head: the rest, the
        # compounds shared within the heads left out (they were lifted or not scanned)
        shared = np.unique(ids[where])
        beyond = [b[~np.isin(b, shared)] for b in beyond]
        extra_owner = np.repeat(np.arange(n), [b.size for b in beyond])
        cid = np.concatenate((cid, *beyond))
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
    if tier.size <= room:
        return np.lexsort((-key, tier))
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
    ids: np.ndarray, sizes: np.ndarray, weights: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where the concatenated lists (each holds an id at most once) hold an id that
    another list holds too, in order: those positions, how many lists hold the id there,
    and the summed weight of those lists. Every other id is held by its own list alone.

    Built on every search over ~14K ids (a dozen lists' heads) of which ~600 are shared:
    each id and its position are packed into one int64 (the id above the position's
    bits), so that one sort of plain integers brings every id's places together, in
    position order, with no sort by key nor inverse to build (measured on Go 153K 0.29 ->
    0.20 ms a query against hashing the ids into buckets and sorting the colliding ones
    with their inverse). The weights are summed in position order, as before, so the
    masses are the same floats."""
    if ids.dtype.itemsize > 4 or ids.dtype.kind not in "iu":  # ids too wide to pack
        return _shared_counts_by_bucket(ids, sizes, weights)
    bits = max(int(ids.size).bit_length(), 1)
    key = (ids.astype(np.int64) << bits) | np.arange(ids.size, dtype=np.int64)
    key.sort()
    sid = key >> bits
    same = sid[1:] == sid[:-1]  # this place's id is the one of the place before
    twice = np.zeros(ids.size, bool)
    twice[1:] = same
    twice[:-1] |= same
    at = np.flatnonzero(twice)
    if not at.size:
        return at, np.zeros(0, np.int64), np.zeros(0, np.float64)
    sid, where = sid[at], key[at] & ((1 << bits) - 1)
    new = np.ones(at.size, bool)
    new[1:] = sid[1:] != sid[:-1]
    run = np.cumsum(new) - 1
    owner = np.searchsorted(np.cumsum(sizes), where, side="right")
    held = np.bincount(run)[run]
    mass = np.bincount(run, weights=weights[owner])[run]
    order = np.argsort(where)
    return where[order], held[order], mass[order]


def _shared_counts_by_bucket(
    ids: np.ndarray, sizes: np.ndarray, weights: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`shared_counts` for ids wider than 32 bits: hashed into 65,536 buckets, only
    those sharing a bucket sorted to be counted exactly."""
    bucket = ids & (_BUCKETS - 1)
    maybe = np.flatnonzero(np.bincount(bucket, minlength=_BUCKETS)[bucket] > 1)
    if not maybe.size:
        return maybe, np.zeros(0, np.int64), np.zeros(0, np.float64)
    owner = np.searchsorted(np.cumsum(sizes), maybe, side="right")
    each = weights[owner]
    unique, inverse, runs = np.unique(ids[maybe], return_inverse=True, return_counts=True)
    held = runs[inverse]
    mass = np.bincount(inverse, weights=each, minlength=unique.size)[inverse]
    shared = held > 1
    return maybe[shared], held[shared], mass[shared]
