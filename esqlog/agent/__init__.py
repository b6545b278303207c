"""esqlog for coding agents: esqlog-ranked code search served over MCP (``esqlog mcp``).

* ``tokens``: how many tokens a text costs an agent (a real BPE tokenizer when installed);
* ``code_search``: the two tools' logic (search packed into a token budget, exact lines),
  on a sync client, read-only, raising ``ToolInputError`` for bad input;
* ``server``: those tools registered on the official ``mcp`` SDK's server.
"""
