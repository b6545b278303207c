"""The short human report of a calibration (``esqlog calibrate`` and ``esqlog demo``)."""

from __future__ import annotations

from esqlog.calibration.calibrate import CalibrationTimings
from esqlog.calibration.record import Calibration


def format_report(record: Calibration, timings: CalibrationTimings | None = None) -> str:
    """The short human report of a calibration."""
    interval = (
        "exact"
        if record.h_tok_method == "exact"
        else f"95% CI {record.h_tok_low:.4f}-{record.h_tok_high:.4f}"
    )
    lines = [
        f"engine       {record.engine} {record.engine_version}",
        f"index        {record.index} ({record.shards} shard{'s' * (record.shards != 1)}, "
        f"uuid {record.index_uuid})",
        f"field        {record.field} (analyzer {record.analyzer})",
        f"documents    N = {record.doc_count:,} with the field ({record.live_docs:,} live)",
        (
            f"vocabulary   {record.vocabulary_terms:,} terms in live documents (snapshot "
            f"{record.vocabulary})"
            if record.vocabulary
            else "vocabulary   not counted (pass --vocabulary to snapshot every term's df)"
        ),
        f"avgdl        {record.avgdl:.1f} tokens ({record.sum_ttf:,} tokens in all)",
        f"h_tok        {record.h_tok:.4f} ({interval})",
        f"q            {record.q:.3f}  [{record.predictor} v{record.predictor_version}]",
        f"regime       {record.regime}",
    ]
    if timings is not None and timings.total:
        lines.append(f"took         {timings.total:.1f} s")
    return "\n".join(lines)
