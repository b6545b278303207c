"""The identifiers query through the esqlog-terms engine plugin: ``esqlog_terms`` groups.

Why: a ``span_or`` reads positions and cannot skip documents, and its score carries the
engine's idf, which differs from shard to shard; so the span query needs one request per
shard (or a dfs phase) with boosts from each shard's statistics. The plugin
(plugins/esqlog-terms, installed by scripts/engines/build-plugin.sh) registers
``{"esqlog_terms": {"field", "terms", "boost", "idf": false}}``: a Lucene ``SynonymQuery``
(one ``TermQuery`` for one term), the same ONE BM25 saturation of the terms' summed tf as
the span with the field's own length norm, over postings with impacts (no positions,
dynamic pruning), and with ``"idf": false`` no idf at all: the engine scores
``boost * saturation`` (plugin 1.4.0: Lucene's own TermQuery/SynonymQuery through a BM25
whose idf is a constant, postings read lazily, impacts exposed). The boost is then the
word's weight itself, and one plain query (no dfs, no fan-out) scores every shard exactly,
whatever its statistics. Only clusters that accept plugins have it: calibrate records
whether every data node runs it, and IdentifierSettings(engine_query="auto"), the default,
sends this query there and span queries elsewhere (esqlog.calibration.plugin).

Elasticsearch's BM25 multiplies its weight by (1 + k1); the plugin keeps that factor, so
the scores equal the span query's on either engine.

A group's terms are sent in the engine's dictionary order (bytes order, which is code point
order for the ASCII terms this mode sends): the engine looks them up faster so than in the
plan's order (most frequent first), 0.2 ms of 2.8 on a 3-shard index of 153K Go functions
at 300 terms (docs/benchmarks/identifiers.md). Scores do not depend on the order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

#: the plugin's query name, as both engines register it (and name it when they refuse it)
QUERY_NAME = "esqlog_terms"


def clause(field: str, terms: Sequence[str], boost: float) -> dict[str, Any]:
    """The plugin query of one group: ``boost`` times the saturation of the summed tf, its
    terms in dictionary order."""
    return {QUERY_NAME: {"field": field, "terms": sorted(terms), "boost": boost, "idf": False}}
