"""The identifiers statistics a SplitCollector's scan builds, for tests that compare two
scans of the same documents (the df the engine would report is counted from the texts)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from esqlog.identifiers.scan import SplitCollector
from esqlog.identifiers.split_stats import IdentifierStats, build_identifier_stats
from esqlog.statistics.analysis import standard_terms


def collected_stats(collector: SplitCollector, docs: Sequence[tuple[int, str]]) -> IdentifierStats:
    """Finish ``collector`` and build its statistics over ``docs`` ((shard, text) pairs)."""
    collector.finish()
    df = Counter(t for _, text in docs for t in set(standard_terms(text) or []))
    return build_identifier_stats(
        collector,
        dict(df),
        index="i",
        index_uuid="u",
        field="body",
        shards=3,
        doc_count=len(docs),
        created_at="now",
        predictor="esqlog-linear",
    )
