"""The drop-in client wrapper: two lines of change in an existing application.

    client = esqlog.wrap(client, "calibration.json")        # or a Calibration, or several
    resp = client.search(index="code", query={"match": {"body": "read file"}})

``search`` keeps the client's own signature and response type; every other attribute is the
client's own. The wrapper analyzes each calibrated match/multi_match with the index's own
analyzer and fetches global term statistics in one extra request, then sends either a
rewritten query (``boost`` or ``script`` mode) or the original one followed by a rerank of
the top-N (``rerank``). Exceptions are the client's own types, so an application's error
handling keeps working. Thread-safe; the async wrapper never blocks the event loop.

Where a change goes:

* ``options``: what ``wrap()`` accepts, validated once;
* ``resolve`` and ``lru``: index or alias name -> concrete index, UUID, shard routings, in
  a bounded cache that expires;
* ``snapshots``: vocabulary snapshots, and when to stop trusting one;
* ``query_terms`` and ``shard_stats``: terms and global df of a query's texts (snapshot,
  cache or one request), and the per-shard counts boost weighs by;
* ``scripting``: script mode's stored-script probe and its auto/forced fallback;
* ``core``: the parts above wired together, plus the rewrites;
* ``search``: one search as an I/O-free plan (esqlog.rerank for the rerank strategies);
* ``bodies``: which queries of a body are rewritten (query, retrievers; knn never);
* ``boost_fan_out``: boost on several shards as one request with per-shard weights;
* ``identifier_plan``, ``identifier_search``, ``identifier_msearch`` and ``fan_out``: the
  identifiers mode's queries, one request or one per shard, and its msearch;
  ``identifier_clauses``: what one match becomes there (planned on the nodes or here);
* ``pits``: which index a point-in-time search reads;
* ``multi``: ``msearch``, each body rewritten as ``search`` would;
* ``decisions``: what each search chose and why (``on_decision``);
* ``client``: the sync and async wrappers that drive that plan, and ``wrap``;
* ``calibrate``: ``esqlog.calibrate``, the CLI's ``calibrate`` on the application's client
  (here, beside ``wrap``, because it takes the same client and may run the identifiers scan).
"""

from __future__ import annotations

from esqlog.wrapper.client import AsyncQlogClient, QlogClient, wrap
from esqlog.wrapper.core import WrapperCore
from esqlog.wrapper.decisions import SearchDecision
from esqlog.wrapper.options import (
    QUERY_MODES,
    RERANK_PLACES,
    SEARCH_MODES,
    STATS_SOURCES,
    RerankWhere,
    SearchMode,
    StatsSource,
    WrapOptions,
)
from esqlog.wrapper.scripting import ScriptingUnavailable

__all__ = [
    "QUERY_MODES",
    "RERANK_PLACES",
    "SEARCH_MODES",
    "STATS_SOURCES",
    "AsyncQlogClient",
    "QlogClient",
    "RerankWhere",
    "ScriptingUnavailable",
    "SearchDecision",
    "SearchMode",
    "StatsSource",
    "WrapOptions",
    "WrapperCore",
    "wrap",
]
