"""Terms and global statistics of a query's calibrated match texts, as cheaply as possible.

Three sources, cheapest first: a vocabulary snapshot (no request), the bounded TTL cache of
term df (no request when every term is cached), and one batched ``_mtermvectors`` round trip
that also analyzes the texts with the index's own analyzer. Cached df is keyed by the
index UUID, so an index deleted and recreated under the same name starts afresh.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from esqlog.engine.steps import Plan
from esqlog.scoring.joins import join_candidates, proposed_candidates
from esqlog.scoring.matchspec import collect_query_texts, with_default_fields
from esqlog.scoring.rewrite import FieldCalibration
from esqlog.statistics.analysis import standard_terms
from esqlog.statistics.stats_cache import StatsCache
from esqlog.statistics.terms import (
    FieldStats,
    TextStats,
    term_stats_plan,
    texts_stats_plan,
)
from esqlog.wrapper.resolve import IndexTarget
from esqlog.wrapper.snapshots import SnapshotGuard

TextKey = tuple[str, str]  # (field, text)


class StatisticsResolver:
    """Finds :class:`TextStats` for every calibrated (field, text) of a query."""

    def __init__(self, snapshots: SnapshotGuard, cache: StatsCache | None, joins: bool) -> None:
        self.snapshots = snapshots
        self.cache = cache
        self.joins = joins

    def resolve_plan(
        self, target: IndexTarget, query: object, fields: Mapping[str, FieldCalibration]
    ) -> Plan[dict[TextKey, TextStats]]:
        """Terms and global statistics of every calibrated match text in the query.

        Texts are analyzed with each field's search analyzer: fields searched with the
        built-in ``standard`` analyzer and ASCII text are analyzed here
        (esqlog.statistics.analysis), and
        terms whose df is cached need no request at all; anything else goes to the engine in
        one batched ``_mtermvectors`` round trip. Fields whose search analysis a flat term
        list cannot reproduce are left out: their clauses stay native.
        """
        query = with_default_fields(query, target.default_fields)
        texts = [key for key in collect_query_texts(query, fields) if target.analysis.exact(key[0])]
        local = {
            key: standard_terms(key[1]) if target.analysis.standard(key[0]) else None
            for key in texts
        }
        cached = self.cache is not None or all(
            self.snapshots.snapshot_for(target.index, f) is not None for f, _ in texts
        )
        if texts and cached and all(v is not None for v in local.values()):
            return (yield from self._cached_plan(target, local))
        extra = {key: proposed_candidates(key[1]) for key in texts} if self.joins else None
        stats = yield from texts_stats_plan(
            target.index, texts, target.routings, target.analysis.per_field(), extra_terms=extra
        )
        if self.cache is not None:
            now = time.monotonic()
            for (field_name, _), found in stats.items():
                self.cache.store(
                    target.uuid, field_name, found.field, {**found.df, **found.extra_df}, now
                )
        return stats

    def _cached_plan(
        self, target: IndexTarget, local: Mapping[TextKey, list[str] | None]
    ) -> Plan[dict[TextKey, TextStats]]:
        now = time.monotonic()
        wanted: dict[str, list[str]] = {}
        candidates: dict[TextKey, list[str]] = {}
        for key, terms in local.items():
            candidates[key] = join_candidates(terms or []) if self.joins else []
            wanted.setdefault(key[0], []).extend([*(terms or []), *candidates[key]])
        per_field: dict[str, tuple[FieldStats, dict[str, int]]] = {}
        for field_name, words in wanted.items():
            vocab = self.snapshots.snapshot_for(target.index, field_name)
            if vocab is not None:  # no round trip at all
                per_field[field_name] = (
                    FieldStats(vocab.doc_count, vocab.sum_ttf, 0),
                    vocab.df_of(words),
                )
                continue
            assert self.cache is not None
            fstats, df, missing = self.cache.lookup(target.uuid, field_name, words, now)
            if missing or fstats is None:
                fstats, fetched = yield from term_stats_plan(
                    target.index, field_name, missing, target.routings
                )
                self.cache.store(target.uuid, field_name, fstats, fetched, now)
                df.update(fetched)
            per_field[field_name] = (fstats, df)
        out: dict[TextKey, TextStats] = {}
        for key, terms in local.items():
            fstats, df = per_field[key[0]]
            words = terms or []
            out[key] = TextStats(
                tuple(words),
                tuple(range(len(words))),
                {t: df.get(t, 0) for t in words},
                fstats,
                {c: df.get(c, 0) for c in candidates[key]},
            )
        return out
