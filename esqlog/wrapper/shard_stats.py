"""Each shard's own statistics for boost mode's one request per shard (pure, no I/O).

Why a module of its own: the wrapper's core loads these at wrap() time, and the search
flow that uses them (esqlog.wrapper.boost_fan_out) needs the core; keeping the data and
its arithmetic here keeps the two apart. See esqlog.wrapper.boost_fan_out for why a boost
divided by the shard's idf gives the global q-log weight without dfs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from esqlog.calibration.record import Calibration
from esqlog.errors import UsageError
from esqlog.identifiers.files import load_for_calibration
from esqlog.identifiers.split_stats import IdentifierStats
from esqlog.statistics.terms import TextStats
from esqlog.statistics.vocabulary import Vocabulary
from esqlog.wrapper.query_terms import TextKey

#: (field, term) -> global idf / the shard's idf, one mapping per shard
Scales = list[dict[tuple[str, str], float]]


def load_shard_statistics(calibrations: Sequence[Calibration],
                          snapshots: Mapping[tuple[str, str], Vocabulary]
                          ) -> dict[tuple[str, str], IdentifierStats]:
    """(index, field) -> the statistics with each shard's own numbers, for the calibrations
    that recorded them (``calibrate --vocabulary --identifiers`` on several shards).

    A calibration without them is simply served the dfs way: no error, since boost mode
    needs nothing beyond a calibration."""
    out: dict[tuple[str, str], IdentifierStats] = {}
    for cal in calibrations:
        if (cal.index, cal.field) not in snapshots:
            continue
        try:
            stats = load_for_calibration(cal.vocabulary_path(), cal.vocabulary_sha256)
        except UsageError:
            continue
        if (stats.index_uuid, stats.field) == (cal.index_uuid, cal.field) and stats.per_shard:
            out[(cal.index, cal.field)] = stats
    return out


def _idf(n: int, big_n: int) -> float:
    """The engine's BM25 idf (Lucene's form, the one a boost is multiplied by)."""
    return math.log1p((big_n - n + 0.5) / (n + 0.5))


def shard_scales(stats: Mapping[TextKey, TextStats],
                 shard_stats: Mapping[str, IdentifierStats], shards: int) -> Scales | None:
    """Per shard, each scored term's global idf over that shard's idf (None when a field
    lacks per-shard statistics for ``shards`` shards). Join candidates are terms too."""
    scales: Scales = [{} for _ in range(shards)]
    for (field, _), text in stats.items():
        local = shard_stats.get(field)
        if local is None or local.shards != shards:
            return None
        docs = [int(d) for d in local.shard_docs.tolist()]
        big_n = text.field.doc_count
        for term, n in (*text.df.items(), *text.extra_df.items()):
            native = _idf(int(n), big_n)
            row = local.local_row.get(term)
            per = (local.local_df[row].tolist() if row is not None
                   else [min(int(n), d) for d in docs])
            for k in range(shards):
                scales[k][(field, term)] = native / _idf(int(per[k]), docs[k])
    return scales
