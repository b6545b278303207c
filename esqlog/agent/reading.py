"""read_code's logic: exact numbered lines of an indexed file, from the index alone.

Why from the index and not the disk: what search_code listed is what the index holds, so a
read of its path and lines gives those lines, whatever the disk holds now (the index's own
freshness is esqlog index's). Paths are taken as agents pass them (absolute inside the
indexed folder, ``./x``) and refused when they leave it. An answer stays under Claude Code's
25,000-token cut: MAX_READ_TOKENS for a range, WHOLE_READ_TOKENS for a whole file, then a
last line saying where to continue. Bad input raises ``ToolInputError`` with one line naming
the problem and the fix.
"""

from __future__ import annotations

import posixpath
from dataclasses import replace
from typing import Any

from esqlog.agent.chunks import (
    PATH_FIELD,
    START_FIELD,
    SYMBOL_FIELDS,
    Chunk,
    ToolInputError,
    chunk_of,
    source_lines,
)
from esqlog.agent.tokens import TokenCounter
from esqlog.calibration.freshness import check_calibration_plan
from esqlog.calibration.record import Calibration
from esqlog.engine.client import Engine, scroll_plan
from esqlog.engine.failures import (
    describe_failure,
    error_status,
    is_client_error,
    unreachable_reason,
)
from esqlog.engine.paths import index_path
from esqlog.engine.steps import Plan, Request
from esqlog.errors import EsqlogError, redact
from esqlog.indexing.target import MARKER

#: read_code's own cap on one answer (the same reason as MAX_BUDGET)
MAX_READ_TOKENS = 20_000
#: a read that names no line range (a whole file) is budgeted like a search: the first
#: WHOLE_READ_TOKENS, then where to continue (a whole gin.go was 17,579 tokens in one answer)
WHOLE_READ_TOKENS = 4_000
#: longer paths are refused (Linux's PATH_MAX); error messages repeat at most SHOWN_CHARS
MAX_PATH_CHARS = 4096
SHOWN_CHARS = 200
#: documents per scroll page when reading a file by path
PATH_PAGE = 1000


def shown(text: str) -> str:
    """A path or id as an error message repeats it: quoted, and cut past SHOWN_CHARS (an
    agent that sent 100,000 characters does not need them back)."""
    return repr(text) if len(text) <= SHOWN_CHARS else repr(text[:SHOWN_CHARS]) + "..."


def numbered(lines: list[tuple[int, str]]) -> str:
    """``  12<tab>code``: what read_code answers, so an agent can cite and edit by line. The
    layout of ``cat -n`` and of the agents' own file-reading tools: a tab costs no more
    tokens than the space it replaces, where ``12| code`` paid for the bar (7-9% of a read
    of Go, Python or Java code under o200k_base)."""
    width = len(str(lines[-1][0])) if lines else 1
    return "\n".join(f"{n:>{width}}\t{line}" for n, line in lines)


def _collect(found: list[dict[str, Any]], hits: list[dict[str, Any]]) -> Plan[bool]:
    """scroll_plan's page callback: keep every hit, ask for the next page."""
    found.extend(hits)
    return True
    yield  # a plan that makes no request of its own


class IndexTool:
    """One calibrated index as the agent's tools read it: the calibration checked once, and
    every failure turned into a ToolInputError the agent can act on."""

    def __init__(
        self,
        engine: Engine,
        calibration: Calibration,
        index: str,
        field: str,
        counter: TokenCounter,
        url: str | None = None,
        page_size: int = PATH_PAGE,
    ) -> None:
        """``page_size``: documents per scroll page of read_code(path=...)."""
        self.engine, self.calibration, self.index, self.field = engine, calibration, index, field
        self.counter, self.url, self.page_size = counter, url, page_size
        self._checked = False
        self._root_folder: str | None = None  # the indexed folder, once looked up

    def _check_index(self) -> None:
        """Once per server: the calibration is this index's (a tool error until it is)."""
        if not self._checked:
            self._guard(
                lambda: self.engine.run(check_calibration_plan(self.calibration, self.index))
            )
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
        reason = unreachable_reason(exc)
        if reason is not None:  # a stopped engine: what to do, in one line
            return ToolInputError(
                f"search engine at {redact(self.url or '?')} unreachable: "
                f"{reason}; start it or check --url"
            )
        if is_client_error(exc):
            return ToolInputError(str(describe_failure(exc, self.url)))
        return exc


