"""esqlog mcp: serve esqlog-ranked code search to a coding agent over MCP."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import click

from esqlog.cli.shared_options import connection_options, open_engine
from esqlog.engine.connection import ConnectionSettings
from esqlog.errors import UsageError


@click.command("mcp")
@connection_options
@click.option("--index", required=True, help="The index to search (only read).")
@click.option("--calibration", "calibration_file", required=True,
              type=click.Path(path_type=Path),
              help="Calibration JSON written by esqlog calibrate --out.")
@click.option("--field", "field_name",
              help="The calibrated text field (default: the calibration's field).")
@click.option("--mode", type=click.Choice(["boost", "identifiers"]), default="boost",
              show_default=True,
              help="Ranking: boost (q-log, the native match set) or identifiers (query words "
                   "also match inside identifiers; needs calibrate --vocabulary --identifiers; "
                   "usually the best recall per token budget on code: BENCHMARKS.md section 10).")
@click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio",
              show_default=True, help="stdio for a local agent; http: streamable HTTP.")
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP listen address.")
@click.option("--port", type=click.IntRange(1, 65535), default=8765, show_default=True,
              help="HTTP port.")
def mcp_command(connection: ConnectionSettings, index: str, calibration_file: Path,
                field_name: str | None, mode: Literal["boost", "identifiers"],
                transport: str, host: str,
                port: int) -> None:
    """Serve search_code and read_code on INDEX to an MCP client (a coding agent).

    The cluster is only read. Problems with the index or a call's arguments are answered
    as tool errors so the agent can correct itself; the server keeps running.
    """
    try:
        from esqlog.agent.server import build_server
    except ImportError:
        raise UsageError("the mcp package is not installed",
                         "pip install 'esqlog[mcp]'") from None
    from esqlog.agent.code_search import CodeSearch
    from esqlog.agent.tokens import default_counter
    from esqlog.cli.query import load_for_field

    calibration, field = load_for_field(calibration_file, field_name)
    engine = open_engine(connection)
    search = CodeSearch(engine, calibration, index, field, default_counter(), connection.url,
                        mode=mode)
    server = build_server(search)
    if transport == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host=host, port=port)
