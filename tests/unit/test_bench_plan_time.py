"""scripts/bench/plan_time.py's recorded answers: what the wrapper would get from the engine.

Why: the script times the wrapper's client-side work with the engine's answers replayed. A
per-shard msearch answered with the whole index's answer reads, to the wrapper, as an index
that moved (esqlog.wrapper.fan_out.index_moved): it resolved the index again and searched
per shard a second time, and the 3-shard spans rows timed that.
"""

from __future__ import annotations

from typing import Any

from esqlog.wrapper.fan_out import index_moved
from scripts.bench.plan_time import recorded_answer, shard_answer

#: a 3-shard index's answer to a search, as the engine gives it
WHOLE: dict[str, Any] = {
    "took": 2,
    "timed_out": False,
    "_shards": {"total": 3, "successful": 3, "skipped": 0, "failed": 0},
    "hits": {"total": {"value": 2, "relation": "eq"}, "max_score": 1.5, "hits": []},
}


def _msearch(shards: int) -> dict[str, Any]:
    """An msearch's arguments as the fan-out sends them: a header and a body per shard."""
    body: list[dict[str, Any]] = []
    for k in range(shards):
        body += [{"index": "code", "preference": f"_shards:{k}"}, {"query": {"match_all": {}}}]
    return {"body": body}


def test_a_search_gets_the_whole_index_answer() -> None:
    assert recorded_answer(WHOLE, shard_answer(WHOLE), "search", {"body": {}}) is WHOLE


def test_a_per_shard_msearch_gets_one_shard_answer_per_search() -> None:
    answered = recorded_answer(WHOLE, shard_answer(WHOLE), "msearch", _msearch(3))
    responses = answered["responses"]
    assert len(responses) == 3
    assert not index_moved(responses, False)
    assert responses[0]["hits"] == WHOLE["hits"]


def test_the_whole_index_answer_per_shard_reads_as_a_moved_index() -> None:
    """Why the script answers per shard: this is what it answered before."""
    assert index_moved([WHOLE] * 3, False)
