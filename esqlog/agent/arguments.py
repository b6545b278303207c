"""Argument errors as one line an agent can act on.

Why: the MCP SDK validates a tool's arguments against its signature with pydantic and hands
the agent pydantic's report as it is: ``1 validation error for search_codeArguments``, the
field, ``Input should be 'include', 'exclude' or 'only' [type=literal_error, input_value='no',
input_type=str]`` and a ``https://errors.pydantic.dev`` link, on five lines. This server class
says the same in one line per call (``search_code: tests='no' is not accepted: Input should
be 'after', 'include', 'exclude' or 'only'``); everything else is the SDK's. Only
esqlog.agent.server imports this module (the ``mcp`` extra brings pydantic).
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import ValidationError


def readable(tool: str, error: ValidationError) -> str:
    """One line for all of a call's argument errors: each argument, what was passed, and
    what pydantic expects (its message without type codes or links)."""
    problems = []
    for item in error.errors(include_url=False):
        where = ".".join(str(part) for part in item.get("loc", ())) or "arguments"
        if item.get("type") == "missing":
            problems.append(f"{where} is required: pass it")
            continue
        given = f"={item['input']!r}" if "input" in item else ""
        if len(given) > 60:
            given = given[:57] + "...'"
        problems.append(f"{where}{given} is not accepted: {item.get('msg', 'invalid')}")
    return f"{tool}: " + "; ".join(problems)


class ReadableServer(MCPServer):
    """The SDK's server, its argument errors told in one line (:func:`readable`)."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError):
                raise ToolError(readable(name, cause)) from cause
            raise
