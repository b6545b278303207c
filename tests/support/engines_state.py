"""Shared by several test modules (from tests/test_safety.py):
no test module imports another."""

from __future__ import annotations

from typing import Any

from esqlog.engine.client import Engine
from tests.support.engines import call


def snapshot(engine: Engine, name: str) -> dict[str, Any]:
    """Documents, per-shard max _seq_no (any write bumps it) and mappings of an index."""
    stats = call(engine, "GET", f"/{name}/_stats", level="shards")["indices"][name]["shards"]
    seq = {
        shard: [copy["seq_no"]["max_seq_no"] for copy in copies] for shard, copies in stats.items()
    }
    return {
        "count": call(engine, "GET", f"/{name}/_count")["count"],
        "seq_no": seq,
        "mappings": call(engine, "GET", f"/{name}/_mapping")[name]["mappings"],
    }
