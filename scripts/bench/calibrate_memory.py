"""Time, peak memory and files of ``calibrate --vocabulary --identifiers``, old vs new.

    python -m scripts.bench.calibrate_memory --url http://127.0.0.1:19200 \
        --index esqlog-scale-100000 --old /tmp/esqlog-old --out docs/data/calibrate_memory.jsonl

Runs, on one index, each as a fresh ``python -m esqlog.cli calibrate`` process:
``--vocabulary`` alone (this tree), ``--vocabulary --identifiers`` with this tree's
default memory limit, with ``--memory-limit 4M`` (everything spilled, read back in small
chunks), and, with ``--old DIR`` (a checkout of an earlier commit, e.g.
``git worktree add /tmp/esqlog-old 11f4ff9``), the old implementation. Peak RSS is that of
the whole process tree (the calibrate process and its scan worker processes, summed),
sampled from /proc every 0.1 s; GNU time's figure would be the largest single process.
The written statistics are compared with the old ones and the default's, member by
member after loading the .npz files (their zip entries carry the time of writing, and
their metadata the calibration's ``created_at``: both are left out). One JSON line per
run to --out (appended), then a table with the ratios.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from scripts.bench.harness import add_out, add_url

PAGE = os.sysconf("SC_PAGE_SIZE")
VOLATILE = ("created_at", "sha256", "vocabulary_sha256")  # time of writing, and hashes of it


def tree_rss(root: int) -> int:
    """Resident bytes of ``root`` and all its descendants, now (Linux /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry))
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        with contextlib.suppress(OSError):  # a process that has just exited
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
        todo.extend(children.get(pid, []))
    return total


def run(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, int, str]:
    """(wall s, peak tree RSS bytes, stdout) of one command run in ``cwd``: ``python -m``
    puts its working directory first on the module path, ahead of PYTHONPATH, so a tree's
    own code runs only from that tree."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, text=True)
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, tree_rss(proc.pid))
            done.wait(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, _ = proc.communicate()
    seconds = time.perf_counter() - started
    done.set()
    sampler.join()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed with exit code {proc.returncode}")
    return seconds, peak, out


def members(path: Path) -> dict[str, Any]:
    """An .npz file's members, the metadata JSON without what records the time of writing."""
    with np.load(path) as data:
        out: dict[str, Any] = {k: data[k] for k in data.files}
    if "meta" in out:
        meta = json.loads(bytes(out.pop("meta")).decode("utf-8"))
        out["meta"] = {k: v for k, v in meta.items() if k not in VOLATILE}
    return out


def same_files(a: dict[str, Path], b: dict[str, Path]) -> bool:
    """Whether two runs wrote the same statistics (every member equal after loading)."""
    if a.keys() != b.keys():
        return False
    for kind in a:
        x, y = members(a[kind]), members(b[kind])
        if x.keys() != y.keys():
            return False
        for key in x:
            if key == "meta":
                if x[key] != y[key]:
                    return False
            elif x[key].dtype != y[key].dtype or not np.array_equal(x[key], y[key]):
                return False
    return True


def calibrate(
    label: str, tree: Path, args: argparse.Namespace, extra: list[str], work: Path
) -> dict[str, Any]:
    out_dir = work / label
    out_dir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(tree)}
    cmd = [
        sys.executable,
        "-m",
        "esqlog.cli",
        "calibrate",
        "--url",
        args.url,
        "--index",
        args.index,
        "--field",
        args.field,
        "--vocabulary",
        "--out",
        str(out_dir / "cal.json"),
        "--no-progress",
        *extra,
    ]
    seconds, peak, _ = run(cmd, env, tree)
    files = {p.name.split(".")[1]: p for p in out_dir.glob("cal.*.npz")}
    return {
        "label": label,
        "seconds": round(seconds, 1),
        "peak_rss_mib": round(peak / 2**20, 1),
        "files_mib": {k: round(p.stat().st_size / 2**20, 2) for k, p in files.items()},
        "_files": files,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_url(ap)
    ap.add_argument("--index", required=True)
    ap.add_argument("--field", default="body")
    ap.add_argument("--old", type=Path, default=None, help="checkout of the old implementation")
    ap.add_argument("--skip-old", action="store_true", help="the old one does not fit")
    ap.add_argument("--small-limit", default="4M")
    ap.add_argument("--skip-small", action="store_true", help="no run with --small-limit")
    ap.add_argument(
        "--concurrent",
        action="store_true",
        help="start the runs at once (each sees the others' load: a fair ratio "
        "when the sequential runs would not fit the time)",
    )
    add_out(ap, "results/calibrate_memory.jsonl")
    args = ap.parse_args()
    here = Path(__file__).resolve().parents[2]
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="esqlog-calmem-") as tmp:
        work = Path(tmp)
        plan: list[tuple[str, Path, list[str]]] = [
            ("vocabulary", here, []),
            ("new", here, ["--identifiers"]),
        ]
        if not args.skip_small:
            plan.append(("new-small", here, ["--identifiers", "--memory-limit", args.small_limit]))
        if args.old is not None and not args.skip_old:
            plan.append(("old", args.old, ["--identifiers"]))
        if args.concurrent:
            with ThreadPoolExecutor(len(plan)) as pool:
                runs = list(pool.map(lambda p: calibrate(p[0], p[1], args, p[2], work), plan))
        else:
            runs = [calibrate(label, tree, args, extra, work) for label, tree, extra in plan]
        by = {r["label"]: r for r in runs}
        new_files = by["new"]["_files"]
        for r in runs[2:]:
            r["same_as_new"] = same_files(r["_files"], new_files)
        vocab = by["vocabulary"]
        load = [round(x, 1) for x in os.getloadavg()]
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with args.out.open("a", encoding="utf-8") as fh:
            for r in runs:
                r.pop("_files")
                r["time_vs_vocabulary"] = round(r["seconds"] / vocab["seconds"], 3)
                r.update(
                    index=args.index,
                    load=load,
                    concurrent=args.concurrent,
                    date=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                )
                fh.write(json.dumps(r) + "\n")
                print(json.dumps(r), flush=True)
    if "old" in by:
        old, new = by["old"], by["new"]
        print(
            f"new/old: time {new['seconds'] / old['seconds']:.2f}x, peak RSS "
            f"{new['peak_rss_mib'] / old['peak_rss_mib']:.2f}x; files equal after loading: "
            f"{old['same_as_new']}"
        )
    print(
        f"new/vocabulary alone: time {by['new']['time_vs_vocabulary']:.2f}x; small limit "
        f"equal to default: {by['new-small']['same_as_new'] if 'new-small' in by else '-'}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
