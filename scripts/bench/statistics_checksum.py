"""The checksum an identifiers file is loaded with: one SHA-256 stream (format 4's
``array_digest``) against 16 MiB pieces hashed on 1, 2 and 4 threads (format 5's
``pieces_digest``), side by side in one run.

    python -m scripts.bench.statistics_checksum FILE.idents.<sha>.npz [--rounds 5]

The file's arrays are memory-mapped as a load maps them and read once before timing (the
page cache warm, as for a second worker process); the variants then run interleaved,
round after round, so that the load of other processes hits them alike. Printed: the
median seconds of each and its ratio to the single stream.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from esqlog.identifiers.files import _MEMBERS_OF, FORMAT, MAX_FILE_BYTES
from esqlog.statistics.npz import array_digest, pieces_digest, read_npz


def _arrays(path: Path) -> dict[str, tuple[str, tuple[int, ...], Any]]:
    members = {k: m for k, m in _MEMBERS_OF[FORMAT].items()}
    raw = read_npz(path, MAX_FILE_BYTES, "identifier statistics file", "", members, mapped=True)
    return {k: (r.dtype.str, r.shape, r.data) for k, r in raw.items() if k != "meta"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    arrays = _arrays(args.file)
    size = sum(memoryview(d).nbytes for _, _, d in arrays.values())
    variants: dict[str, Callable[[], str]] = {
        "one stream (format 4)": lambda: array_digest(arrays),
        "pieces, 1 thread": lambda: pieces_digest(arrays, threads=1),
        "pieces, 2 threads": lambda: pieces_digest(arrays, threads=2),
        "pieces, 4 threads": lambda: pieces_digest(arrays, threads=4),
    }
    array_digest(arrays)  # the pages in the cache first
    times: dict[str, list[float]] = {name: [] for name in variants}
    for r in range(args.rounds):
        names = list(variants)
        for name in names[r % len(names) :] + names[: r % len(names)]:  # rotating order
            start = time.perf_counter()
            variants[name]()
            times[name].append(time.perf_counter() - start)
    base = statistics.median(times["one stream (format 4)"])
    print(
        f"{args.file.name}: {size / 2**20:.1f} MiB of arrays, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f}, {args.rounds} rounds"
    )
    for name, values in times.items():
        median = statistics.median(values)
        print(
            f"  {name:24s} {median:7.3f} s  {size / 2**20 / median:7.0f} MiB/s  "
            f"x{median / base:.2f}"
        )


if __name__ == "__main__":
    main()
