#!/usr/bin/env python3
"""Mutation audit: realistic one-line bugs applied one at a time, each run against the tests.

Why: a suite that passes says nothing about whether it could fail. A mutant a test catches
shows the behaviour is pinned down; one that survives shows a test that is missing or that
cannot fail (e.g. one that copies the very line it checks).

The list file holds one mutant per block, blocks separated by a blank line, ``#`` lines
being comments::

    file: esqlog/indexing/walk.py
    line: if info.st_size > options.max_file_bytes:
    into: if info.st_size >= options.max_file_bytes:
    tests: tests/unit/test_index_walk.py      (optional: the subset to run)

``line`` is the original line's text without its indentation and must occur exactly once in
the file (the indentation is kept). Each mutant is applied alone, the tests run with
``-x -q``, and the file is restored from the copy read before, always (an exception, a
failed run, Ctrl-C). Exit status: 0 when every mutant is caught, 1 when one survives, 2 for
a bad list.

    python scripts/mutation_audit.py scripts/mutants.txt              # the unit lane
    python scripts/mutation_audit.py scripts/mutants.txt tests/unit/test_x.py
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Mutant:
    file: str
    line: str
    into: str
    tests: tuple[str, ...] = ()


def read_mutants(path: Path) -> list[Mutant]:
    """The list file's mutants; a malformed block stops the run with one line naming it."""
    out: list[Mutant] = []
    blocks = path.read_text(encoding="utf-8").split("\n\n")
    for number, block in enumerate(blocks, start=1):
        fields: dict[str, str] = {}
        for raw in block.splitlines():
            if not raw.strip() or raw.lstrip().startswith("#"):
                continue
            key, sep, value = raw.partition(":")
            if not sep or key.strip() not in ("file", "line", "into", "tests"):
                raise SystemExit(
                    f"{path}: block {number}: {raw!r} is not 'file:', 'line:', "
                    "'into:' or 'tests:' followed by text"
                )
            fields[key.strip()] = value.strip()
        if not fields:
            continue
        missing = [k for k in ("file", "line", "into") if k not in fields]
        if missing:
            raise SystemExit(
                f"{path}: block {number} lacks {', '.join(missing)}; give file:, line: and into:"
            )
        out.append(
            Mutant(
                fields["file"],
                fields["line"],
                fields["into"],
                tuple(fields.get("tests", "").split()),
            )
        )
    return out


def mutated(text: str, mutant: Mutant) -> str:
    """``text`` with the mutant's line replaced (its indentation kept)."""
    lines = text.split("\n")
    at = [i for i, line in enumerate(lines) if line.strip() == mutant.line]
    if len(at) != 1:
        raise ValueError(
            f"{mutant.file}: the line {mutant.line!r} occurs {len(at)} times "
            "(it must occur once: quote it exactly, without indentation)"
        )
    line = lines[at[0]]
    lines[at[0]] = line[: len(line) - len(line.lstrip())] + mutant.into
    return "\n".join(lines)


def run_one(mutant: Mutant, tests: list[str], python: str) -> tuple[bool, str]:
    """(caught, the first failing test or why), the file restored whatever happens."""
    path = ROOT / mutant.file
    original = path.read_bytes()
    try:
        path.write_text(mutated(original.decode("utf-8"), mutant), encoding="utf-8")
        run = subprocess.run(
            [
                python,
                "-m",
                "pytest",
                "-x",
                "-q",
                "-p",
                "no:cacheprovider",
                *(mutant.tests or tests),
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
    finally:
        path.write_bytes(original)
    failed = [
        line.split(" ", 2)[1]
        for line in run.stdout.splitlines()
        if line.startswith(("FAILED ", "ERROR "))
    ]
    if run.returncode == 0:
        return False, "every test passed"
    return True, failed[0] if failed else f"pytest exit {run.returncode}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mutants", type=Path, help="the list file (see this script's doc)")
    parser.add_argument(
        "tests",
        nargs="*",
        default=["tests/unit"],
        help="what pytest runs for a mutant without its own tests: line",
    )
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args(argv)
    try:
        mutants = read_mutants(args.mutants)
    except OSError as exc:
        print(
            f"cannot read {args.mutants}: {exc.strerror}; pass the list file's path",
            file=sys.stderr,
        )
        return 2
    caught = 0
    started = time.monotonic()
    for k, mutant in enumerate(mutants, start=1):
        try:
            hit, why = run_one(mutant, args.tests, args.python)
        except ValueError as exc:
            print(f"[{k}/{len(mutants)}] BAD LIST {exc}", file=sys.stderr)
            return 2
        caught += hit
        print(
            f"[{k}/{len(mutants)}] {'caught  ' if hit else 'SURVIVED'} "
            f"{mutant.file}: {mutant.into}  -- {why}",
            flush=True,
        )
    share = caught / len(mutants) if mutants else 1.0
    print(
        f"{caught}/{len(mutants)} mutants caught ({share:.0%}) in "
        f"{time.monotonic() - started:.0f} s"
    )
    return 0 if caught == len(mutants) else 1


if __name__ == "__main__":
    sys.exit(main())
