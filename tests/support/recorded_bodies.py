"""Identifiers query bodies of the bundled Go sample, as digests recorded from an earlier
build: what tests/unit/test_identifier_bodies.py holds the query builder to, so that work on
its speed changes no body.

The statistics are built without an engine (tests.support.split_docs.build: the standard
analyzer's terms and their splits) from the first 1,000 functions of the bundled sample
(esqlog/data), on one shard and on three (function k on shard k % 3); the texts are the
sample's first 200 queries. Each variant is a setting the wrapper sends: the esqlog-terms
plugin's groups (the default where calibrate found the plugin), spans on one shard, the
shard-set spans of one query over three shards, and a budget small enough to bind (the
shared compounds' tiers and the boundary ties of the clause budget).

Record again (only when a body is meant to change) with
``python -m tests.support.recorded_bodies > tests/data/identifier_bodies.json``.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path
from typing import Any

from esqlog.identifiers.query import plan_identifier_query
from esqlog.identifiers.settings import IdentifierSettings
from esqlog.identifiers.split_stats import IdentifierStats
from tests.support.split_docs import build

DATA = Path(__file__).resolve().parents[2] / "esqlog" / "data"
RECORDED = Path(__file__).resolve().parents[1] / "data" / "identifier_bodies.json"
DOCS, QUERIES = 1000, 200

#: name -> (shards, settings)
VARIANTS: dict[str, tuple[int, IdentifierSettings]] = {
    "plugin": (1, IdentifierSettings(engine_query="plugin")),
    "plugin-3-shards": (3, IdentifierSettings(engine_query="plugin")),
    "span": (1, IdentifierSettings(engine_query="span")),
    "span-3-shards": (3, IdentifierSettings(engine_query="span", fan_out=False)),
    "plugin-budget-40": (1, IdentifierSettings(engine_query="plugin", budget=40)),
    "span-budget-40-words": (1, IdentifierSettings(engine_query="span", budget=40, select="words")),
}


def sample() -> tuple[list[str], list[str]]:
    """(document texts, query texts) of the bundled sample."""
    with gzip.open(DATA / "sample_go_docs.jsonl.gz", "rt", encoding="utf-8") as handle:
        docs = [json.loads(line)["text"] for _, line in zip(range(DOCS), handle, strict=False)]
    lines = (DATA / "sample_go_queries.jsonl").read_text(encoding="utf-8").splitlines()
    return docs, [json.loads(line)["text"] for line in lines[:QUERIES]]


def statistics(docs: list[str], shards: int) -> tuple[IdentifierStats, Any]:
    """The split statistics and the engine df lookup of ``docs`` on ``shards`` shards."""
    from collections import Counter

    from esqlog.statistics.analysis import standard_terms

    placed = [(k % shards, text) for k, text in enumerate(docs)]
    stats = build(shards, placed)
    df = Counter(t for _, text in placed for t in set(standard_terms(text) or []))
    return stats, lambda terms: {t: df.get(t, 0) for t in terms}


#: significant digits a body's numbers keep in its digest: numpy's log and sums differ in
#: their last bits between CPUs (AVX-512's vectorized log against AVX2's), which moves a
#: span's boost (a weight over the engine's idf sum) by ~1e-16 and nothing else
DIGITS = 10


def rounded(value: Any) -> Any:
    """``value`` with every float at DIGITS significant digits."""
    if isinstance(value, float):
        return float(f"{value:.{DIGITS}g}")
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [rounded(v) for v in value]
    return value


def digests() -> dict[str, list[str]]:
    """Per variant, a digest of each query's body (its JSON with sorted keys, its numbers
    rounded: :data:`DIGITS`)."""
    docs, texts = sample()
    built = {shards: statistics(docs, shards) for shards in {s for s, _ in VARIANTS.values()}}
    out: dict[str, list[str]] = {}
    for name, (shards, settings) in VARIANTS.items():
        stats, df = built[shards]
        out[name] = [
            hashlib.sha256(
                json.dumps(
                    rounded(
                        plan_identifier_query(text, stats, df, settings).query("body", settings)
                    ),
                    sort_keys=True,
                ).encode()
            ).hexdigest()[:16]
            for text in texts
        ]
    return out


if __name__ == "__main__":
    print(json.dumps(digests(), indent=0))
