"""The MCP configurations in the docs work as written: every JSON and TOML block and every
``claude mcp add`` / ``codex mcp add`` line of docs/agents.md, docs/indexing.md and the
README is parsed, and its command and arguments are checked against ``esqlog mcp`` itself
(click parses them as the command would), with absolute paths and one mode for every
client. docs/agents.md's sample listing is what the packer prints."""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from pathlib import Path
from typing import Any

import click
import pytest

from esqlog.agent.chunks import Chunk
from esqlog.agent.matching import words_of
from esqlog.agent.packing import listing_entry
from esqlog.cli import main
from esqlog.cli.mcp_cmd import mcp_command
from tests.support.sources import GO

ROOT = Path(__file__).resolve().parents[2]
DOCS = {
    name: (ROOT / name).read_text(encoding="utf-8")
    for name in ("docs/agents.md", "docs/indexing.md", "README.md")
}
DOC = DOCS["docs/agents.md"]
BLOCKS = re.findall(r"^```(\w+)\n(.*?)^```", DOC, re.S | re.M)
PATH_OPTIONS = ("--calibration", "--auth-token-file", "--password-file", "--ca-certs")


def _parse(args: list[str]) -> click.Context:
    """``esqlog mcp ARGS`` parsed as the command line would (under the esqlog group, whose
    settings a context of its own would miss); raises on anything the command refuses."""
    parent = click.Context(main, info_name="esqlog", **main.context_settings)
    return mcp_command.make_context("mcp", args, parent=parent)


def _servers(blocks: list[tuple[str, str]]) -> list[tuple[str, dict[str, Any]]]:
    """(where, {"command", "args", "env"}) of every configuration in the blocks."""
    out: list[tuple[str, dict[str, Any]]] = []
    for kind, body in blocks:
        if kind == "json" and "mcpServers" in body:
            for name, server in json.loads(body)["mcpServers"].items():
                out.append((f"json {name}", server))
        elif kind == "toml" and "mcp_servers" in body:
            for name, server in tomllib.loads(body)["mcp_servers"].items():
                out.append((f"toml {name}", server))
        elif kind == "bash":
            for line in body.replace("\\\n", " ").splitlines():
                words = shlex.split(line)
                if words[:1] in (["claude"], ["codex"]) and words[1:3] == ["mcp", "add"]:
                    command, *args = words[words.index("--") + 1 :]
                    out.append(
                        (f"{words[0]} mcp add {words[3]}", {"command": command, "args": args})
                    )
    return out


SERVERS = _servers(BLOCKS)
#: every configuration of every page, named by page
ALL_SERVERS = [
    (f"{page}: {where}", server)
    for page, text in DOCS.items()
    for where, server in _servers(re.findall(r"^```(\w+)\n(.*?)^```", text, re.S | re.M))
]


def test_every_agent_is_configured() -> None:
    where = [w for w, _ in SERVERS]
    assert len([w for w in where if w.startswith("json")]) == 2  # Claude Code, Cursor
    assert "toml esqlog" in where
    assert {"claude mcp add esqlog", "codex mcp add esqlog"} <= set(where)
    for name in (".mcp.json", "~/.codex/config.toml", ".cursor/mcp.json"):
        assert name in DOC


@pytest.mark.parametrize(("where", "server"), ALL_SERVERS, ids=[w for w, _ in ALL_SERVERS])
def test_configuration_is_what_esqlog_mcp_accepts(where: str, server: dict[str, Any]) -> None:
    command, args = server["command"], server["args"]
    assert command.startswith("/") and command.endswith("/esqlog"), where
    assert args[0] == "mcp", where
    ctx = _parse(list(args[1:]))
    assert ctx.params["index"] and ctx.params["calibration_file"].is_absolute()
    for option in PATH_OPTIONS:
        if option in args:
            assert args[args.index(option) + 1].startswith("/"), (where, option)
    help_text = " ".join(mcp_command.get_help(ctx).split())
    for name in server.get("env", {}):  # only variables esqlog mcp reads
        assert f"[env {name}]" in help_text, (where, name)


def test_every_client_gets_the_same_server() -> None:
    """One mode (the default) and one set of options for every client and page: a block
    that differs (a --mode only Cursor was given) serves that agent another ranking."""
    assert len(ALL_SERVERS) >= 6 and any(w.startswith("docs/indexing.md") for w, _ in ALL_SERVERS)
    for where, server in ALL_SERVERS:
        params = _parse(list(server["args"][1:])).params
        assert params["mode"] == "auto" and "--mode" not in server["args"], where
    options = {tuple(a for a in server["args"] if a.startswith("--")) for _, server in ALL_SERVERS}
    assert len(options) == 1, options


def test_http_example_is_accepted_with_its_token() -> None:
    line = next(
        line
        for kind, body in BLOCKS
        if kind == "bash"
        for line in body.replace("\\\n", " ").splitlines()
        if line.startswith("esqlog mcp ")
    )
    args = shlex.split(line)[2:]
    ctx = _parse(args)
    assert ctx.params["host"] == "0.0.0.0" and ctx.params["auth_token_file"].is_absolute()


def test_sample_listing_is_the_packers_output() -> None:
    lines = GO.split("\n")
    chunk = Chunk(
        id="x",
        text="\n".join(lines[14:21]) + "\n",
        path="go/builder.go",
        symbol="Builder.WriteRune",
        start_line=15,
        lines_known=True,
    )
    sample = DOC.split("```text\n", 1)[1].split("```", 1)[0]
    entry = listing_entry(chunk, 1, query=words_of("WriteRune utf8 encoding"))
    assert "\n".join("  " + line for line in entry.splitlines()) in sample
