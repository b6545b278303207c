"""The MCP server: CodeSearch's two tools on the official ``mcp`` SDK (stdio or HTTP).

Tool functions are thin: validation and I/O live in CodeSearch so the same code answers
whichever transport is used. ``ToolInputError`` becomes the SDK's ``ToolError`` (the agent
reads the message; the server keeps running).
"""

from __future__ import annotations

from typing import Any

from esqlog.agent.code_search import CodeSearch, ToolInputError

INSTRUCTIONS = (
    "Code search over an Elasticsearch/OpenSearch index, ranked by esqlog (q-log BM25). "
    "search_code returns whole chunks, best first, within max_tokens; read_code returns "
    "exact lines of one indexed document by id (or path).")


def build_server(search: CodeSearch) -> Any:
    """An ``MCPServer`` with search_code and read_code bound to ``search``."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import ToolAnnotations

    server = MCPServer("esqlog", instructions=INSTRUCTIONS, log_level="WARNING")
    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False,
                                  idempotent_hint=True)

    @server.tool(annotations=read_only)
    def search_code(query: str, max_tokens: int = 8000, limit: int = 50) -> str:
        """Search the code index; whole chunks, best first, at most max_tokens tokens in
        all. Each chunk starts with a '--- [rank] id=... path=... lines=a-b symbol=...' line;
        the first line says how many hits were left out for lack of budget."""
        try:
            return search.search(query, max_tokens, limit)
        except ToolInputError as exc:
            raise ToolError(str(exc)) from None

    @server.tool(annotations=read_only)
    def read_code(id: str | None = None, path: str | None = None,
                  start_line: int | None = None, end_line: int | None = None) -> str:
        """Exact lines start_line..end_line (inclusive; default: all) of one indexed
        document, by id from search_code (or by path when the index has line numbers)."""
        try:
            return search.read(id, path, start_line, end_line)
        except ToolInputError as exc:
            raise ToolError(str(exc)) from None

    _ = (search_code, read_code)  # registered by the decorators
    return server
