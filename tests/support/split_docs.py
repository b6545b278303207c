"""Six small documents on three shards and their split statistics, no engine: shared by
the unit tests of the identifiers query (no test module imports another)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from esqlog.identifiers.scan import SplitCollector
from esqlog.identifiers.split_stats import IdentifierStats, build_identifier_stats
from esqlog.statistics.analysis import standard_terms

DOCS = [  # (shard, text)
    (0, "func readFile(name string) error { return os.ReadFile(name) }"),
    (0, "read the whole file into memory"),
    (1, "func writeFile(path string) error { return nil }"),
    (1, "ReadFile reads a file; read_all reads everything"),
    (2, "func handleWebSocketUpgrade(w http.ResponseWriter) { upgrade socket }"),
    (2, "socket read deadline: readDeadline and SetReadDeadline"),
]


def collect(docs: list[tuple[int, str]] = DOCS) -> SplitCollector:
    collector = SplitCollector("body")
    for shard, text in docs:
        counts = Counter(standard_terms(text))
        collector(
            shard, {"_source": {"body": text}}, {t: {"term_freq": n} for t, n in counts.items()}
        )
    return collector


def build(shards: int = 3, docs: list[tuple[int, str]] = DOCS) -> IdentifierStats:
    collector = collect(docs)
    df = Counter(t for _, text in docs for t in set(standard_terms(text) or []))
    return build_identifier_stats(
        collector,
        dict(df),
        index="i",
        index_uuid="u",
        field="body",
        shards=shards,
        doc_count=len(docs),
        created_at="now",
        predictor="esqlog-linear",
    )


def build_per_shard(docs: list[tuple[int, str]] = DOCS, index_uuid: str = "u") -> IdentifierStats:
    """As the vocabulary scan feeds the collector: each shard's own df and document count,
    so the statistics hold the per-shard part (terms on two or more shards)."""
    shard_df = Counter((s, t) for s, text in docs for t in set(standard_terms(text) or []))
    collector = SplitCollector("body")
    for shard, text in docs:
        counts = Counter(standard_terms(text))
        collector(
            shard,
            {"_source": {"body": text}},
            {t: {"term_freq": n, "doc_freq": shard_df[shard, t]} for t, n in counts.items()},
        )
    for shard in range(3):
        collector.field_statistics(shard, sum(s == shard for s, _ in docs))
    df = Counter(t for _, text in docs for t in set(standard_terms(text) or []))
    return build_identifier_stats(
        collector,
        dict(df),
        index="i",
        index_uuid=index_uuid,
        field="body",
        shards=3,
        doc_count=len(docs),
        created_at="now",
        predictor="esqlog-linear",
    )


def df_lookup(stats: IdentifierStats) -> Any:
    df = Counter(t for _, text in DOCS for t in set(standard_terms(text) or []))
    return lambda terms: {t: df.get(t, 0) for t in terms}
