"""find_references: where a name is defined, imported and used, line by line, from the index.

Why: an agent about to change a function asks "who calls this?" and today greps the disk,
which costs a shell round trip and reads files the index already holds. The index answers
it exhaustively: the engine lists every chunk holding the name as a term (or as a part of
a dotted term, ``httpx.Client``), and each is verified case-sensitively in Python with
identifier boundaries, so the lines are exactly those ``rg -w NAME`` prints
(esqlog.agent.line_scan). Definitions come first (the chunk esqlog index named after the
name), then imports, then the other uses, implementation before tests and docs; past the
limit, how many more in how many files. A dotted or stack-frame name (``httpx.Client``,
``pkg.(*T).M``) is looked up by its last part, as esqlog.agent.names reads it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from esqlog.agent.chunks import Chunk, ToolInputError, source_lines
from esqlog.agent.line_scan import (
    DEFAULT_LIMIT,
    Candidate,
    LineHit,
    TextScan,
    answer,
    check_limit,
    counted,
    file_rank,
    identifier_terms,
    matching_lines,
    unread_note,
    where,
)
from esqlog.agent.names import named
from esqlog.agent.reading import IndexTool, shown
from esqlog.agent.tokens import TokenCounter

DEFINITION, IMPORT, USE = 0, 1, 2
MAX_NAME_CHARS = 200
_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")
#: a dotted, slashed, ``::`` or ``#`` qualified name, a Go receiver ``(*T)`` inside
_QUALIFIED_SHAPE = re.compile(r"[\w$.:/#()*-]+")
#: the keywords that open a definition in the languages esqlog index parses
_KEYWORDS = (
    r"\b(?:def|class|func|fn|type|struct|interface|trait|enum|function|module|"
    r"object|record|impl|union|macro)\b"
)
#: a line that imports: Python, Go, Java/Kotlin/Scala, JS/TS, Rust, C/C++, Ruby, PHP, C#
_IMPORT_LINE = re.compile(
    r"^\s*(?:import\b|from\s+\S+\s+import\b|use\s|using\s|#\s*include\b|require(?:_relative)?\b"
    r"|extern\s+crate\b|export\s.*\bfrom\b|(?:const|let|var)\s.*=\s*require\()"
)
#: the first line of a multi-line import (``import (`` in Go, ``from x import (`` in Python,
#: ``import {`` in JS), whose following lines import until the closing bracket
_IMPORT_OPEN = re.compile(r"^\s*(?:import|from\s+\S+\s+import|export)\s*[({][^)}]*$")
#: the line that closes it: a bracket first or last (``)``, ``    b)``, ``} from "x";``)
_IMPORT_CLOSE = re.compile(r"^\s*[)}]|[)}][^()\[\]{}]*$")


@dataclass(frozen=True)
class Wanted:
    """The name whose references are listed, and its patterns."""

    name: str
    asked: str  # as the agent wrote it

    @property
    def word(self) -> re.Pattern[str]:
        """The name as a whole identifier (``rg -w``'s boundaries)."""
        return re.compile(rf"(?<!\w){re.escape(self.name)}(?!\w)")

    @property
    def defined(self) -> re.Pattern[str]:
        """A line that defines it by keyword (``class Client(``, ``func (c *Context) Next(``)."""
        return re.compile(rf"{_KEYWORDS}.*?(?<!\w){re.escape(self.name)}(?!\w)")

    @property
    def assigned(self) -> re.Pattern[str]:
        """A top-level definition by assignment (``DEFAULT_TIMEOUT = ...``, ``var X = ``,
        Go's typed ``var X T = ...``)."""
        return re.compile(
            r"^\s*(?:(?:export|const|var|let|val|static|final|public|private)"
            rf"\s+)*{re.escape(self.name)}(?:\s+[\w.*\[\]]+)?\s*(?::[^=]*)?"
            r":?=(?!=)"
        )


def reference_name(symbol: str) -> Wanted:
    """The identifier ``symbol`` names: itself, or the last part of a qualified name
    (``httpx.Client`` -> ``Client``, ``pkg.(*T).M`` -> ``M``, ``Class#method``)."""
    text = symbol.strip().strip("`")
    text = text.removesuffix("()")
    if not text:
        raise ToolInputError("symbol is empty; pass a name such as Client or httpx.Client")
    if len(text) > MAX_NAME_CHARS:
        raise ToolInputError(
            f"symbol of {len(text)} characters is too long; pass one name "
            f"of at most {MAX_NAME_CHARS}"
        )
    if _IDENTIFIER.fullmatch(text):
        return Wanted(text, symbol)
    if _QUALIFIED_SHAPE.fullmatch(text):
        names = named(text).names
        last = _IDENTIFIER.findall(text)
        if names or last:
            return Wanted(names[0] if names else last[-1], symbol)
    raise ToolInputError(
        f"symbol {shown(symbol)} is not a name; pass one identifier or "
        "dotted name (Client, httpx.Client, Context.Next); grep_code "
        "searches any text"
    )


def classify(chunk: Chunk, wanted: Wanted) -> list[tuple[int, str, int, int]]:
    """(line, text, where the name starts, group) of every line of ``chunk`` using the
    name: the line that defines it when esqlog index named the chunk after it (or a
    top-level assignment to it), the lines that import it, and the rest."""
    lines = matching_lines(chunk, wanted.word)
    if not lines:
        return []
    named_so = chunk.symbol is not None and (
        chunk.symbol == wanted.name or chunk.symbol.endswith("." + wanted.name)
    )
    definition: int | None = None
    if named_so:
        definition = next((n for n, line, _ in lines if wanted.defined.search(line)), None)
    elif chunk.symbol is None:
        definition = next((n for n, line, _ in lines if wanted.assigned.search(line)), None)
    imports = _import_lines(chunk)
    out: list[tuple[int, str, int, int]] = []
    for number, line, at in lines:
        group = DEFINITION if number == definition else IMPORT if number in imports else USE
        out.append((number, line, at, group))
    return out


def _import_lines(chunk: Chunk) -> set[int]:
    """Numbers of the chunk's lines that import (inside a multi-line import too)."""
    found: set[int] = set()
    inside = False
    for number, line in enumerate(source_lines(chunk.text), start=chunk.start_line):
        if inside:
            found.add(number)
            inside = not _IMPORT_CLOSE.search(line)
        elif _IMPORT_OPEN.match(line):
            found.add(number)
            inside = True
        elif _IMPORT_LINE.match(line):
            found.add(number)
    return found


def reference_hits(candidates: list[Candidate], wanted: Wanted) -> list[LineHit]:
    """Every line of the candidates that uses the name, grouped."""
    hits: list[LineHit] = []
    for candidate in candidates:
        chunk = candidate.chunk
        rank = file_rank(chunk.path, candidate.language)
        for number, line, at, group in classify(chunk, wanted):
            hits.append(LineHit(where(chunk), number, line, group, rank, at))
    return hits


def references_answer(
    wanted: Wanted,
    hits: list[LineHit],
    limit: int,
    note: str = "",
    path_glob: str | None = None,
    counter: TokenCounter | None = None,
) -> str:
    """The answer's text: a head line with the counts, the lines, how many more."""
    label = (
        wanted.name
        if wanted.asked.strip() == wanted.name
        else (f"{wanted.name} (the last part of {wanted.asked.strip()})")
    )
    under = f" under {path_glob!r}" if path_glob else ""
    if not hits:
        zero = f"no references to {label} in the index{under}"
        return f"{note}\n{zero}" if note else zero
    lines, files = counted(hits)
    groups = [counted([h for h in hits if h.group == g])[0] for g in (DEFINITION, IMPORT, USE)]
    head = (
        f"{lines} references to {label}{under} in {files} file{'s' * (files != 1)}: "
        f"{_plural(groups[0], 'definition')}, {_plural(groups[1], 'import')}, "
        f"{_plural(groups[2], 'use')} (definitions, imports, then uses; code before "
        "tests and docs)"
    )
    if note:
        head = f"{note}\n{head}"
    return answer(head, hits, limit, "references", counter)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' * (count != 1)}"


class References:
    """find_references on one index."""

    def __init__(self, tool: IndexTool, scan: TextScan | None = None) -> None:
        self.scan = scan if scan is not None else TextScan(tool)

    def find(self, symbol: str, path_glob: str | None = None, limit: int = DEFAULT_LIMIT) -> str:
        """Every line that uses ``symbol`` (its last part when qualified), definitions
        first, up to ``limit`` lines, then how many more."""
        check_limit(limit)
        wanted = reference_name(symbol)
        candidates, total = self.scan.candidates(identifier_terms(wanted.name), path_glob)
        hits = reference_hits(candidates, wanted)
        return references_answer(
            wanted,
            hits,
            limit,
            unread_note(len(candidates), total),
            path_glob,
            self.scan.tool.counter,
        )
