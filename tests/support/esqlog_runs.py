"""The real ``esqlog`` command in a fresh process, and what its failures must look like.

Apart from tests/support/private_nodes.py (which starts extra engine nodes) so that a test
that runs the command against a closed port or a fake server needs nothing that reaches a
node: those tests live in tests/unit.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def run_esqlog(
    *args: str, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """The real ``esqlog`` command in a fresh process (no inherited ESQLOG_* settings)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ESQLOG_")}
    code = "import sys; from esqlog.cli import main; sys.exit(main(prog_name='esqlog'))"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        env={**clean, **(env or {})},
        text=True,
        capture_output=True,
        timeout=timeout,
        check=False,
    )


def one_line_error(result: subprocess.CompletedProcess[str], code: int) -> str:
    """Assert the run failed with ``code`` and exactly one ``error:`` line; return it."""
    lines = [line for line in result.stderr.splitlines() if not line.startswith("esqlog: ")]
    lines = [line for line in lines if not line.startswith("warning: --insecure")]
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


def stdlib_lines(count: int, min_length: int = 20) -> list[str]:
    """Real text: distinct non-trivial lines of the Python standard library's own sources."""
    import sysconfig

    root = Path(sysconfig.get_paths()["stdlib"])
    seen: dict[str, None] = {}
    for path in sorted(root.glob("*.py")):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            text = line.strip()
            if len(text) >= min_length:
                seen.setdefault(text, None)
                if len(seen) >= count:
                    return list(seen)
    return list(seen)


def no_secret(result: subprocess.CompletedProcess[str], *secrets: str) -> None:
    """Assert none of ``secrets`` shows up in the run's stdout or stderr."""
    for secret in secrets:
        assert secret not in result.stdout, result.stdout
        assert secret not in result.stderr, result.stderr


def calibrate_run(
    url: str, index: str = "code", *extra: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``esqlog --verbose calibrate`` of field ``body`` at ``url``, in a fresh process."""
    return run_esqlog(
        "--verbose",
        "calibrate",
        "--url",
        url,
        "--index",
        index,
        "--field",
        "body",
        *extra,
        env=env,
        timeout=90,
    )


def calibrate_args(url: str, index: str, *extra: str) -> list[str]:
    """The arguments of ``esqlog --verbose calibrate`` of field ``body`` at ``url``."""
    return ["--verbose", "calibrate", "--url", url, "--index", index, "--field", "body", *extra]


def assert_vocabulary_needs_out(url: str) -> None:
    """``calibrate --vocabulary`` without ``--out`` is a one-line usage error (exit 2) at
    ``url``, whether or not a cluster answers there: the check comes before connecting."""
    from click.testing import CliRunner

    from esqlog.cli import main

    result = CliRunner().invoke(
        main, ["calibrate", "--url", url, "--index", "any", "--field", "body", "--vocabulary"]
    )
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --vocabulary needs --out"), lines
    assert "Traceback" not in result.output and result.stdout == ""
