"""One copy of a calibration's statistics per machine: private memory of 1 and of N processes.

    python -m scripts.bench.shared_memory CALIBRATION.json [--processes 8] [--upgrade DIR] [--wrap]

Each process loads what ``wrap(mode="identifiers")`` loads of the calibration (the record,
its vocabulary snapshot and its identifier statistics), asks both a few hundred words (so
that lookups touch their pages as queries do), reports its load time and its memory from
/proc/self/smaps_rollup (private: Private_Clean + Private_Dirty; shared: Shared_Clean +
Shared_Dirty; RSS; PSS, each shared page divided among the processes that map it), and waits
until every process has loaded, so that all of them map the files at once. Printed: per
process, load seconds, private, shared, RSS and PSS MiB, private MiB added by the load
(after the interpreter and numpy) and the load's CPU seconds (its own work, threads
included, whatever else the machine runs); then two ratios of the N processes to one:

* summed private (N) / private (1), in total and for the load alone;
* summed PSS (N) / RSS (1): what the N processes hold on the machine together (the shared
  file pages counted once) against the whole memory one process holds (its mapped statistics
  included). This is the reading of "N processes cost no more than one" that counts
  everything.

``--wrap``: each process builds the wrapper of the identifiers mode instead (what
``esqlog.wrap(client, CALIBRATION, mode="identifiers")`` builds, without a node: nothing is
asked of the cluster until the first search), so the figures include all a wrapping process
loads (boost's per-shard numbers among them).

``--upgrade DIR``: copy the calibration into DIR and rewrite its identifier statistics in
the current format first (what ``esqlog calibrate`` would write; the source is not touched).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import shutil
import time
from pathlib import Path
from typing import Any


def _rollup() -> dict[str, int]:
    """smaps_rollup fields, in KiB."""
    out: dict[str, int] = {}
    with open("/proc/self/smaps_rollup") as handle:
        for line in handle:
            parts = line.split()
            if len(parts) >= 2 and parts[0].endswith(":") and parts[1].isdigit():
                out[parts[0][:-1]] = int(parts[1])
    return out


def _private(r: dict[str, int]) -> float:
    return (r["Private_Clean"] + r["Private_Dirty"]) / 1024


def _shared(r: dict[str, int]) -> float:
    return (r["Shared_Clean"] + r["Shared_Dirty"]) / 1024


def _mib(r: dict[str, int], key: str) -> float:
    return r.get(key, 0) / 1024


#: load seconds, private, shared, private added by the load, RSS, PSS (MiB), load CPU seconds
Row = tuple[float, float, float, float, float, float, float]


def _load(path: str, wrapper: bool) -> tuple[Any, Any]:
    """The snapshot and identifier statistics, as the loaders read them or as a wrapper
    built for the identifiers mode holds them (with everything else it loads)."""
    from esqlog.calibration.files import load_calibration
    from esqlog.identifiers.files import load_for_calibration
    from esqlog.statistics.vocabulary import load_vocabulary

    cal = load_calibration(path)
    if wrapper:
        from esqlog.wrapper import WrapOptions, WrapperCore

        core = WrapperCore([cal], WrapOptions(mode="identifiers"), "opensearch")
        assert core.identifiers is not None
        key = (cal.index, cal.field)
        return core.snapshots.in_use[key], core.identifiers.stats[key]
    vocab = load_vocabulary(cal.vocabulary_path(), cal.vocabulary_sha256)  # type: ignore[arg-type]
    return vocab, load_for_calibration(cal.vocabulary_path(), cal.vocabulary_sha256)


def _worker(path: str, wrapper: bool, loaded: Any, done: Any, out: Any) -> None:
    import numpy as np  # noqa: F401  (the interpreter's baseline includes numpy)

    import esqlog.wrapper  # noqa: F401  (so is the library's code: only the load is timed)

    before = _private(_rollup())
    start, cpu = time.perf_counter(), time.process_time()
    vocab, stats = _load(path, wrapper)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    step = max(1, len(stats.words) // 300)
    words = [stats.words[k] for k in range(0, len(stats.words), step)]
    assert all(stats.word_id.get(w) is not None for w in words)
    vocab.df_of(words)
    stats.compounds_of(words[0])
    loaded.wait()  # every process holds the files now
    r = _rollup()
    out.put(
        (
            seconds,
            _private(r),
            _shared(r),
            _private(r) - before,
            _mib(r, "Rss"),
            _mib(r, "Pss"),
            cpu,
        )
    )
    done.wait()


def _run(path: str, n: int, wrapper: bool) -> list[Row]:
    ctx = mp.get_context("spawn")
    loaded, done = ctx.Barrier(n + 1, timeout=300), ctx.Barrier(n + 1, timeout=300)
    out = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(path, wrapper, loaded, done, out)) for _ in range(n)]
    for p in procs:
        p.start()
    loaded.wait()
    rows = [out.get() for _ in procs]
    done.wait()
    for p in procs:
        p.join()
    return rows


def _upgrade(path: Path, folder: Path) -> Path:
    from esqlog.identifiers.files import (
        identifiers_path_for,
        load_identifier_stats,
        save_identifier_stats,
    )

    record = json.loads(path.read_text())
    folder.mkdir(parents=True, exist_ok=True)
    vocab = path.parent / record["vocabulary"]
    digest = record["vocabulary_sha256"]
    idents = identifiers_path_for(path.parent / path.stem, digest)
    for source in (path, vocab):
        shutil.copyfile(source, folder / source.name)
    stats = load_identifier_stats(idents, digest)
    save_identifier_stats(stats, folder / idents.name, digest)
    return folder / path.name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("calibration", type=Path)
    parser.add_argument("--processes", type=int, default=8)
    parser.add_argument("--upgrade", type=Path, default=None)
    parser.add_argument(
        "--wrap",
        action="store_true",
        help="load through WrapperCore(mode='identifiers'), all it holds",
    )
    args = parser.parse_args()
    path = _upgrade(args.calibration, args.upgrade) if args.upgrade else args.calibration
    files = sorted(path.parent.glob(f"{path.stem}.*.npz"))
    print(
        f"calibration {path} ({sum(f.stat().st_size for f in files) / 2**20:.1f} MiB of statistics)"
    )
    results = {}
    for n in (1, args.processes):
        rows = _run(str(path), n, args.wrap)
        results[n] = rows
        print(
            f"{n} process(es):  load s  private MiB  shared MiB  private by load MiB"
            "  RSS MiB  PSS MiB  load CPU s"
        )
        for seconds, private, shared, added, rss, pss, cpu in rows:
            print(
                f"  {seconds:14.3f}  {private:11.1f}  {shared:10.1f}  {added:19.1f}"
                f"  {rss:7.1f}  {pss:7.1f}  {cpu:10.3f}"
            )
    one, many = results[1][0], results[args.processes]
    print(
        f"summed private ({args.processes}) / private (1): "
        f"{sum(r[1] for r in many) / one[1]:.2f} in total, "
        f"{sum(r[3] for r in many) / max(one[3], 1e-9):.2f} of the load; "
        f"load s: 1 process {one[0]:.3f}, slowest of {args.processes} "
        f"{max(r[0] for r in many):.3f}; load average {os.getloadavg()[0]:.1f} on "
        f"{os.cpu_count()} CPUs"
    )
    print(
        f"summed PSS ({args.processes}) / RSS (1): {sum(r[5] for r in many) / one[4]:.2f} "
        f"({sum(r[5] for r in many):.1f} / {one[4]:.1f} MiB)"
    )


if __name__ == "__main__":
    main()
