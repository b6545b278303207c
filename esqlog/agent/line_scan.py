"""Exact lines of the indexed text: every chunk the engine says may hold a pattern, verified
line by line in Python. Shared by find_references and grep_code.

Why the engine and then Python: the index answers "which chunks can hold this" from its
term dictionary in one request, whatever the repository's size, so no disk is read and
nothing goes stale that the index does not; but a term query cannot say on which line, nor
match a regular expression across the ``standard`` analyzer's tokens. So the engine gives
the candidates (all of them, page after page, up to MAX_CANDIDATES), and a Python ``re``
pattern gives each matching line and its number from the chunk's own text and start line.
A candidate query must never leave out a chunk that matches (the answer is exhaustive):
each one below is built to match a superset.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
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
from esqlog.agent.reading import IndexTool
from esqlog.agent.scope import PROSE_LANGUAGES, TEST_PATHS, Scope
from esqlog.agent.tokens import TokenCounter
from esqlog.engine.client import scroll_plan
from esqlog.engine.paths import index_path
from esqlog.engine.steps import Request

#: chunks verified at most per call (a name in every file of a huge repository): past it the
#: answer says how many candidates were left unread
MAX_CANDIDATES = 10_000
#: documents per scroll page
PAGE_SIZE = 1_000
DEFAULT_LIMIT = 50
#: lines per answer at most: 300 lines of MAX_LINE_CHARS stay under the 20,000-token cap
MAX_LIMIT = 300
#: a longer line is shown cut (its match may be past the cut: path:line says where)
MAX_LINE_CHARS = 160
#: an answer's tokens at most (under Claude Code's 25,000-token cut of a tool result), and
#: what its last line ("N more ... in M files; ...") is kept for
MAX_ANSWER_TOKENS = 20_000
TAIL_TOKENS = 40
#: a word the engine's term dictionary can be asked for (the ``standard`` tokenizer never
#: cuts inside a run of ASCII letters, digits and underscores)
_ASCII_RUN = re.compile(r"[A-Za-z0-9_]+")
#: Lucene's regexp syntax characters, escaped in a name put into a regexp query
_REGEXP_RESERVED = set('.?+*|{}[]()"\\#@&<>~')
_TESTS = tuple(re.compile(rx) for rx in TEST_PATHS)


@dataclass(frozen=True)
class Candidate:
    """A chunk the engine returned, with its language (prose is listed after code)."""

    chunk: Chunk
    language: str | None


@dataclass(frozen=True)
class LineHit:
    """One matching line: where it is, its text, and its group (0 first)."""

    where: str  # the path, or id=... for a document without one
    line: int
    text: str
    group: int = 0
    rank: int = 0  # 0 code, 1 tests, 2 prose: within a group, implementation first
    at: int = 0  # where in ``text`` the match starts

    def render(self) -> str:
        """``path:line: text``, the text stripped; a long line is cut around its match."""
        text = self.text.strip()
        if len(text) > MAX_LINE_CHARS:
            at = max(0, self.at - (len(self.text) - len(self.text.lstrip())))
            start = max(0, min(at - MAX_LINE_CHARS // 4, len(text) - MAX_LINE_CHARS))
            end = start + MAX_LINE_CHARS
            text = ("..." if start else "") + text[start:end] + ("..." if end < len(text) else "")
        return f"{self.where}:{self.line}: {text}"


def where(chunk: Chunk) -> str:
    """What an answer line names a chunk by: its path, or its id when it has none."""
    return chunk.path if chunk.path is not None else f"id={chunk.id}"


def file_rank(path: str | None, language: str | None) -> int:
    """0 for implementation, 1 for a test or example file, 2 for prose (docs, changelogs)."""
    if language in PROSE_LANGUAGES:
        return 2
    if path is not None and any(rx.fullmatch(path) for rx in _TESTS):
        return 1
    return 0


def matching_lines(chunk: Chunk, pattern: re.Pattern[str]) -> list[tuple[int, str, int]]:
    """(line number, line, where the match starts) of every line ``pattern`` matches."""
    out: list[tuple[int, str, int]] = []
    for number, line in enumerate(source_lines(chunk.text), start=chunk.start_line):
        found = pattern.search(line)
        if found is not None:
            out.append((number, line, found.start()))
    return out


def word_runs(text: str, shortest: int = 3) -> list[str]:
    """The ASCII word runs of ``text`` of ``shortest`` characters or more, longest first."""
    runs = {run for run in _ASCII_RUN.findall(text) if len(run) >= shortest}
    return sorted(runs, key=lambda run: (-len(run), run))


def containing_terms(runs: Iterable[str], most: int = 3) -> dict[str, Any] | None:
    """A query for the chunks holding a term that contains every one of ``runs`` (up to
    ``most``, the longest): a superset of the chunks whose text contains them all, since
    each run lies inside one token. None when there is no run (scan everything)."""
    chosen = list(runs)[:most]
    if not chosen:
        return None
    return {
        "bool": {
            "filter": [{"wildcard": {"$field": {"value": f"*{run.lower()}*"}}} for run in chosen]
        }
    }


def identifier_terms(name: str) -> dict[str, Any]:
    """A query for the chunks holding ``name`` as a whole word: a term that is the name or
    has it between characters that are not ASCII word characters (``httpx.client``, where
    the ``standard`` tokenizer keeps a dotted name whole). The term dictionary is lowercase.
    A name with characters the tokenizer drops (``$http``) asks for its word runs instead."""
    if not _ASCII_RUN.fullmatch(name):
        return containing_terms(word_runs(name, 1)) or {"match_all": {}}
    escaped = "".join("\\" + c if c in _REGEXP_RESERVED else c for c in name.lower())
    value = f"(.*[^a-z0-9_])?{escaped}([^a-z0-9_].*)?"
    return {"regexp": {"$field": {"value": value}}}


def _on_field(query: dict[str, Any], field: str) -> dict[str, Any]:
    """``query`` with its ``$field`` placeholders named ``field`` (built before the field
    is known, so the builders stay pure)."""
    if isinstance(query, dict):
        return {(field if k == "$field" else k): _on_field(v, field) for k, v in query.items()}
    if isinstance(query, list):
        return [_on_field(v, field) for v in query]
    return query


class TextScan:
    """Candidates of one index, fetched exhaustively (up to MAX_CANDIDATES)."""

    def __init__(
        self, tool: IndexTool, max_candidates: int = MAX_CANDIDATES, page_size: int = PAGE_SIZE
    ) -> None:
        self.tool, self.max_candidates, self.page_size = tool, max_candidates, page_size

    def candidates(
        self, query: dict[str, Any] | None, path_glob: str | None
    ) -> tuple[list[Candidate], int]:
        """The chunks ``query`` matches (every chunk when None) inside ``path_glob``, and how
        many the engine counts in all (more than the list when MAX_CANDIDATES cut it)."""
        tool = self.tool
        tool._check_index()
        scope = Scope(path=path_glob, tests="include", prose="include")
        match = _on_field(query, tool.field) if query is not None else {"match_all": {}}
        full = scope.query(match)
        hits: list[dict[str, Any]] = []
        body = {
            "query": full,
            "size": min(self.page_size, self.max_candidates),
            "sort": ["_doc"],
            "_source": [tool.field, PATH_FIELD, *SYMBOL_FIELDS, START_FIELD, "language", "chunk"],
        }

        def page(found: list[dict[str, Any]]) -> Any:
            """scroll_plan's page callback: keep the hits, go on until the cap."""
            hits.extend(found)
            return len(hits) < self.max_candidates
            yield  # a plan that makes no request of its own

        tool._guard(lambda: tool.engine.run(scroll_plan(tool.index, body, page, keep_alive="1m")))
        hits = hits[: self.max_candidates]
        total = len(hits)
        if total >= self.max_candidates:
            counted = tool._guard(
                lambda: tool.engine.perform(
                    Request("POST", index_path(tool.index, "_count"), body={"query": full})
                )
            )
            total = max(total, int(counted.get("count", total)))
        out = []
        for hit in hits:
            language = (hit.get("_source") or {}).get("language")
            out.append(
                Candidate(
                    chunk_of(hit, tool.field), language if isinstance(language, str) else None
                )
            )
        return out, total


