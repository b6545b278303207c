"""esqlog mcp's re-index of changed files: the run ``esqlog index FOLDER --index INDEX``
makes (in-process, incremental: only files whose text changed are written), with the
calibration kept fresh as ``--calibrate`` keeps it when the server's calibration is the one
``esqlog index --calibrate`` wrote for this index; then the search ranks with it.

Lives in the CLI because the run is the CLI's (esqlog.cli.index_cmd.run_index); the
agent's side only knows "re-index this folder" (esqlog.agent.freshness).
"""

from __future__ import annotations

from pathlib import Path

from esqlog.agent.code_search import CodeSearch
from esqlog.engine.client import Engine
from esqlog.engine.connection import ConnectionSettings


def kept_fresh(calibration_file: Path) -> bool:
    """Whether the calibration is one ``esqlog index --calibrate`` wrote: the triple, with
    the index's count of write operations it was saved at (esqlog.indexing.keep_fresh)."""
    from esqlog.calibration.files import load_calibration
    from esqlog.errors import UsageError

    try:
        record = load_calibration(calibration_file)
    except UsageError:
        return False
    return (
        record.index_operations is not None
        and record.vocabulary is not None
        and record.identifiers_applies is not None
    )


class Reindex:
    """The callable esqlog.agent.freshness.Freshness runs when the folder changed."""

    def __init__(
        self,
        engine: Engine,
        connection: ConnectionSettings,
        index: str,
        search: CodeSearch,
        calibration_file: Path | None,
    ) -> None:
        """``calibration_file``: refreshed after each run that changed the index (None: the
        calibration is not esqlog index's, and is left as it is)."""
        self.engine, self.connection, self.index = engine, connection, index
        self.search, self.calibration_file = search, calibration_file

    def __call__(self, folder: Path) -> int:
        """Re-index ``folder`` into the index; the files re-indexed or removed."""
        from esqlog.calibration.files import load_calibration
        from esqlog.cli.index_cmd import run_index
        from esqlog.indexing.chunk import ChunkLimits
        from esqlog.indexing.keep_fresh import Calibrated
        from esqlog.indexing.walk import WalkOptions

        calibrated = (
            Calibrated(str(self.calibration_file), self.connection)
            if self.calibration_file is not None
            else None
        )
        summary = run_index(
            self.engine,
            folder,
            self.index,
            WalkOptions(),
            ChunkLimits(),
            adopt=False,
            shards=1,
            replicas=None,
            show_progress=False,
            calibrated=calibrated,
        )
        changed = bool(summary["chunks_indexed"] or summary["chunks_deleted"])
        if not changed:
            return 0
        calibration = self.search.calibration
        if calibrated is not None and self.calibration_file is not None:
            calibrated.finish(self.engine, summary["index"], changed, None)
            calibration = load_calibration(self.calibration_file)
        self.search.reload(calibration)  # and the wrapper's cached statistics with it
        return int(summary["files_indexed"]) + int(summary["files_deleted"])
