"""Calibrate's scan, sequential vs parallel, and the snapshot's cost, at several index sizes.

    python -m scripts.bench.cluster_scale \
        --url http://127.0.0.1:19370,http://127.0.0.1:19371,http://127.0.0.1:19372 \
        --sizes 10000,100000,0 --parallel 1,3,6

For each size (0 = every document of the corpora) it fills an index of real functions
(go, java, python, ruby from /work/data/corpora, taken in turn so every size mixes the four;
6 shards, 1 replica; reused when it already holds that many documents), then runs
``calibrate --vocabulary`` once per --parallel value and prints, side by side: wall time,
documents per second, the ratio to the sequential run, and where the CPU went (this
process, all threads, vs the engines' JVMs, from _nodes/stats). Every run's snapshot must be
identical (checked). Then the snapshot: terms, bytes on disk, load time and the memory a
fresh process needs to hold it (RSS growth measured in a child process).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from opensearchpy import OpenSearch

from esqlog.calibration.calibrate import calibrate_with_vocabulary
from esqlog.calibration.files import save_with_vocabulary
from esqlog.engine.client import Engine
from esqlog.engine.paths import api_path, index_path
from esqlog.engine.scratch import create_scratch, scratch_state
from esqlog.engine.steps import Request
from esqlog.evaluation.corpus import read_jsonl
from scripts.bench.harness import add_url

CORPORA = Path("/work/data/corpora")
LOAD_CHILD = """
import sys, time
from esqlog.statistics.vocabulary import load_vocabulary
def rss():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
before = rss()
t = time.perf_counter()
v = load_vocabulary(sys.argv[1])
took = time.perf_counter() - t
v.df_of(["read", "file"])
after = rss()
arrays = v.hashes.nbytes + v.df.nbytes + (v.bloom.nbytes if v.bloom is not None else 0)
print(took, (after - before) / 1024, arrays / 2**20)
"""


def mixed_docs(corpora: list[str]) -> Iterator[dict[str, Any]]:
    """The corpora's documents taken in turn (one of each, then the next of each, ...)."""
    readers = [read_jsonl(CORPORA / c / "docs.jsonl") for c in corpora]
    while readers:
        for reader in list(readers):
            record = next(reader, None)
            if record is None:
                readers.remove(reader)
            elif str(record.get("text", "")).strip():
                yield {"id": f"{record['id']}", "body": record["text"]}


def ensure_index(
    engine: Engine, size: int, corpora: list[str], shards: int, replicas: int
) -> tuple[str, int]:
    name = f"esqlog-bench-scale-{size or 'all'}"
    if scratch_state(engine, name):  # esqlog's own from an earlier run: reuse when complete
        count = int(engine.perform(Request("GET", index_path(name, "_count")))["count"])
        if (size and count == size) or (not size and count > 0):
            return name, count
    create_scratch(
        engine,
        name,
        "bench",
        {"number_of_shards": shards, "number_of_replicas": replicas, "refresh_interval": "-1"},
        {"body": {"type": "text"}},
        replace=True,
    )
    started, count, lines = time.perf_counter(), 0, []
    for doc in mixed_docs(corpora):
        lines += [
            json.dumps({"index": {"_index": name, "_id": f"{count}-{doc['id']}"}}),
            json.dumps({"body": doc["body"]}),
        ]
        count += 1
        if len(lines) >= 4000:
            _bulk(engine, lines)
            lines = []
        if size and count >= size:
            break
    if lines:
        _bulk(engine, lines)
    engine.perform(Request("PUT", index_path(name, "_settings"), body={"refresh_interval": "1s"}))
    engine.perform(Request("POST", index_path(name, "_refresh")))
    engine.perform(
        Request("GET", api_path("_cluster", "health", name), {"wait_for_status": "green"})
    )
    print(
        f"[index] {name}: {count} documents in {time.perf_counter() - started:.0f} s",
        file=sys.stderr,
    )
    return name, count


def _bulk(engine: Engine, lines: list[str]) -> None:
    result = engine.perform(Request("POST", "/_bulk", body="\n".join(lines) + "\n"))
    if result.get("errors"):
        raise SystemExit(f"bulk indexing failed: {json.dumps(result)[:300]}")


def engines_cpu_seconds(engine: Engine) -> float:
    stats = engine.perform(Request("GET", "/_nodes/stats/process"))
    return sum(n["process"]["cpu"]["total_in_millis"] for n in stats["nodes"].values()) / 1e3