class FileReader(IndexTool):
    """read_code on one index."""

    def read(
        self, id: str | None, path: str | None, start_line: int | None, end_line: int | None
    ) -> str:
        """Lines ``start_line``..``end_line`` (inclusive) of one document or file, numbered,
        from the index; cut at MAX_READ_TOKENS (WHOLE_READ_TOKENS when no range is given) with
        a last line saying where to go on. ``path`` may be absolute (inside the indexed
        folder) or ``./x``; anything outside the folder is refused."""
        if (id is None) == (path is None):
            raise ToolInputError("pass exactly one of id or path")
        if start_line is not None and end_line is not None and start_line > end_line:
            raise ToolInputError(
                f"start_line {start_line} is after end_line {end_line}; pass start_line <= end_line"
            )
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
            raise ToolInputError(
                f"lines {start}-{end} are outside {where} (lines "
                f"{first}-{last}); pass start_line <= end_line within them"
            )
        lines = [
            (number, line)
            for chunk in chunks
            for number, line in enumerate(source_lines(chunk.text), start=chunk.start_line)
            if start <= number <= end
        ]
        cap = WHOLE_READ_TOKENS if start_line is None and end_line is None else MAX_READ_TOKENS
        return capped(
            lines, f"id={id!r}" if id is not None else f"path={path!r}", end, cap, self.counter
        )

    def _indexed_path(self, path: str) -> str:
        """``path`` as esqlog index stored it: relative to the indexed folder, normalized.
        Agents' own tools use absolute paths and ``./x``; an absolute path inside the folder
        the index was built from (the index's marker names it) is made relative, and a path
        that leaves the folder is refused, whichever form it takes."""
        if len(path) > MAX_PATH_CHARS:
            raise ToolInputError(
                f"path of {len(path)} characters is too long; pass a path from search_code"
            )
        if not path.strip():
            raise ToolInputError("path is empty; pass a path from search_code")
        if posixpath.isabs(path):
            root = self._root()
            if root is None:
                raise ToolInputError(
                    f"absolute path {shown(path)} but index {self.index!r} "
                    "does not name its folder; pass the path relative to it, "
                    "as search_code lists it"
                )
            relative = posixpath.relpath(posixpath.normpath(path), root)
        else:
            relative = posixpath.normpath(path)
        if relative == ".." or relative.startswith("../") or posixpath.isabs(relative):
            where = self._root() or "the indexed folder"
            raise ToolInputError(
                f"path {shown(path)} is outside {where}; pass a path inside "
                "it, as search_code lists it"
            )
        return relative

    def _root(self) -> str | None:
        """The folder esqlog index read (its marker in the index's mapping), looked up once."""
        if self._root_folder is None:
            found = self._guard(
                lambda: self.engine.perform(Request("GET", index_path(self.index, "_mapping")))
            )
            roots = [
                ((body.get("mappings") or {}).get("_meta") or {}).get(MARKER, {}).get("root")
                for body in found.values()
                if isinstance(body, dict)
            ]
            root = next((r for r in roots if isinstance(r, str) and r), "")
            self._root_folder = posixpath.normpath(root) if root else ""
        return self._root_folder or None

    def _get(self, id: str) -> Chunk:
        if not id.strip():
            raise ToolInputError("id is empty; pass an id from search_code")
        try:
            found = self.engine.perform(Request("GET", index_path(self.index, "_doc", id)))
        except Exception as exc:
            if error_status(exc) == 404:
                raise ToolInputError(
                    f"no document with id {shown(id)} in index {self.index!r}; "
                    "pass an id from search_code"
                ) from None
            raise self._error(exc) from None
        if not found.get("found"):
            raise ToolInputError(
                f"no document with id {shown(id)} in index {self.index!r}; "
                "pass an id from search_code"
            )
        return chunk_of(found, self.field)

    def _by_path(self, path: str) -> list[Chunk]:
        """Every chunk of one file (a term query: path is matched exactly), by line; all of
        them, page after page of the scroll API (a file may have thousands of chunks)."""
        if not path.strip():
            raise ToolInputError("path is empty; pass a path from search_code")
        hits: list[dict[str, Any]] = []
        body = {
            "query": {"term": {PATH_FIELD: path}},
            "size": self.page_size,
            "sort": ["_doc"],
            "_source": [self.field, PATH_FIELD, *SYMBOL_FIELDS, START_FIELD, "chunk"],
        }
        self._guard(
            lambda: self.engine.run(
                scroll_plan(self.index, body, lambda page: _collect(hits, page), keep_alive="1m")
            )
        )
        chunks = whole_lines(hits, self.field)
        if not chunks:
            raise ToolInputError(
                f"no document with path {shown(path)} in index {self.index!r}; "
                "pass a path from search_code (or an id)"
            )
        if len(chunks) > 1 and not all(c.lines_known for c in chunks):
            raise ToolInputError(
                f"path {shown(path)} has {len(chunks)} documents without line "
                "numbers; read them by id"
            )
        return chunks


def capped(
    lines: list[tuple[int, str]], target: str, end: int, cap: int, counter: TokenCounter
) -> str:
    """All the lines when they fit ``cap`` tokens, else the longest prefix that fits
    with a note naming the next start_line (found by bisection on the real count)."""
    text = numbered(lines)
    if counter.count(text) <= cap:
        return text

    def cut(keep: int) -> str:
        rest = lines[keep][0]
        return (
            numbered(lines[:keep]) + f"\n[lines {rest}-{end} not shown: over "
            f"{cap} tokens; read_code({target}, start_line={rest})]"
        )

    low, high = 0, len(lines) - 1  # cut(low) fits (a note alone does), cut(high + 1) not
    while low < high:
        mid = (low + high + 1) // 2
        if counter.count(cut(mid)) <= cap:
            low = mid
        else:
            high = mid - 1
    return cut(low)


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
        if (
            last is not None
            and last.text
            and not last.text.endswith("\n")
            and chunk.start_line == last.end_line
        ):
            out[-1] = replace(last, text=last.text + chunk.text)
        else:
            out.append(chunk)
    return out
