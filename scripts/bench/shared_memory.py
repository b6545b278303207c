"""One copy of a calibration's statistics per machine: private memory of 1 and of N processes.

    python -m scripts.bench.shared_memory CALIBRATION.json [--processes 8] [--upgrade DIR]

Each process loads what ``wrap(mode="identifiers")`` loads of the calibration (the record,
its vocabulary snapshot and its identifier statistics), asks both a few hundred words (so
that lookups touch their pages as queries do), reports its load time and its memory from
/proc/self/smaps_rollup (private: Private_Clean + Private_Dirty; shared: Shared_Clean +
Shared_Dirty), and waits until every process has loaded, so that all of them map the files
at once. Printed: per process, load seconds, private and shared MiB, and private MiB added
by the load (after the interpreter and numpy); then the ratio of the N processes' summed
private memory to one process's, in total and for the load alone.

``--upgrade DIR``: copy the calibration into DIR and rewrite its identifier statistics in
the current format first (what ``esqlog calibrate`` would write; the source is not touched).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
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


def _worker(path: str, loaded: Any, done: Any, out: Any) -> None:
    import numpy as np  # noqa: F401  (the interpreter's baseline includes numpy)

    from esqlog.calibration.files import load_calibration
    from esqlog.identifiers.files import load_for_calibration
    from esqlog.statistics.vocabulary import load_vocabulary

    before = _private(_rollup())
    start = time.perf_counter()
    cal = load_calibration(path)
    vocab = load_vocabulary(cal.vocabulary_path(), cal.vocabulary_sha256)  # type: ignore[arg-type]
    stats = load_for_calibration(cal.vocabulary_path(), cal.vocabulary_sha256)
    seconds = time.perf_counter() - start
    step = max(1, len(stats.words) // 300)
    words = [stats.words[k] for k in range(0, len(stats.words), step)]
    assert all(stats.word_id.get(w) is not None for w in words)
    vocab.df_of(words)
    stats.compounds_of(words[0])
    loaded.wait()  # every process holds the files now
    r = _rollup()
    out.put((seconds, _private(r), _shared(r), _private(r) - before))
    done.wait()


def _run(path: str, n: int) -> list[tuple[float, float, float, float]]:
    ctx = mp.get_context("spawn")
    loaded, done = ctx.Barrier(n + 1, timeout=300), ctx.Barrier(n + 1, timeout=300)
    out = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(path, loaded, done, out)) for _ in range(n)]
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
    args = parser.parse_args()
    path = _upgrade(args.calibration, args.upgrade) if args.upgrade else args.calibration
    files = sorted(path.parent.glob(f"{path.stem}.*.npz"))
    print(f"calibration {path} ({sum(f.stat().st_size for f in files) / 2**20:.1f} MiB "
          "of statistics)")
    results = {}
    for n in (1, args.processes):
        rows = _run(str(path), n)
        results[n] = rows
        print(f"{n} process(es):  load s  private MiB  shared MiB  private by load MiB")
        for seconds, private, shared, added in rows:
            print(f"  {seconds:14.3f}  {private:11.1f}  {shared:10.1f}  {added:19.1f}")
    one, many = results[1][0], results[args.processes]
    print(f"summed private ({args.processes}) / private (1): "
          f"{sum(r[1] for r in many) / one[1]:.2f} in total, "
          f"{sum(r[3] for r in many) / max(one[3], 1e-9):.2f} of the load; "
          f"load s: 1 process {one[0]:.3f}, slowest of {args.processes} "
          f"{max(r[0] for r in many):.3f}")


if __name__ == "__main__":
    main()
