"""esqlog for coding agents: esqlog-ranked code search served over MCP (``esqlog mcp``).

* ``tokens``: how many tokens a text costs an agent (a real BPE tokenizer when installed);
* ``chunks``: one indexed document as the agent sees it (path, lines, symbol, text);
* ``outline``: a hit's signature line and doc line, for the default listing;
* ``packing``: search_code's answers (listing or whole chunks) within a token budget;
* ``code_search``: the two tools' logic on a sync client, read-only, raising
  ``ToolInputError`` for bad input;
* ``server``: those tools registered on the official ``mcp`` SDK's server, plain text only;
* ``http_auth``: streamable HTTP behind a bearer token (required off loopback).
"""
