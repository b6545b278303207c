"""esqlog mcp: serve esqlog-ranked code search to a coding agent over MCP.

Everything that can be wrong at start is checked before serving, each as one line on
stderr and exit 2: over stdio the agent only sees its server close, so a message there is
the user's only clue. The calibration path is made absolute first (an agent often starts
the server in another folder than the one the configuration was written in), and a
non-loopback --host needs --auth-token-file (esqlog.agent.http_auth says why).
"""

from __future__ import annotations

import logging
import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import click

from esqlog.cli.shared_options import connection_options, open_engine
from esqlog.engine.connection import ConnectionSettings
from esqlog.errors import UsageError
from esqlog.extras import missing_modules

log = logging.getLogger("esqlog")

if TYPE_CHECKING:
    from esqlog.agent.code_search import CodeSearch
    from esqlog.agent.freshness import Freshness
    from esqlog.engine.client import Engine


@click.command("mcp")
@connection_options
@click.option("--index", required=True, help="The index to search (only read).")
@click.option(
    "--calibration",
    "calibration_file",
    required=True,
    type=click.Path(path_type=Path),
    help="Calibration JSON written by esqlog calibrate --out.",
)
@click.option(
    "--field", "field_name", help="The calibrated text field (default: the calibration's field)."
)
@click.option(
    "--mode",
    type=click.Choice(["auto", "boost", "identifiers"]),
    default="auto",
    show_default=True,
    help="Ranking: boost (q-log, the native match set) or identifiers (query words "
    "also match inside identifiers; needs calibrate --vocabulary --identifiers; "
    "usually the best recall per token budget on code: BENCHMARKS.md section "
    "10). auto: identifiers when the calibration has its statistics and says "
    "the field is code, else boost; the choice is the server's description "
    "(and on stderr with esqlog --verbose).",
)
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio for a local agent; http: streamable HTTP.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP listen address.")
@click.option(
    "--port", type=click.IntRange(1, 65535), default=8765, show_default=True, help="HTTP port."
)
@click.option(
    "--auth-token-file",
    type=click.Path(path_type=Path),
    help="HTTP: require 'Authorization: Bearer <token>' with the token in this file "
    "(needed for a --host other than loopback).",
)
@click.option(
    "--watch/--no-watch",
    default=True,
    show_default=True,
    help="Before each answer (the folder at most once a second), re-index the "
    "files changed on disk in the folder esqlog index built INDEX from, as "
    "esqlog index does, keeping an esqlog index --calibrate calibration "
    "fresh. --no-watch: never write to INDEX.",
)
def mcp_command(
    connection: ConnectionSettings,
    index: str,
    calibration_file: Path,
    field_name: str | None,
    mode: Literal["auto", "boost", "identifiers"],
    transport: str,
    host: str,
    port: int,
    auth_token_file: Path | None,
    watch: bool,
) -> None:
    """Serve search_code and read_code on INDEX to an MCP client (a coding agent).

    The cluster is only read. Problems with the index or a call's arguments are answered
    as tool errors so the agent can correct itself; the server keeps running.
    """
    try:
        import mcp.server.mcpserver  # noqa: F401  (the SDK itself, not only esqlog's module)
    except ImportError:
        raise UsageError("the mcp package is not installed", "pip install 'esqlog[mcp]'") from None
    from esqlog.agent.code_search import CodeSearch
    from esqlog.agent.http_auth import is_loopback, serve_http
    from esqlog.agent.server import build_server
    from esqlog.agent.tokens import default_counter
    from esqlog.cli.query import load_for_field

    if auth_token_file is not None and transport != "http":
        raise UsageError(
            "--auth-token-file protects HTTP only; stdio has no network side",
            "add --transport http, or leave --auth-token-file out",
        )
    token = auth_token(auth_token_file) if auth_token_file is not None else None
    if transport == "http" and token is None and not is_loopback(host):
        raise UsageError(
            f"--host {host} serves the index to other machines without authentication",
            "pass --auth-token-file FILE (clients then send "
            "'Authorization: Bearer <token>'), or --host 127.0.0.1",
        )
    if transport == "http":
        host = listen_host(host)
    calibration_file = absolute_calibration(calibration_file)
    calibration, field = load_for_field(calibration_file, field_name)
    if mode == "auto":
        from esqlog.identifiers.calibrate import auto_mode

        chosen, why = auto_mode(calibration)
    else:
        from esqlog.identifiers.calibrate import check_companions

        if mode == "identifiers":
            check_companions(calibration)
        chosen, why = mode, "--mode"
    # An agent tries again itself: a stopped engine is answered at once, not after retries.
    connection = replace(connection, max_retries=0)
    engine = open_engine(connection)
    search = CodeSearch(
        engine, calibration, index, field, default_counter(), connection.url, mode=chosen
    )
    notes = [f"mode {chosen}: {why}"]
    freshness = (
        _freshness(engine, connection, index, search, calibration_file, notes) if watch else None
    )
    for note in notes:  # stderr only with esqlog --verbose: see quiet_start
        log.info("esqlog mcp: %s", note)
    server = build_server(search, freshness, about="; ".join(notes))
    quiet_start()
    if transport == "stdio":
        server.run("stdio")
    else:
        serve_http(server, host, port, token)


