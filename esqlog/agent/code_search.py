"""The logic behind the MCP tools: esqlog-ranked hits packed into a token budget, and exact
numbered lines of indexed files. Transport-free so it is testable on its own.

Everything here only reads the cluster (search, get, scroll); the index is the only source
of code, never the filesystem. Bad input raises ``ToolInputError`` with one line naming
the problem and the fix, which the server hands to the agent as a tool error. Answers stay
under Claude Code's 25,000-token cut of a tool result: search_code's budget is capped at
MAX_BUDGET and read_code stops at MAX_READ_TOKENS, saying where to continue.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Literal

from esqlog.agent.chunks import (
    END_FIELD,
    PATH_FIELD,
    START_FIELD,
    SYMBOL_FIELDS,
    Chunk,
    ToolInputError,
    chunk_of,
    source_lines,
)
from esqlog.agent.names import (
    NamedQuery,
    closest_clause,
    definition_clauses,
    is_definition,
    named,
)
from esqlog.agent.packing import SUMMARY_RESERVE, chunk_cost, pack, pack_listing, pack_ranks
from esqlog.agent.queries import agent_query
from esqlog.agent.scope import Scope
from esqlog.agent.tokens import TokenCounter
from esqlog.calibration.calibrate import check_calibration_plan
from esqlog.calibration.record import Calibration
from esqlog.engine.client import Engine, scroll_plan
from esqlog.engine.failures import describe_failure, error_status, is_client_error
from esqlog.engine.paths import index_path
from esqlog.engine.steps import Plan, Request
from esqlog.errors import EsqlogError
from esqlog.indexing.target import MARKER

__all__ = ["SUMMARY_RESERVE", "Chunk", "CodeSearch", "ToolInputError", "chunk_cost",
           "chunk_of", "pack", "pack_listing", "pack_ranks", "search_kwargs", "source_lines"]

MIN_BUDGET = 200
#: under Claude Code's default 25,000-token cut of one tool result (it warns above 10,000)
MAX_BUDGET = 20_000
#: the default listing: up to 50 hits within 2,000 tokens, the first 10 with their signature
#: and doc lines, the rest one line each (packing.OUTLINED). With 20 outlined hits the gold
#: was listed for 82.1% of the Go queries, and no budget could raise that; the one-line
#: tail lists 45 on average and the gold for 84.3% (docs/benchmarks/token-recall.md)
DEFAULT_BUDGET = 2_000
MAX_LIMIT = 200
DEFAULT_LIMIT = 50
#: read_code's own cap on one answer (the same reason as MAX_BUDGET)
MAX_READ_TOKENS = 20_000
#: a read that names no line range (a whole file) is budgeted like a search: the first
#: WHOLE_READ_TOKENS, then where to continue (a whole gin.go was 17,579 tokens in one answer)
WHOLE_READ_TOKENS = 4_000
DETAILS = ("list", "code")
#: longer paths are refused (Linux's PATH_MAX); error messages repeat at most SHOWN_CHARS
MAX_PATH_CHARS = 4096
SHOWN_CHARS = 200
#: documents per scroll page when reading a file by path
PATH_PAGE = 1000


def search_kwargs(flavor: str, index: str, field: str, query: str, limit: int,
                  scope: Scope | None = None,
                  symbols: Sequence[str] | NamedQuery = ()) -> dict[str, Any]:
    """The match query (inside the scope's filters) as each client's search() takes it
    (opensearch-py: a body only). The definitions of the names the query spells
    (``symbols``: esqlog.agent.names.named, or bare names) are listed before the hits that
    only mention them: constant scores far above what a match scores are added
    (esqlog.agent.names.definition_clauses), so among the definitions and among the rest the
    match's order holds. Why: asked for ``dialConn`` or ``httpx.Client``, the agent wants the
    definition, not its shorter callers or the tests, which BM25's length norm puts first.
    The match set is the match's (the clauses are optional)."""
    source = [field, PATH_FIELD, *SYMBOL_FIELDS, START_FIELD, END_FIELD]
    named_query = symbols if isinstance(symbols, NamedQuery) else NamedQuery(tuple(symbols))
    match: dict[str, Any] = {"match": {field: query}}
    clauses = definition_clauses(named_query)
    if clauses:
        match = {"bool": {"must": [match], "should": clauses}}
    request: dict[str, Any] = {"query": scope.query(match) if scope else match, "size": limit,
                               "_source": source}
    if flavor == "opensearch":
        return {"index": index, "body": request}
    return {"index": index, "query": request["query"], "size": limit, "source": source}


def shown(text: str) -> str:
    """A path or id as an error message repeats it: quoted, and cut past SHOWN_CHARS (an
    agent that sent 100,000 characters does not need them back)."""
    return repr(text) if len(text) <= SHOWN_CHARS else repr(text[:SHOWN_CHARS]) + "..."


def numbered(lines: list[tuple[int, str]]) -> str:
    """``  12| code``: what read_code answers, so an agent can cite and edit by line."""
    width = len(str(lines[-1][0])) if lines else 1
    return "\n".join(f"{n:>{width}}|" + (f" {line}" if line else "") for n, line in lines)


def _collect(found: list[dict[str, Any]], hits: list[dict[str, Any]]) -> Plan[bool]:
    """scroll_plan's page callback: keep every hit, ask for the next page."""
    found.extend(hits)
    return True
    yield  # a plan that makes no request of its own


class CodeSearch:
    """search/read on one calibrated index, through the wrapped (q-log) client."""

    def __init__(self, engine: Engine, calibration: Calibration, index: str, field: str,
                 counter: TokenCounter, url: str | None = None,
                 mode: Literal["boost", "identifiers"] = "boost",
                 page_size: int = PATH_PAGE) -> None:
        """``mode``: the wrapper's ``boost`` (native match set) or ``identifiers`` (query
        words also match inside identifiers; the calibration needs --identifiers).
        ``page_size``: documents per scroll page of read_code(path=...)."""
        from esqlog.wrapper import wrap

        self.engine, self.calibration, self.index, self.field = engine, calibration, index, field
        self.counter, self.url, self.page_size = counter, url, page_size
        self.client = wrap(engine.client, calibration, mode=mode)
        self._checked = False
        self._root_folder: str | None = None  # the indexed folder, once looked up

    def search(self, query: str, max_tokens: int = DEFAULT_BUDGET, limit: int = DEFAULT_LIMIT,
               detail: str = "list", scope: Scope | None = None) -> str:
        """esqlog's ranking of ``query`` (a match on the calibrated field, its text as
        esqlog.agent.queries prepares an agent's, within ``scope``: no prose by default): a
        listing of the hits (``detail="list"``) or their whole chunks (``"code"``), within
        ``max_tokens``."""
        from esqlog.scoring.query_text import check_query_text

        if not MIN_BUDGET <= max_tokens <= MAX_BUDGET:
            raise ToolInputError(f"max_tokens {max_tokens} is outside {MIN_BUDGET}-{MAX_BUDGET}; "
                                 f"pass a budget in that range ({DEFAULT_BUDGET} is the default)")
        if not 1 <= limit <= MAX_LIMIT:
            raise ToolInputError(f"limit {limit} is outside 1-{MAX_LIMIT}; pass a limit in "
                                 "that range")
        if detail not in DETAILS:
            raise ToolInputError(f"detail {detail!r} is not one of list, code; pass \"list\" "
                                 "(locations, signatures) or \"code\" (whole chunks)")
        self._guard(lambda: check_query_text(query))
        text = agent_query(query) or query
        self._check_index()
        names = named(query)
        response = self._guard(lambda: self.client.search(**search_kwargs(
            self.engine.flavor, self.index, self.field, text, limit,
            Scope() if scope is None else scope, names)))
        chunks = [chunk_of(h, self.field) for h in response["hits"]["hits"]]
        note = ""
        if names.only_name and not any(is_definition(c.symbol, names) for c in chunks):
            note = self._no_definition(names)
            if not any(self._mentioned(name) for name in names.names):
                return note + "\nno indexed text holds it either."
        packer = pack_listing if detail == "list" else pack_ranks
        listing = packer(chunks, max_tokens - self.counter.count(note) if note else max_tokens,
                         self.counter)[0]
        return f"{note}\n{listing}" if note else listing

    def _no_definition(self, names: NamedQuery) -> str:
        """The answer's first line when a name-only query has no definition in the index,
        with the symbols spelled most like it."""
        body = {"query": closest_clause(names), "size": 20, "_source": [SYMBOL_FIELDS[0]]}
        hits = self._guard(lambda: self.engine.perform(Request(
            "POST", index_path(self.index, "_search"), body=body)))["hits"]["hits"]
        close: list[str] = []
        for hit in hits:
            symbol = (hit.get("_source") or {}).get(SYMBOL_FIELDS[0])
            if isinstance(symbol, str) and symbol not in close:
                close.append(symbol)
        shown = ", ".join(close[:5]) if close else "none"
        return f"no definition named {' / '.join(names.names)} in this index; closest: {shown}"

    def _mentioned(self, name: str) -> bool:
        """Whether any indexed term holds the name: ``httptest.NewRecorder`` is one token
        under the ``standard`` analyzer, so a term wildcard over the field's dictionary
        (lowercased as the analyzer does; a name is a word, so no wildcard character of its
        own). Asked only when nothing defines a name-only query: one request, no scoring."""
        body = {"query": {"wildcard": {self.field: {"value": f"*{name.lower()}*"}}},
                "size": 0, "track_total_hits": 1}
        found = self._guard(lambda: self.engine.perform(Request(
            "POST", index_path(self.index, "_search"), body=body)))
        total = found["hits"]["total"]
        return (total["value"] if isinstance(total, dict) else int(total)) > 0

    def read(self, id: str | None, path: str | None, start_line: int | None,
             end_line: int | None) -> str:
        """Lines ``start_line``..``end_line`` (inclusive) of one document or file, numbered,
        from the index; cut at MAX_READ_TOKENS (WHOLE_READ_TOKENS when no range is given) with
        a last line saying where to go on. ``path`` may be absolute (inside the indexed
        folder) or ``./x``; anything outside the folder is refused."""
        if (id is None) == (path is None):
            raise ToolInputError("pass exactly one of id or path")
        if start_line is not None and end_line is not None and start_line > end_line:
            raise ToolInputError(f"start_line {start_line} is after end_line {end_line}; pass "
                                 "start_line <= end_line")
        self._check_index()
        if path is not None:
            path = self._indexed_path(path)
        chunks = [self._get(id)] if id is not None else self._by_path(path or "")
        first = chunks[0].start_line
        last = chunks[-1].end_line
        start = first if start_line is None else start_line
        end = last if end_line is None else end_line
        if not first <= start <= end <= last:
            where = f"id {shown(id or '')}" if id is not None else f"path {shown(path or '')}"
            raise ToolInputError(f"lines {start}-{end} are outside {where} (lines "
                                 f"{first}-{last}); pass start_line <= end_line within them")
        lines = [(number, line) for chunk in chunks
                 for number, line in enumerate(source_lines(chunk.text), start=chunk.start_line)
                 if start <= number <= end]
        cap = WHOLE_READ_TOKENS if start_line is None and end_line is None else MAX_READ_TOKENS
        return self._capped(lines, f"id={id!r}" if id is not None else f"path={path!r}", end,
                            cap)

    def _indexed_path(self, path: str) -> str:
        """``path`` as esqlog index stored it: relative to the indexed folder, normalized.
        Agents' own tools use absolute paths and ``./x``; an absolute path inside the folder
        the index was built from (the index's marker names it) is made relative, and a path
        that leaves the folder is refused, whichever form it takes."""
        if len(path) > MAX_PATH_CHARS:
            raise ToolInputError(f"path of {len(path)} characters is too long; pass a path "
                                 "from search_code")
        if not path.strip():
            raise ToolInputError("path is empty; pass a path from search_code")
        if posixpath.isabs(path):
            root = self._root()
            if root is None:
                raise ToolInputError(f"absolute path {shown(path)} but index {self.index!r} "
                                     "does not name its folder; pass the path relative to it, "
                                     "as search_code lists it")
            relative = posixpath.relpath(posixpath.normpath(path), root)
        else:
            relative = posixpath.normpath(path)
        if relative == ".." or relative.startswith("../") or posixpath.isabs(relative):
            where = self._root() or "the indexed folder"
            raise ToolInputError(f"path {shown(path)} is outside {where}; pass a path inside "
                                 "it, as search_code lists it")
        return relative

    def _root(self) -> str | None:
        """The folder esqlog index read (its marker in the index's mapping), looked up once."""
        if self._root_folder is None:
            found = self._guard(lambda: self.engine.perform(Request(
                "GET", index_path(self.index, "_mapping"))))
            roots = [((body.get("mappings") or {}).get("_meta") or {}).get(MARKER, {})
                     .get("root") for body in found.values() if isinstance(body, dict)]
            root = next((r for r in roots if isinstance(r, str) and r), "")
            self._root_folder = posixpath.normpath(root) if root else ""
        return self._root_folder or None

    def _capped(self, lines: list[tuple[int, str]], target: str, end: int,
                cap: int = MAX_READ_TOKENS) -> str:
        """All the lines when they fit ``cap`` tokens, else the longest prefix that fits
        with a note naming the next start_line (found by bisection on the real count)."""
        text = numbered(lines)
        if self.counter.count(text) <= cap:
            return text

        def cut(keep: int) -> str:
            rest = lines[keep][0]
            return (numbered(lines[:keep]) + f"\n[lines {rest}-{end} not shown: over "
                    f"{cap} tokens; read_code({target}, start_line={rest})]")

        low, high = 0, len(lines) - 1  # cut(low) fits (a note alone does), cut(high + 1) not
        while low < high:
            mid = (low + high + 1) // 2
            if self.counter.count(cut(mid)) <= cap:
                low = mid
            else:
                high = mid - 1
        return cut(low)

    def _get(self, id: str) -> Chunk:
        if not id.strip():
            raise ToolInputError("id is empty; pass an id from search_code")
        try:
            found = self.engine.perform(Request(
                "GET", index_path(self.index, "_doc", id)))
        except Exception as exc:
            if error_status(exc) == 404:
                raise ToolInputError(f"no document with id {shown(id)} in index {self.index!r}; "
                                     "pass an id from search_code") from None
            raise self._error(exc) from None
        if not found.get("found"):
            raise ToolInputError(f"no document with id {shown(id)} in index {self.index!r}; "
                                 "pass an id from search_code")
        return chunk_of(found, self.field)

    def _by_path(self, path: str) -> list[Chunk]:
        """Every chunk of one file (a term query: path is matched exactly), by line; all of
        them, page after page of the scroll API (a file may have thousands of chunks)."""
        if not path.strip():
            raise ToolInputError("path is empty; pass a path from search_code")
        hits: list[dict[str, Any]] = []
        body = {"query": {"term": {PATH_FIELD: path}}, "size": self.page_size,
                "sort": ["_doc"],
                "_source": [self.field, PATH_FIELD, *SYMBOL_FIELDS, START_FIELD, "chunk"]}
        self._guard(lambda: self.engine.run(scroll_plan(
            self.index, body, lambda page: _collect(hits, page), keep_alive="1m")))
        chunks = whole_lines(hits, self.field)
        if not chunks:
            raise ToolInputError(f"no document with path {shown(path)} in index {self.index!r}; "
                                 "pass a path from search_code (or an id)")
        if len(chunks) > 1 and not all(c.lines_known for c in chunks):
            raise ToolInputError(f"path {shown(path)} has {len(chunks)} documents without line "
                                 "numbers; read them by id")
        return chunks

    def _check_index(self) -> None:
        """Once per server: the calibration is this index's (a tool error until it is)."""
        if not self._checked:
            self._guard(lambda: self.engine.run(
                check_calibration_plan(self.calibration, self.index)))
            self._checked = True

    def _guard(self, call: Any) -> Any:
        try:
            return call()
        except ToolInputError:
            raise
        except EsqlogError as exc:
            raise ToolInputError(str(exc)) from None
        except Exception as exc:
            raise self._error(exc) from None

    def _error(self, exc: Exception) -> ToolInputError | Exception:
        if is_client_error(exc):
            return ToolInputError(str(describe_failure(exc, self.url)))
        return exc


def _number(hit: dict[str, Any]) -> int:
    """esqlog index's chunk number (0 when absent): the order of a cut line's parts."""
    number = (hit.get("_source") or {}).get("chunk")
    return number if isinstance(number, int) and not isinstance(number, bool) else 0


def whole_lines(hits: list[dict[str, Any]], field: str) -> list[Chunk]:
    """A file's documents as chunks in line order (chunk number within a line), the parts
    of a line esqlog index cut (longer than --max-chunk-chars: a part that does not end
    with a newline is continued by the next) joined again, so a file reads back line for
    line whatever order the scroll returned them in."""
    out: list[Chunk] = []
    for hit in sorted(hits, key=lambda h: (chunk_of(h, field).start_line, _number(h))):
        chunk = chunk_of(hit, field)
        last = out[-1] if out else None
        if (last is not None and last.text and not last.text.endswith("\n")
                and chunk.start_line == last.end_line):
            out[-1] = replace(last, text=last.text + chunk.text)
        else:
            out.append(chunk)
    return out
