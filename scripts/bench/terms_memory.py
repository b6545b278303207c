"""The esqlog_terms plugin under one very large request, and its latency beside a plain match.

    python -m scripts.bench.terms_memory URL load            # 200,000 docs, one segment
    python -m scripts.bench.terms_memory URL groups 500 10000 # one bool of N groups each
    python -m scripts.bench.terms_memory URL latency [ROUNDS] [rare] # match vs esqlog_terms

Why: one ``bool.should`` of many two-term ``esqlog_terms`` groups (``idf: false``) on a
200,000-document segment once read every group's postings into arrays before scoring, and
killed the node (OutOfMemoryError). This prints, per request size, the status the engine
answered (200, or a 429/400 that names its limit), the time, the node's heap after, and
whether the node is still up. Standard library only, so it runs against any node.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
import urllib.error
import urllib.request
from typing import Any

INDEX = "esqlog-terms-memory"
BASE = "/esqlog-terms-memory"  # a constant name: no path built from input
DOCS = 200_000
WORDS = 64
RARE = 50_000
TIMEOUT = float(os.environ.get("TERMS_MEMORY_TIMEOUT", "120"))


def call(
    url: str, method: str, path: str, body: Any = None, ndjson: str | None = None
) -> tuple[int, Any]:
    """One request: (status, parsed answer), or (0, reason) when the node is unreachable."""
    data = (
        ndjson.encode()
        if ndjson is not None
        else (json.dumps(body).encode() if body is not None else None)
    )
    kind = "application/x-ndjson" if ndjson is not None else "application/json"
    req = urllib.request.Request(
        url + path, data=data, method=method, headers={"Content-Type": kind}
    )
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT) as answer:
            return answer.status, json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"null")
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError) as err:
        return 0, str(err)


def load(url: str) -> None:
    """200,000 documents, each a random 48 of w0..w63 and two rare words of r0..r49999
    (about 8 documents each, as the compounds of an identifiers query), one segment."""
    call(url, "DELETE", BASE)
    status, answer = call(
        url,
        "PUT",
        BASE,
        {
            "settings": {"number_of_shards": 1, "number_of_replicas": 0, "refresh_interval": -1},
            "mappings": {"properties": {"body": {"type": "text", "analyzer": "whitespace"}}},
        },
    )
    assert status == 200, answer
    rng = random.Random(7)
    words = [f"w{i}" for i in range(WORDS)]
    for start in range(0, DOCS, 20_000):
        lines = []
        for _ in range(start, min(start + 20_000, DOCS)):
            lines.append('{"index":{}}')
            rare = [f"r{rng.randrange(RARE)}" for _ in range(2)]
            lines.append(json.dumps({"body": " ".join(rng.sample(words, 48) + rare)}))
        status, answer = call(url, "POST", BASE + "/_bulk", ndjson="\n".join(lines) + "\n")
        assert status == 200 and not answer["errors"], str(answer)[:300]
    call(url, "POST", BASE + "/_refresh")
    call(url, "POST", BASE + "/_forcemerge?max_num_segments=1")
    _, count = call(url, "GET", BASE + "/_count")
    print(f"loaded {count['count']} docs into {INDEX}")


def groups_query(n: int, seed: int = 1) -> dict[str, Any]:
    """A bool.should of n two-term groups without idf."""
    rng = random.Random(seed)
    should = []
    for _ in range(n):
        i, j = rng.sample(range(WORDS), 2)
        should.append(
            {"esqlog_terms": {"field": "body", "terms": [f"w{i}", f"w{j}"], "idf": False}}
        )
    return {"bool": {"should": should}}


def heap(url: str) -> str:
    status, stats = call(url, "GET", "/_nodes/stats/jvm,breaker")
    if status != 200:
        return "node down"
    node = next(iter(stats["nodes"].values()))
    used = node["jvm"]["mem"]["heap_used_in_bytes"] >> 20
    peak = node["jvm"]["mem"]["pools"]["old"]["peak_used_in_bytes"] >> 20
    return f"heap {used} MiB (old peak {peak} MiB)"


def groups(url: str, sizes: list[int]) -> None:
    for n in sizes:
        body = {"query": groups_query(n), "size": 10, "_source": False}
        began = time.perf_counter()
        status, answer = call(url, "POST", BASE + "/_search", body)
        took = time.perf_counter() - began
        what = f"{answer['hits']['total']['value']} hits" if status == 200 else str(answer)[:240]
        time.sleep(2)
        up, _ = call(url, "GET", "/")  # any answer, a 429 included, is a node still up
        print(
            f"{n:>6} groups: status {status} in {took:.2f}s, {what}; "
            f"{heap(url)}; node {'up' if up else 'DOWN'}"
        )
        if not up:
            return


def latency(url: str, rounds: int, rare_only: bool = False) -> None:
    """p50/p95 of a plain match against the same words as esqlog_terms groups, interleaved.

    As an identifiers query: 4 groups, each one common word (w), two rare ones (r, ~8
    documents) and three the index lacks; the match lists the same 12 present words.
    ``rare_only``: the groups without their common word (an identifier's compounds)."""
    rng = random.Random(3)
    times: dict[str, list[float]] = {"match": [], "esqlog_terms": []}
    for r in range(rounds):
        common = [f"w{i}" for i in rng.sample(range(WORDS), 4)]
        groups = [
            [
                w,
                f"r{rng.randrange(RARE)}",
                f"r{rng.randrange(RARE)}",
                *(f"z{rng.randrange(10**9)}" for _ in range(3)),
            ][rare_only:]
            for w in common
        ]
        match = {"match": {"body": " ".join(t for g in groups for t in g[: 3 - rare_only])}}
        grouped = {
            "bool": {
                "should": [
                    {"esqlog_terms": {"field": "body", "terms": g, "idf": False}} for g in groups
                ]
            }
        }
        order = [("match", match), ("esqlog_terms", grouped)]
        for name, query in order if r % 2 else order[::-1]:
            began = time.perf_counter()
            status, answer = call(
                url, "POST", BASE + "/_search", {"query": query, "size": 10, "_source": False}
            )
            assert status == 200, str(answer)[:300]
            times[name].append(time.perf_counter() - began)
    p = {k: (sorted(v)[len(v) // 2], sorted(v)[int(len(v) * 0.95)]) for k, v in times.items()}
    m, t = p["match"], p["esqlog_terms"]
    print(
        f"{rounds} rounds: match p50/p95 {m[0] * 1e3:.1f}/{m[1] * 1e3:.1f} ms, esqlog_terms "
        f"{t[0] * 1e3:.1f}/{t[1] * 1e3:.1f} ms: p50 {t[0] / m[0]:.2f}x, p95 {t[1] / m[1]:.2f}x"
    )


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], usage=__doc__.split("\n\n")[1]
    )
    parser.add_argument("url")
    parser.add_argument("action", choices=("load", "groups", "latency"))
    parser.add_argument("rest", nargs="*", help="groups: sizes; latency: ROUNDS [rare]")
    parsed = parser.parse_args(argv[1:])
    url, action = parsed.url.rstrip("/"), parsed.action
    argv = [argv[0], url, action, *parsed.rest]
    if action == "load":
        load(url)
    elif action == "groups":
        groups(url, [int(n) for n in argv[3:]] or [500])
    else:
        latency(url, int(argv[3]) if len(argv) > 3 else 50, argv[4:] == ["rare"])


if __name__ == "__main__":
    main(sys.argv)
