"""One large esqlog_terms request leaves the node up (the esqlog-terms plugin's memory).

A ``bool.should`` of many two-term ``esqlog_terms`` groups without idf, on one segment of
200,000 documents where every term is in three quarters of them: the plugin once read each
group's postings into arrays (about 12 bytes per document per group, all groups before the
first document was scored), so a request of ~1.5x the node's heap in such arrays ended the
node with an OutOfMemoryError. The number of groups is sized from the node's own heap (the
test nodes run 1 GB: 625 groups) and capped by the engine's clause limit; the engine must
answer (200, or a 429 from a circuit breaker, never an exit), with the whole match set, and
still answer afterwards. scripts/bench/terms_memory.py runs the same by hand.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator

import pytest

from esqlog.engine.client import Engine
from esqlog.engine.failures import error_status
from tests.support.engines import call, create_index

DOCS = 200_000
WORDS = 64
PER_GROUP = 12  # bytes per document per group the old arrays took (doc, freq, dense int)


@pytest.fixture
def segment(engine: Engine) -> Iterator[str]:
    index = create_index(
        engine,
        shards=1,
        settings={"refresh_interval": -1},
        mappings={"properties": {"body": {"type": "text", "analyzer": "whitespace"}}},
    )
    try:
        rng = random.Random(7)
        words = [f"w{i}" for i in range(WORDS)]
        for _ in range(0, DOCS, 20_000):
            lines = []
            for _doc in range(20_000):
                lines.append('{"index":{}}')
                lines.append(json.dumps({"body": " ".join(rng.sample(words, 48))}))
            answer = call(engine, "POST", f"/{index}/_bulk", "\n".join(lines) + "\n")
            assert not answer["errors"]
        call(engine, "POST", f"/{index}/_refresh")
        call(engine, "POST", f"/{index}/_forcemerge", max_num_segments=1)
        yield index
    finally:
        call(engine, "DELETE", f"/{index}")


def _heap(engine: Engine) -> int:
    stats = call(engine, "GET", "/_nodes/_local/stats/jvm")
    return int(next(iter(stats["nodes"].values()))["jvm"]["mem"]["heap_max_in_bytes"])


def test_many_groups_on_a_large_segment_leave_the_node_up(engine: Engine, segment: str) -> None:
    groups = min(1000, int(1.5 * _heap(engine) / (PER_GROUP * DOCS)))
    rng = random.Random(1)
    should = [
        {
            "esqlog_terms": {
                "field": "body",
                "idf": False,
                "terms": [f"w{i}" for i in rng.sample(range(WORDS), 2)],
            }
        }
        for _ in range(groups)
    ]
    try:
        answer = call(
            engine,
            "POST",
            f"/{segment}/_search",
            {
                "query": {"bool": {"should": should}},
                "size": 3,
                "_source": False,
                "track_total_hits": True,
            },
        )
    except Exception as exc:  # a breaker's 429 or the clause limit's 400: refused, not dead
        assert error_status(exc) in (400, 429), exc
    else:
        assert answer["hits"]["total"]["value"] == DOCS
        assert answer["hits"]["hits"][0]["_score"] > 0
    assert call(engine, "GET", f"/{segment}/_count")["count"] == DOCS  # the node still answers
