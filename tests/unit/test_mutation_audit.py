"""scripts/mutation_audit.py reads its list as documented and tests a mutant with its own
command when it names one (``run:``): a non-zero exit catches it, the file is restored
whatever happens, and a command that fails with no mutant stops the audit."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from scripts import mutation_audit
from scripts.mutation_audit import Mutant, read_mutants

BLOCKS = """# comment
file: a.py
line: x = 1
into: x = 2
tests: tests/unit/test_a.py tests/unit/test_b.py

file: plugins/X.java
line: if (a < b) {
into: if (a <= b) {
run: scripts/engines/test-plugin-java.sh 10.4.0 'two words'
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "mutants.txt"
    path.write_text(text, encoding="utf-8")
    return path


def test_run_is_read_as_argv_words_and_tests_as_paths(tmp_path: Path) -> None:
    pytest_mutant, java_mutant = read_mutants(_write(tmp_path, BLOCKS))
    assert pytest_mutant.tests == ("tests/unit/test_a.py", "tests/unit/test_b.py")
    assert pytest_mutant.run == ()
    assert java_mutant.tests == ()
    assert java_mutant.run == ("scripts/engines/test-plugin-java.sh", "10.4.0", "two words")
    argv = mutation_audit.command(java_mutant, ["tests/unit"], "python")
    assert argv == list(java_mutant.run)
    argv = mutation_audit.command(pytest_mutant, ["tests/unit"], "python")
    assert argv[:3] == ["python", "-m", "pytest"] and argv[-1] == "tests/unit/test_b.py"


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        ("tests: tests/unit\nrun: true", "both tests: and run:"),
        ("run:", "run: is empty"),
        ("run: sh -c 'unbalanced", "balance its quotes"),
        ("command: true", "'run:' followed by text"),
    ],
)
def test_a_bad_run_block_is_one_line(tmp_path: Path, extra: str, says: str) -> None:
    text = f"file: a.py\nline: x = 1\ninto: x = 2\n{extra}\n"
    with pytest.raises(SystemExit) as stopped:
        read_mutants(_write(tmp_path, text))
    message = str(stopped.value)
    assert says in message and "block 1" in message and "\n" not in message


def _checker(tmp_path: Path) -> tuple[Path, tuple[str, ...]]:
    """A file and a command that fails (exit 1) when the file holds 'bug'."""
    (tmp_path / "code.txt").write_text("def f():\n    return ok\n", encoding="utf-8")
    check = "import sys; sys.exit('bug' in open('code.txt').read())"
    return tmp_path / "code.txt", (sys.executable, "-c", check)


def test_a_failing_command_catches_the_mutant_and_the_file_is_restored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mutation_audit, "ROOT", tmp_path)
    code, check = _checker(tmp_path)
    before = code.read_bytes()
    caught = Mutant("code.txt", "return ok", "return bug", run=check)
    assert mutation_audit.run_one(caught, [], sys.executable) == (True, "exit 1")
    assert code.read_bytes() == before
    survivor = Mutant("code.txt", "return ok", "return okay", run=check)
    assert mutation_audit.run_one(survivor, [], sys.executable) == (False, "every test passed")
    assert code.read_bytes() == before


def test_the_file_is_restored_when_the_command_cannot_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mutation_audit, "ROOT", tmp_path)
    code, _ = _checker(tmp_path)
    before = code.read_bytes()
    mutant = Mutant("code.txt", "return ok", "return bug", run=("no-such-command-here",))
    with pytest.raises(ValueError, match="cannot run no-such-command-here"):
        mutation_audit.run_one(mutant, [], sys.executable)
    assert code.read_bytes() == before


def test_a_command_failing_without_a_mutant_stops_the_audit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(mutation_audit, "ROOT", tmp_path)
    code, check = _checker(tmp_path)
    code.write_text("def f():\n    return ok  # bug already\n", encoding="utf-8")
    block = "file: code.txt\nline: return ok  # bug already\ninto: return 1\n"
    listing = _write(tmp_path, f"{block}run: {shlex.join(check)}\n")
    assert mutation_audit.main([str(listing)]) == 2
    assert "fails with no mutant applied" in capsys.readouterr().err
    assert "# bug already" in code.read_text(encoding="utf-8")


def test_the_first_failure_names_the_failing_test_of_pytest_junit_or_javac() -> None:
    assert mutation_audit.first_failure("x\nFAILED tests/unit/t.py::test_a - boom\n") == (
        "tests/unit/t.py::test_a"
    )
    junit = "There was 1 failure:\n1) testImpacts(esqlog.terms.RareImpactsTest)\njava..."
    assert mutation_audit.first_failure(junit) == "testImpacts(esqlog.terms.RareImpactsTest)"
    javac = "/w/RareList.java:40: error: ';' expected\n1 error\n"
    assert mutation_audit.first_failure(javac) == "/w/RareList.java:40: error: ';' expected"
    assert mutation_audit.first_failure("OK (23 tests)\n") == ""


def test_pytest_only_leaves_the_command_mutants_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without a JDK the plugin's mutants cannot run: --pytest-only audits the rest."""
    monkeypatch.setattr(mutation_audit, "ROOT", tmp_path)
    _checker(tmp_path)
    failing = shlex.join((sys.executable, "-c", "raise SystemExit(1)"))
    block = f"file: code.txt\nline: return ok\ninto: return bug\nrun: {failing}\n"
    listing = _write(tmp_path, block)
    assert mutation_audit.main([str(listing), "--pytest-only"]) == 0
    assert "0/0 mutants caught" in capsys.readouterr().out
    assert mutation_audit.main([str(listing)]) == 2
