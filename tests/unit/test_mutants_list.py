"""scripts/mutants.txt stays usable: every mutant's line is in its file exactly once, its bug
differs from it, and the tests it names exist. A refactor that rewrites a listed line
otherwise leaves the audit with a mutant it can no longer apply (it stops on it)."""

from __future__ import annotations

from pathlib import Path

from scripts.mutation_audit import mutated, read_mutants

ROOT = Path(__file__).resolve().parents[2]


def test_every_mutant_applies_to_exactly_one_line() -> None:
    mutants = read_mutants(ROOT / "scripts" / "mutants.txt")
    assert len(mutants) > 40
    for mutant in mutants:
        text = (ROOT / mutant.file).read_text(encoding="utf-8")
        assert mutant.into != mutant.line, mutant
        assert mutated(text, mutant) != text, mutant  # raises when the line is not once
        for test in mutant.tests:
            assert (ROOT / test.split("::")[0]).exists(), (mutant.file, test)


def test_every_command_a_mutant_runs_exists() -> None:
    """A ``run:`` naming a script of the checkout names one that is there (a missing one
    would stop the audit when it checks the command on the unmutated tree)."""
    mutants = read_mutants(ROOT / "scripts" / "mutants.txt")
    assert any(m.run and m.file.endswith(".java") for m in mutants)
    for mutant in mutants:
        if mutant.run and "/" in mutant.run[0]:
            assert (ROOT / mutant.run[0]).is_file(), (mutant.file, mutant.run)
            assert not mutant.tests, mutant