def own_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def scan_runs(
    engine: Engine, index: str, parallels: list[int]
) -> tuple[list[dict[str, Any]], Any, Any]:
    runs, first = [], None
    record = vocab = None
    for parallel in parallels:
        cpu, engine_cpu, started = (
            own_cpu_seconds(),
            engines_cpu_seconds(engine),
            time.perf_counter(),
        )
        record, vocab = calibrate_with_vocabulary(engine, index, "body", parallel=parallel)
        wall = time.perf_counter() - started
        runs.append(
            {
                "parallel": parallel,
                "seconds": wall,
                "docs_per_s": record.live_docs / wall,
                "client_cpu_s": own_cpu_seconds() - cpu,
                "engines_cpu_s": engines_cpu_seconds(engine) - engine_cpu,
            }
        )
        if first is None:
            first = vocab
        elif not (
            np.array_equal(first.hashes, vocab.hashes) and np.array_equal(first.df, vocab.df)
        ):
            raise SystemExit(f"parallel={parallel} gave another snapshot than parallel=1")
    for run in runs:
        run["ratio"] = runs[0]["seconds"] / run["seconds"]
    return runs, record, vocab


def snapshot_costs(record: Any, vocab: Any) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        saved = save_with_vocabulary(record, vocab, Path(tmp) / "body.json")
        path = saved.vocabulary_path()
        size = path.stat().st_size
        out = subprocess.run(
            [sys.executable, "-c", LOAD_CHILD, str(path)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split()
    return {
        "terms": len(vocab),
        "bytes": size,
        "bytes_per_term": size / max(len(vocab), 1),
        "load_s": float(out[0]),
        "rss_mb": float(out[1]),
        "arrays_mb": float(out[2]),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_url(parser, required=True, help="comma-separated node URLs")
    parser.add_argument("--sizes", default="10000,100000,0")
    parser.add_argument("--parallel", default="1,3,6")
    parser.add_argument("--corpora", default="go,java,python,ruby")
    parser.add_argument("--shards", type=int, default=6)
    parser.add_argument("--replicas", type=int, default=1)
    parser.add_argument("--json", type=Path, help="also write every figure here")
    args = parser.parse_args()
    engine = Engine(OpenSearch(hosts=args.url.split(","), timeout=600))
    nodes = engine.perform(Request("GET", "/_cluster/health"))["number_of_nodes"]
    parallels = [int(p) for p in args.parallel.split(",")]
    results = []
    for size in (int(s) for s in args.sizes.split(",")):
        index, docs = ensure_index(
            engine, size, args.corpora.split(","), args.shards, args.replicas
        )
        runs, record, vocab = scan_runs(engine, index, parallels)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # sizes ascend
        results.append(
            {
                "docs": docs,
                "index": index,
                "nodes": nodes,
                "shards": args.shards,
                "runs": runs,
                "peak_rss_mb": peak,
                "snapshot": snapshot_costs(record, vocab),
            }
        )
    print(
        f"\ncalibrate --vocabulary on {nodes} nodes, {args.shards} shards x "
        f"{1 + args.replicas} copies (client CPU: this process, all threads)"
    )
    print(
        f"{'docs':>8} {'parallel':>8} {'seconds':>8} {'docs/s':>7} {'ratio':>6} "
        f"{'client CPU s':>12} {'engines CPU s':>13}"
    )
    for res in results:
        for run in res["runs"]:
            print(
                f"{res['docs']:>8} {run['parallel']:>8} {run['seconds']:>8.1f} "
                f"{run['docs_per_s']:>7.0f} {run['ratio']:>5.2f}x {run['client_cpu_s']:>12.1f} "
                f"{run['engines_cpu_s']:>13.1f}"
            )
    print("\nsnapshot (calibrate --vocabulary's .npz); calibrate's peak RSS: this process")
    print(
        f"{'docs':>8} {'terms':>9} {'MB on disk':>10} {'B/term':>6} {'load s':>7} "
        f"{'RSS MB':>7} {'arrays MB':>9} {'calibrate peak RSS MB':>21}"
    )
    for res in results:
        s = res["snapshot"]
        print(
            f"{res['docs']:>8} {s['terms']:>9} {s['bytes'] / 2**20:>10.2f} "
            f"{s['bytes_per_term']:>6.1f} {s['load_s']:>7.3f} {s['rss_mb']:>7.1f} "
            f"{s['arrays_mb']:>9.2f} {res['peak_rss_mb']:>21.0f}"
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
