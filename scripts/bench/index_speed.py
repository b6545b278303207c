"""esqlog index on a real repository: files/s, chunks, index size, total time.

    python -m scripts.bench.index_speed --url http://127.0.0.1:19200 \
        [--path /usr/share/go-1.19/src] [--index esqlog-bench-index-go] [--modify 70]

Copies PATH to a temp folder (default: the Go 1.19 source tree Debian ships in
golang-1.19-src, ~8,200 files), then times four runs of ``esqlog index`` (the same code
path, in-process): the first full run into a new index, a second run with nothing
changed, a run after ``--modify`` files got a line appended, and the walk + chunking alone
without any engine (how much of the time is esqlog's own CPU). The bench index is deleted
first only if ``esqlog index`` created it (its marker), and at the end. The machine is
shared: the 1-minute load average before and after each run is printed with the figures,
and so are the CPU seconds of esqlog (this process) and of the engine node (its JVM), which
do not depend on how many other processes wait for the cores.
The seed's figure for comparison: 7,536 files indexed in 27 s (SQLite FTS5, 164 MB).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from esqlog.cli.index_cmd import run_index
from esqlog.engine.client import Engine
from esqlog.engine.steps import Request
from esqlog.indexing.chunk import ChunkLimits, chunk_text
from esqlog.indexing.languages import language_of
from esqlog.indexing.target import delete_indexed
from esqlog.indexing.walk import WalkOptions, WalkReport, list_files, read_files
from scripts.bench.harness import add_url, engine_at


def load() -> float:
    return os.getloadavg()[0]


def cpu_seconds() -> float:
    """This process's CPU time, all threads (user + system)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def engine_cpu_seconds(engine: Engine) -> float:
    """The node's JVM process CPU time (the engine's share of the work, whatever the load)."""
    stats = engine.perform(Request("GET", "/_nodes/_local/stats/process"))
    (node,) = stats["nodes"].values()
    return float(node["process"]["cpu"]["total_in_millis"]) / 1000


def timed_run(engine: Engine, root: Path, index: str, label: str) -> dict[str, Any]:
    before, cpu, engine_cpu = load(), cpu_seconds(), engine_cpu_seconds(engine)
    summary = run_index(
        engine,
        root,
        index,
        WalkOptions(),
        ChunkLimits(),
        adopt=False,
        shards=1,
        replicas=0,
        show_progress=False,
    )
    summary.update(
        label=label,
        load_before=before,
        load_after=load(),
        esqlog_cpu=cpu_seconds() - cpu,
        engine_cpu=engine_cpu_seconds(engine) - engine_cpu,
    )
    print(
        f"{label:<22} {summary['seconds']:7.1f} s  {summary['files_per_second']:8,.0f} "
        f"files/s  files {summary['files']:,} (indexed {summary['files_indexed']:,}, "
        f"unchanged {summary['files_unchanged']:,})  chunks written "
        f"{summary['chunks_indexed']:,}  docs {summary['documents']:,}  "
        f"store {summary['store_bytes'] / 1e6:,.1f} MB  CPU esqlog "
        f"{summary['esqlog_cpu']:.1f} s, engine {summary['engine_cpu']:.1f} s  "
        f"load {before:.1f} -> {summary['load_after']:.1f}",
        flush=True,
    )
    return summary


def chunk_only(root: Path) -> dict[str, Any]:
    """Walk, read and cut every file with no engine: esqlog's own CPU per file."""
    before, cpu = load(), cpu_seconds()
    started = time.perf_counter()
    report = WalkReport()
    options = WalkOptions()
    chunks = 0
    for source in read_files(list_files(root, options, report), options, report):
        chunks += len(chunk_text(source.text, language_of(source.path)))
    took, used = time.perf_counter() - started, cpu_seconds() - cpu
    print(
        f"{'walk + chunk only':<22} {took:7.1f} s  {report.files / took:8,.0f} files/s  "
        f"files {report.files:,} ({report.bytes / 1e6:,.1f} MB)  chunks {chunks:,}  "
        f"CPU {used:.1f} s  skipped {dict(report.skipped)}  "
        f"load {before:.1f} -> {load():.1f}",
        flush=True,
    )
    return {
        "label": "walk + chunk only",
        "seconds": took,
        "files": report.files,
        "chunks": chunks,
        "bytes": report.bytes,
        "skipped": dict(report.skipped),
        "esqlog_cpu": used,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_url(parser, required=True)
    parser.add_argument("--path", default="/usr/share/go-1.19/src")
    parser.add_argument("--index", default="esqlog-bench-index-go")
    parser.add_argument("--modify", type=int, default=70, help="files changed before run 3")
    parser.add_argument("--json", help="also write every run's summary here")
    args = parser.parse_args()
    engine = engine_at(args.url, timeout=120)
    print(f"engine {engine.label}, {os.cpu_count()} cores; source {args.path}", flush=True)
    with tempfile.TemporaryDirectory(prefix="esqlog-index-bench-") as tmp:
        root = Path(tmp) / "repo"
        shutil.copytree(args.path, root, symlinks=True)
        delete_indexed(engine, args.index)
        runs = [timed_run(engine, root, args.index, "first run (new index)")]
        runs.append(timed_run(engine, root, args.index, "second run (no change)"))
        changed = [p for p in sorted(root.rglob("*.go"))][:: max(1, 5000 // args.modify)]
        for path in changed[: args.modify]:
            with path.open("a", encoding="utf-8") as handle:
                handle.write("\n// touched by the benchmark\n")
        runs.append(timed_run(engine, root, args.index, f"{args.modify} files changed"))
        runs.append(chunk_only(root))
        delete_indexed(engine, args.index)
    print("seed (SQLite FTS5, 7,536 files): 27 s")
    if args.json:
        Path(args.json).write_text(json.dumps(runs, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
