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

Code pytest does not test (the esqlog-terms plugin's Java) names the command that tests it
instead of ``tests:``, its argv words split as a shell would (no shell runs it)::

    file: plugins/esqlog-terms/lucene/src/esqlog/terms/RareImpacts.java
    line: if (freqs[entry] > best) {
    into: if (freqs[entry] >= best) {
    run: scripts/engines/test-plugin-java.sh 10.4.0

The command runs from the checkout's root and catches the mutant when it exits non-zero. A
command that fails with no mutant applied would catch every mutant and prove nothing, so
each distinct command is first run once on the unmutated tree, and the audit stops (exit 2)
if it fails there. ``--pytest-only`` leaves these mutants out (a machine without a JDK, a
quick pass: the plugin's take about a minute each).

    python scripts/mutation_audit.py scripts/mutants.txt              # the unit lane
    python scripts/mutation_audit.py scripts/mutants.txt tests/unit/test_x.py
"""

from __future__ import annotations

import argparse
import re
import shlex
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
    #: the command that tests the mutant instead of pytest (argv words), when given
    run: tuple[str, ...] = ()


KEYS = ("file", "line", "into", "tests", "run")


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
            if not sep or key.strip() not in KEYS:
                raise SystemExit(
                    f"{path}: block {number}: {raw!r} is not 'file:', 'line:', "
                    "'into:', 'tests:' or 'run:' followed by text"
                )
            fields[key.strip()] = value.strip()
        if not fields:
            continue
        missing = [k for k in ("file", "line", "into") if k not in fields]
        if missing:
            raise SystemExit(
                f"{path}: block {number} lacks {', '.join(missing)}; give file:, line: and into:"
            )
        out.append(_mutant(path, number, fields))
    return out


def _mutant(path: Path, number: int, fields: dict[str, str]) -> Mutant:
    """One block's mutant: ``run:`` split into argv words, refused beside ``tests:`` (a
    mutant is tested by pytest or by its command, not both) or when empty or unbalanced."""
    if "run" in fields and "tests" in fields:
        raise SystemExit(
            f"{path}: block {number} has both tests: and run:; keep one "
            "(run: replaces pytest for that mutant)"
        )
    try:
        run = tuple(shlex.split(fields.get("run", "")))
    except ValueError as exc:
        raise SystemExit(
            f"{path}: block {number}: run: {fields['run']!r} does not split into words "
            f"({exc}); balance its quotes"
        ) from None
    if "run" in fields and not run:
        raise SystemExit(f"{path}: block {number}: run: is empty; name the command to run")
    return Mutant(
        fields["file"],
        fields["line"],
        fields["into"],
        tuple(fields.get("tests", "").split()),
        run,
    )


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


def command(mutant: Mutant, tests: list[str], python: str) -> list[str]:
    """What tests the mutant: its own command, else pytest on its tests (or the default)."""
    if mutant.run:
        return list(mutant.run)
    return [python, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *(mutant.tests or tests)]


def run_one(mutant: Mutant, tests: list[str], python: str) -> tuple[bool, str]:
    """(caught, the first failing test or why), the file restored whatever happens."""
    path = ROOT / mutant.file
    original = path.read_bytes()
    try:
        path.write_text(mutated(original.decode("utf-8"), mutant), encoding="utf-8")
        run = _run(command(mutant, tests, python))
    finally:
        path.write_bytes(original)
    if run.returncode == 0:
        return False, "every test passed"
    return True, _why(run)


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
    except OSError as exc:
        raise ValueError(f"cannot run {shlex.join(argv)}: {exc.strerror}") from None


#: pytest's ``FAILED tests/x.py::test_y - ...``, JUnit's ``1) testY(esqlog.terms.XTest)``
#: and javac's ``X.java:12: error: ...``, in that order of preference
_FAILURES = (
    re.compile(r"^(?:FAILED|ERROR) (\S+)", re.M),
    re.compile(r"^\d+\) (\S+)", re.M),
    re.compile(r"^(\S+\.java:\d+: error: .*)$", re.M),
)


def first_failure(output: str) -> str:
    """The first failing test (or compile error) a run printed, else ""."""
    for pattern in _FAILURES:
        found = pattern.search(output)
        if found:
            return found[1]
    return ""


def _why(run: subprocess.CompletedProcess[str]) -> str:
    """What a failed run says failed first, else its exit status."""
    return first_failure(run.stdout + "\n" + run.stderr) or f"exit {run.returncode}"


def check_commands(mutants: list[Mutant]) -> None:
    """Each distinct ``run:`` command passes on the unmutated tree, else ValueError: one that
    fails without a mutant would report every mutant caught."""
    for argv in dict.fromkeys(m.run for m in mutants if m.run):
        run = _run(list(argv))
        if run.returncode != 0:
            raise ValueError(
                f"run: {shlex.join(argv)} fails with no mutant applied ({_why(run)}); "
                "fix the command or what it tests first"
            )


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
    parser.add_argument(
        "--pytest-only", action="store_true", help="leave out the mutants with a run: command"
    )
    args = parser.parse_args(argv)
    try:
        mutants = read_mutants(args.mutants)
    except OSError as exc:
        print(
            f"cannot read {args.mutants}: {exc.strerror}; pass the list file's path",
            file=sys.stderr,
        )
        return 2
    if args.pytest_only:
        mutants = [m for m in mutants if not m.run]
    caught = 0
    started = time.monotonic()
    try:
        check_commands(mutants)
    except ValueError as exc:
        print(f"BAD LIST {exc}", file=sys.stderr)
        return 2
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
