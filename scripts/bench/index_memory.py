"""Peak memory of ``esqlog index`` on one large real source file, against another checkout.

    python -m scripts.bench.index_memory --url http://127.0.0.1:19200 \
        [--sizes 1,10] [--against /work/main]

For each size (MB) one file is made of real code: the Python standard library's own
modules (tests aside) concatenated in path order and cut at a line end. Each file is
indexed alone by ``esqlog index`` (with ``--max-file-size`` above it) in a fresh process
per checkout, this one and ``--against``'s (its ``esqlog`` package first on PYTHONPATH),
and the peak resident set of that process is read from ``wait4``. Printed side by side:
MB and MB per MB of file for each checkout, and this checkout's peak over the other's.
Each run's index is made by that run and deleted after it (only if its marker says
``esqlog index`` made it).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import sysconfig
import tempfile
import uuid
from pathlib import Path

from scripts.bench.harness import add_url, engine_at

HERE = Path(__file__).resolve().parents[2]
_RUN = "import sys; from esqlog.cli import main; sys.exit(main(prog_name='esqlog'))"


def real_code(megabytes: float, into: Path) -> Path:
    """One .py file of ``megabytes`` MB of the standard library's own modules."""
    want = int(megabytes * 1_000_000)
    parts, size = [], 0
    for path in sorted(Path(sysconfig.get_paths()["stdlib"]).rglob("*.py")):
        if "test" in path.parts or "tests" in path.parts or size >= want:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        parts.append(text if text.endswith("\n") else text + "\n")
        size += len(text.encode())
    text = "".join(parts)
    cut = text.rfind("\n", 0, want) + 1 or len(text)
    into.mkdir(parents=True, exist_ok=True)
    target = into / "big.py"
    target.write_text(text[:cut], encoding="utf-8")
    return target


def peak_mb(tree: Path, repo: Path, url: str, size: int) -> float:
    """The peak RSS (MB) of one ``esqlog index`` run of ``repo`` with ``tree``'s code."""
    index = f"esqlog-bench-memory-{uuid.uuid4().hex[:8]}"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("ESQLOG_")},
        "PYTHONPATH": str(tree),
    }
    run = subprocess.Popen(
        [
            sys.executable,
            "-c",
            _RUN,
            "index",
            str(repo),
            "--index",
            index,
            "--url",
            url,
            "--max-file-size",
            str(size + 1),
            "--no-progress",
            "--json",
        ],
        env=env,
        cwd=tree,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert run.stderr is not None
    error = run.stderr.read()
    _, status, usage = os.wait4(run.pid, 0)
    run.returncode = os.waitstatus_to_exitcode(status)
    _delete(index, url)
    if run.returncode != 0:
        raise SystemExit(f"esqlog index failed with {tree}: {error.decode()[-500:]}")
    return usage.ru_maxrss / 1024


def _delete(index: str, url: str) -> None:
    from esqlog.indexing.target import delete_indexed

    delete_indexed(engine_at(url), index)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_url(parser, required=True)
    parser.add_argument("--sizes", default="1,10", help="file sizes in MB, comma-separated")
    parser.add_argument(
        "--against", type=Path, default=None, help="another checkout to measure beside this one"
    )
    args = parser.parse_args()
    trees = [("this", HERE)] + ([("against", args.against.resolve())] if args.against else [])
    print(
        f"{'file MB':>8} "
        + " ".join(f"{label + ' MB':>12} {'MB/MB':>6}" for label, _ in trees)
        + ("  this/against" if args.against else "")
    )
    with tempfile.TemporaryDirectory(prefix="esqlog-bench-memory-") as folder:
        for megabytes in (float(s) for s in args.sizes.split(",")):
            repo = Path(folder) / f"repo-{megabytes:g}"
            size = real_code(megabytes, repo).stat().st_size
            peaks = [peak_mb(tree, repo, args.url, size) for _, tree in trees]
            row = f"{size / 1e6:8.1f} " + " ".join(
                f"{peak:12.0f} {peak / (size / 1e6):6.1f}" for peak in peaks
            )
            if args.against:
                row += f"  {peaks[0] / peaks[1]:.2f}x"
            print(row, flush=True)


if __name__ == "__main__":
    main()
