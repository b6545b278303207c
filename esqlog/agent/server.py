"""The MCP server: CodeSearch's tools on the official ``mcp`` SDK (stdio or HTTP).

Tool functions are thin: validation and I/O live in CodeSearch so the same code answers
whichever transport is used. ``ToolInputError`` becomes the SDK's ``ToolError`` (the agent
reads the message; the server keeps running).

The tools return plain text only (``structured_output=False``): with an output schema the
SDK also sends the answer as ``structuredContent``, a JSON copy of the same text, and
clients that hand the model that copy pay ~10% more than the budget the agent asked for.
The descriptions are the only manual a model reads, so they say how to query and what
each listing line means. Only ``esqlog mcp`` imports this module, after checking that the
``mcp`` extra (which brings pydantic) is installed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field  # installed with mcp, which this module needs anyway

from esqlog.agent.chunks import ToolInputError
from esqlog.agent.code_search import (
    DEFAULT_BUDGET,
    DEFAULT_LIMIT,
    MAX_BUDGET,
    MIN_BUDGET,
    CodeSearch,
)
from esqlog.agent.freshness import Freshness, with_note
from esqlog.agent.grep import Grep
from esqlog.agent.line_scan import DEFAULT_LIMIT as LINES_LIMIT
from esqlog.agent.line_scan import MAX_LIMIT as MAX_LINES
from esqlog.agent.packing import OUTLINED
from esqlog.agent.reading import MAX_READ_TOKENS
from esqlog.agent.references import References
from esqlog.agent.scope import Scope
from esqlog.agent.search_arguments import (
    DetailArg,
    KindArg,
    LanguageArg,
    LimitArg,
    MaxTokensArg,
    OffsetArg,
    PathArg,
    ProseArg,
    QueryArg,
    TestsArg,
)

if TYPE_CHECKING:
    from mcp.types import ToolAnnotations

    from esqlog.agent.arguments import ReadableServer

INSTRUCTIONS = (
    "Code search over an Elasticsearch/OpenSearch index of source files, ranked by esqlog "
    "(BM25 with q-log IDF, which favours rare identifiers). search_code lists the best hits "
    "as 'path:start-end symbol' with their first code line and doc line; read_code(path, "
    "start_line, end_line) then returns those exact numbered lines. Search first, read only "
    "what the listing points to. find_references(symbol) lists every line that defines, "
    "imports or uses a name; grep_code(pattern) every line with exact text or a regex."
)

SEARCH_DOC = (
    "Ranked code search. Best results come from identifier names and distinctive words "
    "(e.g. 'parseHeader timeout', 'WriteRune utf8'), not whole questions: every query word "
    "counts, rare ones most. Default answer: a listing, best first, one entry per function; "
    "each hit is 'N. path:start-end Symbol' (Class.method when the index knows the class), "
    "then the line that holds most of the query's words, numbered as '123| text'; for text "
    "the query quotes (the whole query, or a part in double quotes or backticks), the lines "
    f"that hold that text. When no line holds the words, the first {OUTLINED} hits show their "
    "signature and the first line of their doc comment instead. Hits scoring "
    "far below the best are left out and counted on the last line with the offset that "
    "lists them; tests come after the implementation unless tests='include'. A name "
    "alone is answered with its definition. The definition of a name the query spells "
    "as code (dialConn, open_url, `decode`) is listed first. Pass that path "
    "and line range to read_code to see the code. Narrow with path (a glob), language, "
    "kind, tests and prose (docs and changelogs are left out unless prose='include'); "
    "a pasted dotted name (pkg.Func) also searches its parts. "
    "The last line, after the hits, says how many were "
    f"shown and how many left out for the budget. The whole answer is at most max_tokens "
    f"tokens ({MIN_BUDGET}-{MAX_BUDGET}, counted with the o200k_base tokenizer; {MAX_BUDGET} "
    "stays under Claude Code's 25,000-token cut of a tool result)."
)

READ_DOC = (
    "Exact lines of an indexed file, numbered as by cat -n: the line number, a tab, the code. "
    "Pass path and start_line/end_line from a search_code listing (inclusive; omit both "
    "for the whole file), or an id when a listing shows 'id=...' instead of a path. At most "
    f"{MAX_READ_TOKENS} tokens per answer; a longer range ends with a line naming the "
    "start_line to continue from."
)

REFERENCES_DOC = (
    "Where a name is defined, imported and used: every line of the indexed code holding it "
    "as a whole identifier (case-sensitive, like 'rg -w'), as 'path:line: the line', "
    "definitions first, then imports, then uses (implementation before tests and docs). "
    "Exhaustive: the first line counts them all; past limit, 'N more references in M files'. "
    "A dotted or qualified name (httpx.Client, Context.Next, pkg.(*T).M) is looked up by "
    "its last part. 'no references to X in the index' means no indexed line holds it."
)

GREP_DOC = (
    "Exact search of the indexed text, line by line, for what ranking cannot answer: a "
    "literal (default, case-sensitive) or, with regex=true, a Python regular expression "
    "matched within one line. Lists every matching line as 'path:line: the line' by path "
    "and line, up to limit, then 'N more lines in M files'. Faster and narrower with a word "
    "of 3+ letters in the pattern."
)

#: the line tools' shared arguments (module level: the SDK resolves annotations here)
GLOB = Field(description="Only files matching this glob: 'src/**/*.go', '*.py', 'internal/'.")
LINES = Field(description=f"Lines to list, 1-{MAX_LINES}; the rest are counted.")


def build_server(
    search: CodeSearch, freshness: Freshness | None = None, about: str | None = None
) -> Any:
    """An ``MCPServer`` with search_code, read_code, find_references and grep_code bound to
    ``search``; with ``freshness``, each call first re-indexes the files changed on disk.
    ``about``: the serverInfo description (what esqlog mcp chose at start, shown by clients
    as information rather than read from stderr)."""
    from mcp.types import ToolAnnotations

    from esqlog.agent.arguments import ReadableServer

    server = ReadableServer(
        "esqlog", instructions=INSTRUCTIONS, log_level="WARNING", description=about
    )
    tools_only(server)
    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)
    _add_search_tool(server, search, freshness, read_only)
    _add_read_tool(server, search, freshness, read_only)
    _add_line_tools(server, search, freshness, read_only)
    return server


def _add_search_tool(
    server: ReadableServer,
    search: CodeSearch,
    freshness: Freshness | None,
    read_only: ToolAnnotations,
) -> None:
    """search_code: the ranked listing (or whole chunks) of what a query names."""
    from mcp.server.mcpserver.exceptions import ToolError

    @server.tool(annotations=read_only, description=SEARCH_DOC, structured_output=False)
    def search_code(
        query: QueryArg,
        max_tokens: MaxTokensArg = DEFAULT_BUDGET,
        limit: LimitArg = DEFAULT_LIMIT,
        detail: DetailArg = "list",
        path: PathArg = None,
        language: LanguageArg = None,
        kind: KindArg = None,
        tests: TestsArg = "after",
        prose: ProseArg = "exclude",
        offset: OffsetArg = 0,
    ) -> str:
        try:
            scope = Scope(path, language, kind, tests, prose)
            note = freshness.check() if freshness is not None else ""
            return with_note(note, search.search(query, max_tokens, limit, detail, scope, offset))
        except ToolInputError as exc:
            raise ToolError(str(exc)) from None

    _ = search_code  # registered by the decorator


def _add_read_tool(
    server: ReadableServer,
    search: CodeSearch,
    freshness: Freshness | None,
    read_only: ToolAnnotations,
) -> None:
    """read_code: the exact numbered lines a listing points to."""
    from mcp.server.mcpserver.exceptions import ToolError

    @server.tool(annotations=read_only, description=READ_DOC, structured_output=False)
    def read_code(
        path: Annotated[
            str | None,
            Field(
                description=(
                    "File path exactly as a search_code listing shows it (before the colon)."
                )
            ),
        ] = None,
        start_line: Annotated[
            int | None,
            Field(description=("First line to return (inclusive); default: the file's first.")),
        ] = None,
        end_line: Annotated[
            int | None,
            Field(description=("Last line to return (inclusive); default: the file's last.")),
        ] = None,
        id: Annotated[
            str | None,
            Field(
                description=(
                    "Only for hits listed as 'id=...' (documents without path or line numbers); "
                    "otherwise pass path."
                )
            ),
        ] = None,
    ) -> str:
        try:
            note = freshness.check(_touched(search, path)) if freshness is not None else ""
            return with_note(note, search.read(id, path, start_line, end_line))
        except ToolInputError as exc:
            raise ToolError(str(exc)) from None

    _ = read_code  # registered by the decorator


def _add_line_tools(
    server: ReadableServer,
    search: CodeSearch,
    freshness: Freshness | None,
    read_only: ToolAnnotations,
) -> None:
    """find_references and grep_code: exact lines of the indexed text, for what a ranking
    cannot answer (every use of a name, a literal or a regex)."""
    from mcp.server.mcpserver.exceptions import ToolError

    references, grep = References(search), Grep(search)

    @server.tool(annotations=read_only, description=REFERENCES_DOC, structured_output=False)
    def find_references(
        symbol: Annotated[
            str, Field(description=("One name: Client, dial_conn, httpx.Client, Context.Next."))
        ],
        path_glob: Annotated[str | None, GLOB] = None,
        limit: Annotated[int, LINES] = LINES_LIMIT,
    ) -> str:
        try:
            note = freshness.check() if freshness is not None else ""
            return with_note(note, references.find(symbol, path_glob, limit))
        except ToolInputError as exc:
            raise ToolError(str(exc)) from None

    @server.tool(annotations=read_only, description=GREP_DOC, structured_output=False)
    def grep_code(
        pattern: Annotated[
            str,
            Field(
                description=(
                    "The text to find on one line; a regular expression when regex is true."
                )
            ),
        ],
        regex: Annotated[
            bool,
            Field(
                description=(
                    "false (default): pattern is literal text; true: a Python regular expression."
                )
            ),
        ] = False,
        path_glob: Annotated[str | None, GLOB] = None,
        limit: Annotated[int, LINES] = LINES_LIMIT,
    ) -> str:
        try:
            note = freshness.check() if freshness is not None else ""
            return with_note(note, grep.grep(pattern, regex, path_glob, limit))
        except ToolInputError as exc:
            raise ToolError(str(exc)) from None

    _ = (find_references, grep_code)  # registered by the decorators


#: what MCPServer serves besides tools; esqlog has none of it
_UNUSED_METHODS = ("prompts/", "resources/", "completion/")


def tools_only(server: Any) -> None:
    """Serve and advertise tools alone: the SDK answers prompts/list and resources/list
    (empty) and so advertises both capabilities, for which Claude Code adds three resource
    tools of its own to every prompt (about 524 tokens). Capabilities are derived from the
    request handlers present (lowlevel Server.get_capabilities), so dropping the handlers
    drops the capabilities; the SDK has no public switch for it."""
    handlers: dict[str, Any] = server._lowlevel_server._request_handlers
    for method in [m for m in handlers if m.startswith(_UNUSED_METHODS)]:
        del handlers[method]


def _touched(search: CodeSearch, path: str | None) -> str | None:
    """The indexed path read_code is asked for (None for an id or a path it refuses: the
    read itself says what is wrong)."""
    if path is None:
        return None
    try:
        return search._indexed_path(path)
    except ToolInputError:
        return None