def answer(
    head: str,
    hits: list[LineHit],
    limit: int,
    what: str,
    counter: TokenCounter | None = None,
    budget: int = MAX_ANSWER_TOKENS,
) -> str:
    """``head``, the first ``limit`` lines, and how many more in how many files; with a
    ``counter``, the lines stop before the answer passes ``budget`` tokens (lines of CJK text
    or minified code cost far more than their characters suggest), and the rest is counted."""
    ordered: list[LineHit] = []
    seen: set[tuple[str, int]] = set()
    for hit in sorted(hits, key=lambda h: (h.group, h.rank, h.where, h.line)):
        if (hit.where, hit.line) not in seen:  # a long line cut in parts: listed once
            seen.add((hit.where, hit.line))
            ordered.append(hit)
    lines = [head]
    spent = counter.count(head) + TAIL_TOKENS if counter is not None else 0
    for hit in ordered[:limit]:
        line = hit.render()
        if counter is not None:
            spent += counter.count(line) + 1
            if spent > budget:
                break
        lines.append(line)
    rest = ordered[len(lines) - 1 :]
    if rest:
        files = len({hit.where for hit in rest})
        more = f" or raise limit (up to {MAX_LIMIT})" if limit < MAX_LIMIT else ""
        noun = what if len(rest) != 1 else what.removesuffix("s")
        lines.append(
            f"{len(rest)} more {noun} in {files} file{'s' * (files != 1)}; "
            f"narrow with path_glob{more}"
        )
    return "\n".join(lines)


def unread_note(read: int, total: int) -> str:
    """A line saying the candidates were cut (empty when all were read)."""
    if total <= read:
        return ""
    return (
        f"read the first {read:,} of {total:,} candidate chunks: the counts below are "
        "at least these; narrow with path_glob"
    )


def check_limit(limit: int) -> None:
    if not 1 <= limit <= MAX_LIMIT:
        raise ToolInputError(
            f"limit {limit} is outside 1-{MAX_LIMIT}; pass a limit in that "
            f"range ({DEFAULT_LIMIT} is the default)"
        )


def counted(hits: list[LineHit]) -> tuple[int, int]:
    """(lines, files) of ``hits``, a line cut in parts counted once."""
    return len({(h.where, h.line) for h in hits}), len({h.where for h in hits})