def quiet_start() -> None:
    """No stderr line at start-up or per failed call unless ``esqlog --verbose``.

    Claude Code logs every stderr line of a server as an error (and may mark the server
    failed), so start-up information goes in the serverInfo description instead, and the
    engine clients' per-request warnings (a traceback each, 138 KB for two calls to a
    stopped engine) are left out: the tool answer already says what failed in one line.
    """
    if log.isEnabledFor(logging.INFO):
        return
    for name in ("elastic_transport", "elasticsearch", "opensearch", "urllib3"):
        logging.getLogger(name).setLevel(logging.ERROR)


def _freshness(
    engine: Engine,
    connection: ConnectionSettings,
    index: str,
    search: CodeSearch,
    calibration_file: Path,
    notes: list[str],
) -> Freshness | None:
    """The watcher of the indexed folder, or None (a line in ``notes``) without the
    ``index`` extra, which the re-index needs."""
    from esqlog.agent.freshness import Freshness
    from esqlog.cli.index_cmd import INDEX_MODULES
    from esqlog.cli.mcp_fresh import Reindex, kept_fresh

    if missing_modules(INDEX_MODULES):
        notes.append(
            "not re-indexing changed files: pip install 'esqlog[index]' for that "
            "(or pass --no-watch)"
        )
        return None
    keep = calibration_file if kept_fresh(calibration_file) else None
    return Freshness(search._root, Reindex(engine, connection, index, search, keep))


def absolute_calibration(path: Path) -> Path:
    """The calibration file as an absolute path, checked to exist (symlinks kept)."""
    absolute = Path(os.path.abspath(path.expanduser()))
    if not absolute.is_file():
        where = (
            ""
            if path.expanduser().is_absolute()
            else (
                f" (a relative --calibration is read from the folder esqlog mcp starts in, "
                f"{os.getcwd()})"
            )
        )
        raise UsageError(
            f"calibration file {str(absolute)!r} does not exist{where}",
            "pass the absolute path of the file esqlog calibrate --out wrote",
        )
    return absolute


def listen_host(host: str) -> str:
    """--host as the server binds it: ``[::1]`` (a URL's spelling) without its brackets; one
    that resolves to no address is one line, not the HTTP server's traceback."""
    import socket

    bare = host.strip()
    if bare.startswith("[") and bare.endswith("]"):
        bare = bare[1:-1]
    try:
        socket.getaddrinfo(bare, None)
    except (OSError, UnicodeError):
        raise UsageError(
            f"--host {host[:100]!r} is not an address this machine can listen on",
            "pass an IP address (127.0.0.1, ::1, 0.0.0.0) or a host name",
        ) from None
    return bare


#: a bearer token shorter than this is refused (openssl rand -hex 32 gives 64)
MIN_TOKEN_CHARS = 16


def auth_token(path: Path) -> str:
    """The bearer token: the file's text without surrounding whitespace (never printed)."""
    from esqlog.atomic import read_regular_file

    fix = "pass a file holding one token (e.g. from: openssl rand -hex 32)"
    target = path.expanduser()
    try:
        mode = target.stat().st_mode
    except OSError:
        mode = 0  # read_regular_file names what is wrong with it
    if mode & 0o077:
        raise UsageError(
            f"auth token file {str(path)!r} can be read by other users (mode {mode & 0o777:o})",
            f"chmod 600 {str(path)!r}",
        )
    raw = read_regular_file(target, 4096, "auth token file", fix)
    try:
        token = raw.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise UsageError(f"auth token file {str(path)!r} is not UTF-8 text", fix) from None
    if not token or any(c.isspace() for c in token) or not token.isprintable():
        raise UsageError(
            f"auth token file {str(path)!r} does not hold one token (empty, or spaces inside)", fix
        )
    if len(token) < MIN_TOKEN_CHARS:
        raise UsageError(
            f"the token in {str(path)!r} has {len(token)} characters, under "
            f"{MIN_TOKEN_CHARS}: anyone could guess it",
            fix,
        )
    return token
