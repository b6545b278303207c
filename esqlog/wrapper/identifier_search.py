"""The ``identifiers`` mode in the wrapper: match clauses become esqlog.identifiers.query queries.

Why a module of its own: this mode changes the match set on purpose (a query word also
matches inside identifiers, as after an identifier-splitting reindex), so it does not go
through the statistics and rewrite path of the modes that keep the native match set. Its
statistics are all on disk: the vocabulary snapshot (df of the query's own words) and the
split statistics written beside it by ``esqlog calibrate --vocabulary --identifiers``
(NAME.idents.<sha16>.npz, bound to the snapshot by its checksum). So a search costs no
statistics request at all, and the split statistics are trusted exactly as long as their
snapshot is (esqlog.wrapper.snapshots): when the index drifts from it, searches fall back
to boost mode with live statistics until the index is calibrated again.

What is replaced: a ``match`` clause in scoring position (esqlog.scoring.matchspec.walk) on a
field calibrated with identifiers, indexed and searched with the built-in ``standard``
analyzer, with ASCII text. Its ``operator`` and ``minimum_should_match`` carry over (see
esqlog.identifiers.query for their meaning), ``boost`` and ``_name`` stay on the new clause.
Everything else (multi_match, other fields, graph or custom search analyzers, non-ASCII
text, filters) is sent as written.

One query, one match set: on an index whose split statistics hold each shard's own
(``fan_out``, the default), every search of a match text lists the same terms, chosen by
one plan laid out as on one shard (FAN_OUT_BUDGET, lowered the same way to fit the
engine's clause limit): sent per shard (esqlog.wrapper.fan_out) or as the one dfs query of
esqlog.identifiers.shards.one_query, which holds those terms regrouped. So a sort, a
cursor or any option that keeps a search from going per shard changes neither
``hits.total`` nor which documents match, only (for the one dfs query) the length norm's
average. With ``fan_out=False`` every search is the one dfs query of the shard-set layout.

A text's plan (the terms chosen, ~1 ms of the client's time on 150K functions) is kept for
the 256 most recent texts of a wrapper (PLANS): the next page of a search, a retry or an
agent's next offset builds its body from it (see :func:`_plan`).

Statistics of another index are never used: when the index a name resolves to has
another UUID than the one calibrated (deleted and recreated, an alias moved), the search
goes on in boost mode (one warning saying so) until the index is calibrated again.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from esqlog.calibration.record import Calibration
from esqlog.errors import UsageError
from esqlog.identifiers.files import load_for_calibration
from esqlog.identifiers.settings import IdentifierSettings
from esqlog.identifiers.split_stats import IdentifierStats
from esqlog.scoring.clauses import count_clauses
from esqlog.scoring.matchspec import MatchSpec, parse_match, walk
from esqlog.statistics.analysis import standard_cuts, standard_terms
from esqlog.statistics.vocabulary import Vocabulary
from esqlog.wrapper.identifier_clauses import build_clauses
from esqlog.wrapper.lru import LRU
from esqlog.wrapper.resolve import IndexTarget
from esqlog.wrapper.snapshots import SnapshotGuard

FIX = "run esqlog calibrate --vocabulary --identifiers --out FILE, then wrap that calibration"
#: plans kept per wrapper, by match text: a plan of 300 terms holds ~10 KB besides the
#: terms themselves (the statistics' own strings), so at most a few MB
PLANS = 256


def load_identifier_statistics(
    calibrations: Sequence[Calibration],
    snapshots: Mapping[tuple[str, str], Vocabulary],
) -> dict[tuple[str, str], IdentifierStats]:
    """(index, field) -> split statistics, for every calibration; one clear error otherwise.

    At wrap() time, so an application misconfigured for the mode fails at start-up.
    """
    out: dict[tuple[str, str], IdentifierStats] = {}
    for cal in calibrations:
        where = f"{cal.index}/{cal.field}"
        if (cal.index, cal.field) not in snapshots:
            raise UsageError(
                f"mode 'identifiers' needs a vocabulary snapshot with identifier "
                f"statistics, and the calibration of {where} has none",
                FIX,
            )
        try:
            stats = load_for_calibration(cal.vocabulary_path(), cal.vocabulary_sha256)
        except UsageError as exc:
            raise UsageError(
                f"mode 'identifiers': the calibration of {where} has no usable "
                f"identifier statistics ({exc.problem})",
                FIX,
            ) from None
        if (stats.index_uuid, stats.field) != (cal.index_uuid, cal.field):
            raise UsageError(
                f"the identifier statistics of {where} belong to another index or field", FIX
            )
        out[(cal.index, cal.field)] = stats
    return out


#: :meth:`IdentifierRewriter.rewrite`'s answer when a snapshot in use went stale
STALE = "stale"


@dataclass
class IdentifierRewriter:
    """Builds the identifiers query of a search from the on-disk statistics (no I/O)."""

    stats: Mapping[tuple[str, str], IdentifierStats]
    settings: IdentifierSettings
    #: (index, field) -> the word-lists index the nodes plan its queries from (node_plan)
    lists: Mapping[tuple[str, str], str] = field(default_factory=dict)
    _warned: set[str] | None = None
    #: the plans of recent match texts (see PLANS)
    _plans: LRU = field(default_factory=lambda: LRU(PLANS))

    def rewrite(
        self, target: IndexTarget, query: Any, snapshots: SnapshotGuard, max_clauses: int
    ) -> dict[str, Any] | str | None:
        """The query with its eligible match clauses replaced; None when none is (send it
        untouched); STALE when a snapshot they need no longer matches the index."""
        found = self._rewrite(target, query, snapshots, max_clauses, False)
        return found if not isinstance(found, list) else found[0]

    def rewrite_per_shard(
        self, target: IndexTarget, query: Any, snapshots: SnapshotGuard, max_clauses: int
    ) -> list[dict[str, Any]] | str | None:
        """One query per shard of ``target`` (esqlog.identifiers.shards), each with its
        eligible match clauses replaced; None when none is, or when the statistics of one
        lack the shards' own (send the one query instead); STALE as :meth:`rewrite`."""
        return self._rewrite(target, query, snapshots, max_clauses, True)

    def rewrite_matching(
        self, target: IndexTarget, query: Any, snapshots: SnapshotGuard, max_clauses: int
    ) -> dict[str, Any] | str | None:
        """As :meth:`rewrite`, each identifiers clause a constant-score filter of the same
        match set (esqlog.identifiers.shards.matching_query): what aggregations that read
        no score need, without spans or a dfs phase."""
        found = self._rewrite(target, query, snapshots, max_clauses, False, True)
        return found if not isinstance(found, list) else found[0]

    def _rewrite(
        self,
        target: IndexTarget,
        query: Any,
        snapshots: SnapshotGuard,
        max_clauses: int,
        fan_out: bool,
        matching: bool = False,
    ) -> list[dict[str, Any]] | str | None:
        eligible: list[tuple[MatchSpec, IdentifierStats, Vocabulary]] = []
        picked: set[int] = set()  # the eligible clauses (by identity): the second walk's
        stale = False

        def collect(kind: str, inner: Mapping[str, Any]) -> dict[str, Any] | None:
            nonlocal stale
            found = self._eligible(target, kind, inner)
            if found is None:
                return None
            vocab = snapshots.snapshot_for(target.index, found[0].field)
            if vocab is None:
                stale = True
                return None
            eligible.append((*found, vocab))
            picked.add(id(inner))
            return {"match_none": {}}  # a placeholder: counted as one clause below

        skeleton = walk(query, collect)
        moved = next((s for _, s, _ in eligible if s.index_uuid != target.uuid), None)
        if moved is not None:
            self._warn_once(*_moved_warning(target, moved))
            return STALE
        if stale:
            self._warn_once(*_stale_warning(target.index))
            return STALE
        if not eligible or (
            fan_out
            and not all(
                stats.per_shard and stats.shards == target.shards for _, stats, _ in eligible
            )
        ):
            return None
        # the engine's limit covers the whole query: what the rest of it counts is kept
        others = count_clauses(skeleton, _match_size) - len(eligible)
        share = (max_clauses - others) // len(eligible)
        built = [
            build_clauses(
                self.settings,
                spec,
                stats,
                vocab,
                share,
                fan_out,
                target.index,
                matching,
                self._warn_once,
                self._plans,
                self.lists.get((target.index, spec.field)) if self.settings.node_plan else None,
            )
            for spec, stats, vocab in eligible
        ]
        if all(b is None for b in built):
            return None
        out = []
        for shard in range(target.shards if fan_out else 1):
            clauses = iter([None if b is None else b[shard] for b in built])

            def substitute(
                kind: str, inner: Mapping[str, Any], clauses: Any = clauses
            ) -> dict[str, Any] | None:
                # the same clauses, in the same order, as the first walk found eligible
                return next(clauses) if id(inner) in picked else None

            out.append(dict(walk(query, substitute)))
        return out

    def _eligible(
        self, target: IndexTarget, kind: str, inner: Mapping[str, Any]
    ) -> tuple[MatchSpec, IdentifierStats] | None:
        if kind != "match":
            return None
        spec = parse_match(inner)
        if spec is None:
            return None
        stats = self.stats.get((target.index, spec.field))
        analysis = target.analysis.by_field.get(spec.field)
        # The query side splits text as the built-in standard analyzer cuts ASCII, and the
        # split statistics assume the index cut it the same way (one analyzer for both).
        if (
            stats is None
            or analysis is None
            or not (analysis.standard and analysis.flat)
            or (analysis.index_analyzer != analysis.analyzer)
            or not standard_cuts(spec.text)
        ):
            return None
        return spec, stats

    def warn_point_in_time(self) -> None:
        """Once per wrapped client: a PIT search keeps the native match set (boost).

        Why not the identifiers match set: a PIT search names no index and cannot be sent
        per shard, and the mode's promise (one query, one match set, whichever way it is
        sent) would then hold for some pages of a paginated result and not others. Said
        once, since hits.total and the hits differ from the same search without a PIT."""
        self._warn_once(
            "pit",
            (
                "esqlog: mode 'identifiers' does not apply to point-in-time searches: they keep "
                "the engine's native match set (ranked in boost mode); page with from/size or "
                "search_after without a PIT for the identifiers match set"
            ),
            stacklevel=5,
        )

    def _warn_once(self, key: str, message: str, stacklevel: int = 7) -> None:
        if self._warned is None:
            self._warned = set()
        if key not in self._warned:
            self._warned.add(key)
            warnings.warn(message, RuntimeWarning, stacklevel=stacklevel)


def _stale_warning(index: str) -> tuple[str, str]:
    return index, (
        f"esqlog: index {index!r} no longer matches the vocabulary snapshot its "
        "identifier statistics belong to; searching in boost mode until esqlog "
        "calibrate --vocabulary --identifiers runs again"
    )


def _moved_warning(target: IndexTarget, stats: IdentifierStats) -> tuple[str, str]:
    return f"uuid:{target.index}:{target.uuid}", (
        f"esqlog: index {target.index!r} is another index now (uuid {target.uuid}; the "
        f"identifier statistics are of uuid {stats.index_uuid}: deleted and recreated?); "
        "searching in boost mode until esqlog calibrate --vocabulary --identifiers "
        "runs again"
    )


def _match_size(field_name: str, text: str) -> int | None:
    terms = standard_terms(text)
    return None if terms is None else len(terms)
