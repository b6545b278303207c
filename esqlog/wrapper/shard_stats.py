"""Each shard's own statistics for boost mode on several shards without dfs (no I/O
beyond loading them).

Why a module of its own: the wrapper's core loads these at wrap() time, and the search
flows that use them (esqlog.wrapper.boost_fan_out, esqlog.wrapper.search) need the core;
keeping the data and its arithmetic here keeps the two apart. See
esqlog.wrapper.boost_fan_out for why a boost divided by the shard's idf gives the global
q-log weight without dfs.

One request for every shard (:func:`weighted_scale`, boost mode's default on several
shards): each shard multiplies a boost by its own idf_k(t), and one boost cannot be divided
by three idfs. It is divided by their mean weighted by each shard's df of the term, the
idf the term's matching documents see on average. Exact for a term on one shard (the ~ln(k)
by which a shard's idf of a rare term falls short of the index's is the error the plain
``dfs=False`` search keeps) and for a term spread evenly; measured within 0.002 NDCG@10 of
the dfs search on four sets (docs/benchmarks/latency.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from esqlog.calibration.record import Calibration
from esqlog.errors import UsageError
from esqlog.identifiers.files import shard_counts_for_calibration
from esqlog.identifiers.shard_counts import ShardCounts
from esqlog.identifiers.split_stats import IdentifierStats
from esqlog.statistics.terms import TextStats
from esqlog.statistics.vocabulary import Vocabulary
from esqlog.wrapper.query_terms import TextKey

#: (field, term) -> global idf / the shard's idf, one mapping per shard
Scales = list[dict[tuple[str, str], float]]


def load_shard_statistics(
    calibrations: Sequence[Calibration],
    snapshots: Mapping[tuple[str, str], Vocabulary],
    loaded: Mapping[tuple[str, str], IdentifierStats] | None = None,
) -> dict[tuple[str, str], ShardCounts]:
    """(index, field) -> the statistics with each shard's own numbers, for the calibrations
    that recorded them (``calibrate --vocabulary --identifiers`` on several shards).

    A calibration without them is simply served the dfs way: no error, since boost mode
    needs nothing beyond a calibration. ``loaded``: identifier statistics the wrapper
    already read (the identifiers mode), whose per-shard part is taken as it is: reading
    the file again would hash all of it a second time (about half a second at a million
    documents) and hold a second table of its shard-spanning terms in every process."""
    out: dict[tuple[str, str], ShardCounts] = {}
    for cal in calibrations:
        if (cal.index, cal.field) not in snapshots:
            continue
        held = (loaded or {}).get((cal.index, cal.field))
        try:
            stats = (
                shard_counts_of(held)
                if held is not None
                else (shard_counts_for_calibration(cal.vocabulary_path(), cal.vocabulary_sha256))
            )
        except UsageError:
            continue
        if (stats.index_uuid, stats.field) == (cal.index_uuid, cal.field) and stats.per_shard:
            out[(cal.index, cal.field)] = stats
    return out


def shard_counts_of(stats: IdentifierStats) -> ShardCounts:
    """The per-shard part of loaded identifier statistics, sharing their arrays and table."""
    return ShardCounts(
        stats.index_uuid,
        stats.field,
        stats.shards,
        stats.shard_docs,
        stats.local_df,
        stats.local_row,
    )


def _idf(n: int, big_n: int) -> float:
    """The engine's BM25 idf (Lucene's form, the one a boost is multiplied by)."""
    return math.log1p((big_n - n + 0.5) / (n + 0.5))


def shard_scales(
    stats: Mapping[TextKey, TextStats], shard_stats: Mapping[str, ShardCounts], shards: int
) -> Scales | None:
    """Per shard, each scored term's global idf over that shard's idf (None when a field
    lacks per-shard statistics for ``shards`` shards). Join candidates are terms too."""
    terms = _scored_terms(stats, shard_stats, shards)
    if terms is None:
        return None
    scales: Scales = [{} for _ in range(shards)]
    for field, term, n, local, docs, big_n in terms:
        native = _idf(n, big_n)
        row = local.local_row.get(term)
        per = local.local_df[row].tolist() if row is not None else [min(n, d) for d in docs]
        for k in range(shards):
            scales[k][(field, term)] = native / _idf(int(per[k]), docs[k])
    return scales


def weighted_scale(
    stats: Mapping[TextKey, TextStats], shard_stats: Mapping[str, ShardCounts], shards: int
) -> dict[tuple[str, str], float] | None:
    """Each scored term's global idf over its shards' idfs averaged by df (see the module
    docstring), for one request to every shard; None when a field lacks per-shard
    statistics for ``shards`` shards. Built on every search: one lookup a term held by
    several shards (ShardCounts.weighted_idf)."""
    terms = _scored_terms(stats, shard_stats, shards)
    if terms is None:
        return None
    scale: dict[tuple[str, str], float] = {}
    for field, term, n, local, docs, big_n in terms:
        if n <= 0:
            continue  # matches nothing: its boost is never used
        row = local.local_row.get(term)
        # on one shard, with the global df; which one is not recorded: their mean
        seen = (
            sum(_idf(min(n, d), d) for d in docs) / shards
            if row is None
            else local.weighted_idf(row)
        )
        scale[(field, term)] = _idf(n, big_n) / seen if seen > 0 else 1.0
    return scale


def _scored_terms(
    stats: Mapping[TextKey, TextStats], shard_stats: Mapping[str, ShardCounts], shards: int
) -> list[tuple[str, str, int, ShardCounts, list[int], int]] | None:
    """(field, term, global df, the field's per-shard statistics, each shard's documents,
    N) of every scored term, join candidates included; None when a field lacks per-shard
    statistics for ``shards`` shards."""
    out = []
    for (field, _), text in stats.items():
        local = shard_stats.get(field)
        if local is None or local.shards != shards:
            return None
        docs = [int(d) for d in local.shard_docs.tolist()]
        for term, n in (*text.df.items(), *text.extra_df.items()):
            out.append((field, term, int(n), local, docs, text.field.doc_count))
    return out
