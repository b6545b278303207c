"""The command line loads its commands lazily (esqlog.cli.commands): ``esqlog --help`` imports
no numpy and no client library, and its listing is the commands' own."""

from __future__ import annotations

import json
import subprocess
import sys

import click
from click.testing import CliRunner

from esqlog.cli import commands, main

#: what `esqlog --help` must not import: 0.4-0.9 s together (logging alone ~10 ms)
HEAVY = ("numpy", "elasticsearch", "opensearchpy", "rich", "logging")


def _modules_after(*argv: str) -> dict[str, object]:
    """Run the CLI in a fresh interpreter; its exit code and the heavy modules it imported."""
    code = (
        "import json, sys\nfrom esqlog.cli import main\n"
        f"sys.argv = ['esqlog', *{list(argv)!r}]\n"
        "try:\n    main(prog_name='esqlog')\nexcept SystemExit as exc:\n"
        "    code = exc.code\n"
        f"heavy = sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})\n"
        "print(json.dumps({'code': code, 'heavy': heavy}), file=sys.stderr)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    result: dict[str, object] = json.loads(run.stderr.strip().splitlines()[-1])
    return result


def test_help_imports_no_numpy_and_no_client() -> None:
    assert _modules_after("--help") == {"code": 0, "heavy": []}
    assert _modules_after("--version") == {"code": 0, "heavy": []}


def test_a_command_imports_what_it_needs() -> None:
    ran = _modules_after("compare", "--help")
    assert ran["code"] == 0 and "numpy" in ran["heavy"]  # type: ignore[operator]


def test_every_summary_is_the_commands_own_first_sentence() -> None:
    for name, entry in commands.LAZY_COMMANDS.items():
        command = commands.load(name)
        assert command is not None and command.name == name
        assert command.get_short_help_str(10**6) == entry.summary, name
        for limit in (30, 45, 80):
            assert commands.listed(name).get_short_help_str(limit) == (
                command.get_short_help_str(limit)
            )


def test_listing_and_unknown_commands() -> None:
    ctx = click.Context(main)
    assert main.list_commands(ctx) == sorted(commands.LAZY_COMMANDS)
    assert main.get_command(ctx, "nope") is None
    result = CliRunner().invoke(main, ["nope"])
    assert result.exit_code == 2 and "No such command 'nope'" in result.output
    listing = CliRunner().invoke(main, ["--help"]).output
    for name in commands.LAZY_COMMANDS:
        assert f"\n  {name} " in listing
