"""``mode="auto"``, wrap()'s default: the identifiers mode on code, boost on prose.

Why: the identifiers mode is esqlog's best ranking on code (docs/identifiers.md) and needs
what only ``calibrate --vocabulary --identifiers`` (or ``esqlog index --calibrate``) writes;
boost needs nothing but the calibration. The rule that says which a field is lives in one
place, esqlog.identifiers.calibrate.auto_mode (``esqlog mcp`` uses it too): code where the
calibration holds the identifiers statistics and the code/prose rule found the field's code
documents full of identifiers that split (esqlog.identifiers.code_rule). Decided per index
at wrap() time, logged once per index on the ``esqlog`` logger (INFO), and each search's
decision (esqlog.wrapper.decisions) names the mode it was sent in.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from esqlog.calibration.record import Calibration
from esqlog.errors import UsageError
from esqlog.identifiers.calibrate import auto_mode
from esqlog.identifiers.split_stats import IdentifierStats
from esqlog.statistics.vocabulary import Vocabulary
from esqlog.wrapper.identifier_search import load_identifier_statistics

if TYPE_CHECKING:
    from esqlog.wrapper.engine_query import EngineQueryChoice

logger = logging.getLogger("esqlog")


class AutoModes:
    """index -> (identifiers | boost, why), and the statistics of the code indices."""

    def __init__(
        self, calibrations: Sequence[Calibration], snapshots: Mapping[tuple[str, str], Vocabulary]
    ) -> None:
        self.why: dict[str, tuple[str, str]] = {}
        self.statistics: dict[tuple[str, str], IdentifierStats] = {}
        by_index: dict[str, list[Calibration]] = {}
        for cal in calibrations:
            by_index.setdefault(cal.index, []).append(cal)
        for index, cals in by_index.items():
            if any((c.index, c.field) not in snapshots for c in cals):
                # stats="live" (or no snapshot recorded): the identifiers mode needs the
                # snapshot and its statistics, boost needs neither
                self.why[index] = (
                    "boost",
                    "no vocabulary snapshot is read (stats='live', or the calibration has none)",
                )
                continue
            decided = [auto_mode(c) for c in cals]
            prose = next(((m, w) for m, w in decided if m != "identifiers"), None)
            if prose is not None:  # one field of the index reads as prose: boost for all
                self.why[index] = prose
                continue
            try:
                self.statistics.update(load_identifier_statistics(cals, snapshots))
            except UsageError as exc:  # unreadable files: boost, which needs none of them
                self.why[index] = (
                    "boost",
                    f"its identifiers statistics cannot be used ({exc.problem})",
                )
                continue
            self.why[index] = decided[0]

    @property
    def code_indices(self) -> set[str]:
        return {i for i, (mode, _) in self.why.items() if mode == "identifiers"}

    def code(self, index: Any, calibrated: Mapping[str, object]) -> bool:
        """Whether a search of ``index`` goes the identifiers way: a code index by name,
        or a name that is no calibrated index (an alias: the identifiers flow resolves
        it, and hands an index it has no statistics for back to boost)."""
        if not isinstance(index, str) or not index or "," in index or "*" in index:
            return False
        decided = self.why.get(index)  # a calibrated index by name: what was decided for it
        if decided is not None:
            return decided[0] == "identifiers"
        return bool(self.code_indices) and index not in calibrated

    def log(self, engine_query: EngineQueryChoice | None) -> None:
        """One INFO line per index: the mode auto chose and why (and for identifiers,
        which engine query its groups are sent as)."""
        for index, (mode, why) in sorted(self.why.items()):
            groups = ""
            if mode == "identifiers" and engine_query is not None:
                groups = (
                    f"; groups as {'esqlog_terms' if engine_query.plugin else 'spans'}"
                    f" ({engine_query.why})"
                )
            logger.info("esqlog: index %s: mode auto chose %s: %s%s", index, mode, why, groups)
