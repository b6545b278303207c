"""A file cut into documents: one per function, method and class, the rest kept too.

The chunks of a file are consecutive, non-overlapping line ranges that cover every line
that has code or text in it: joined in order they give the file back. Why: an agent's
``read_code(path=...)`` rebuilds a file from its chunks, and code outside any symbol
(imports, constants, a script's top level) must stay findable. So:

* a function (with its doc comment, decorators or attributes just above it) is one chunk;
* a class is cut into its methods, each one chunk, and the class's own lines (header,
  fields) as chunks named after the class; a class without methods is one chunk;
* lines outside every symbol are chunks of their own (symbol None, kind ``code``);
  a run of lines without any letter or digit (a closing brace or ``end``, blank lines) joins the
  chunk before it instead of standing alone;
* a chunk longer than ``max_lines`` lines or ``max_chars`` characters is split into
  windows (cut at a blank line where one is near), so every chunk fits an agent's budget;
  a single line longer than ``max_chars`` is cut into parts that all carry its number;
* a file in a language without a grammar is cut into such windows only (kind ``text``).

Lines are counted on ``\\n`` alone, as tree-sitter counts rows (the caller normalizes
``\\r\\n``), so start/end lines match an editor's.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from esqlog.indexing.languages import LEADING, QUERIES, WRAPPERS, parser, symbol_query

CHUNKER_VERSION = 1  # bump when the same file would be cut differently
_WORD = re.compile(r"\b(?!end\b)\w")  # a letter or digit, Ruby's closing ``end`` aside


@dataclass(frozen=True)
class ChunkLimits:
    """How large one document may get (documented in docs/indexing.md and --help)."""

    max_lines: int = 150
    max_chars: int = 12_000

    def signature(self) -> str:
        """Part of every file's stored hash: other limits re-cut (and re-index) every file."""
        return f"chunker-v{CHUNKER_VERSION}:{self.max_lines}:{self.max_chars}"


@dataclass(frozen=True)
class Chunk:
    """One document's worth of a file (lines are 1-based and inclusive)."""

    start_line: int
    end_line: int
    symbol: str | None
    kind: str
    content: str


@dataclass
class _Symbol:
    start: int  # first row (0-based) including its leading comments
    end: int
    name: str
    kind: str  # function | method | class | module | type
    start_byte: int
    end_byte: int
    children: list[_Symbol] = field(default_factory=list)


@dataclass(frozen=True)
class _Piece:
    start: int
    end: int
    symbol: str | None
    kind: str


def split_rows(text: str) -> list[str]:
    """The file's lines on ``\\n`` alone (a final newline does not start another line)."""
    rows = text.split("\n")
    if rows and rows[-1] == "":
        rows.pop()
    return rows


def chunk_text(text: str, language: str, limits: ChunkLimits | None = None) -> list[Chunk]:
    """Cut ``text`` (newlines normalized to ``\\n``) into chunks; [] when it has no words."""
    limits = limits or ChunkLimits()
    rows = split_rows(text)
    if not rows:
        return []
    if language in QUERIES:
        symbols = find_symbols(text.encode("utf-8"), language)
        pieces = _partition(0, len(rows) - 1, symbols, None, "code")
    else:
        pieces = [_Piece(0, len(rows) - 1, None, "text")]
    chunks: list[Chunk] = []
    offsets = list(itertools.accumulate((len(row) + 1 for row in rows), initial=0))
    for piece in _merge_wordless(pieces, rows):
        fits = (
            piece.end - piece.start < limits.max_lines
            and offsets[piece.end + 1] - offsets[piece.start] <= limits.max_chars
        )
        spans = (
            [(piece.start, piece.end)] if fits else _windows(piece.start, piece.end, rows, limits)
        )
        for start, end in spans:
            content = "\n".join(rows[start : end + 1]) + "\n"
            for part in _cut_line(content, limits.max_chars) if start == end else [content]:
                chunks.append(Chunk(start + 1, end + 1, piece.symbol, piece.kind, part))
    return chunks


def _cut_line(content: str, max_chars: int) -> list[str]:
    """One line longer than ``max_chars`` as consecutive parts of at most ``max_chars``
    (cut after a space when one is in a part's second half), all with that line's number:
    a minified bundle or a data literal on one line made a single 900,000-character
    document, far over any agent's budget. Only the last part ends with the newline, so
    the parts joined still give the line back."""
    parts = []
    while len(content) > max_chars:
        cut = content.rfind(" ", max_chars // 2, max_chars) + 1 or max_chars
        parts.append(content[:cut])
        content = content[cut:]
    parts.append(content)
    return parts


#: a file over this many bytes is parsed a window at a time (see find_symbols)
WHOLE_PARSE_BYTES = 1 << 20
#: the size of such a window: its tree takes ~30x as much memory (~8 MB)
PARSE_WINDOW_BYTES = 256 << 10


def find_symbols(source: bytes, language: str) -> list[_Symbol]:
    """Top-level symbols of ``source``, each with its nested ones (methods of a class).

    A file over WHOLE_PARSE_BYTES is parsed a window at a time: tree-sitter's tree and
    the query's matches take 30-40x the source's bytes, so one 10 MB file cost over a GB.
    Each window starts where a top-level statement starts (found by the previous
    window's own parse, so never inside a string or a comment) and keeps the statements
    its parse holds whole (_whole_statements); the next window starts after them. Files
    within the bound (every file at the default --max-file-size) are parsed whole, as
    before; a single top-level statement larger than a window is parsed whole too."""
    if len(source) <= WHOLE_PARSE_BYTES:
        return _symbols_of(parser(language).parse(source), source, len(source), language)
    out: list[_Symbol] = []
    start, row, size = 0, 0, PARSE_WINDOW_BYTES
    back: tuple[int, int, int, int] | None = None  # the window whose cut this one checks
    while start < len(source):
        end = source.find(b"\n", start + size) + 1 or len(source)
        window = source[start:end]
        tree = parser(language).parse(window)
        strict = size < 8 * PARSE_WINDOW_BYTES
        if back is not None and strict and _starts_in_error(tree.root_node):
            # the last window's cut fell inside a statement: that window again, larger
            start, row, count, size = back
            del out[count:]
            size, back = size * 2, None
            continue
        keep = (
            len(window)
            if end == len(source)
            else _whole_statements(tree.root_node, len(window), strict)
        )
        if keep == 0:  # one statement longer than the window: a larger window
            size *= 2
            continue
        back = (start, row, len(out), size)
        out += [_shifted(sym, row, start) for sym in _symbols_of(tree, window, keep, language)]
        del tree  # before the next parse: one window's tree at a time
        row += window.count(b"\n", 0, keep)
        start, size = start + keep, PARSE_WINDOW_BYTES
    return out


def _starts_in_error(root: Any) -> bool:
    """Whether a window's first statement is a syntax error: a window started inside a
    statement (a literal, a class body, a string) the window before it cut."""
    children = root.children
    return bool(children) and bool(children[0].has_error)


def _whole_statements(root: Any, size: int, strict: bool) -> int:
    """Bytes of a window's top-level statements that the window surely holds whole: those
    before the first one with a syntax error or ending in the window's last eighth (where
    its cut may show: error recovery can make a cut statement look complete), without the
    comments right above the next one (they belong to it); 0 when that leaves nothing
    (the window must grow). Not ``strict`` (a window already many times the size, its
    first statement still in error: a real syntax error), up to the last statement."""
    children = root.children
    near_end = size - size // 8
    last = next(
        (k for k, child in enumerate(children) if child.has_error or child.end_byte > near_end),
        None,
    )
    if last is None or (last == 0 and not strict):
        last = len(children) - 1
    while last > 0 and children[last - 1].type in LEADING:
        last -= 1
    return int(children[last].start_byte) if last > 0 else 0


def _shifted(sym: _Symbol, rows: int, offset: int) -> _Symbol:
    """A window's symbol placed in the whole file (its nested ones too)."""
    sym.start, sym.end = sym.start + rows, sym.end + rows
    sym.start_byte, sym.end_byte = sym.start_byte + offset, sym.end_byte + offset
    sym.children = [_shifted(child, rows, offset) for child in sym.children]
    return sym


def _symbols_of(tree: Any, source: bytes, keep: int, language: str) -> list[_Symbol]:
    """The symbols a parse of ``source`` holds within its first ``keep`` bytes."""
    import tree_sitter

    found: dict[int, _Symbol] = {}
    cursor = tree_sitter.QueryCursor(symbol_query(language))
    for _, captures in _matches(cursor, tree.root_node, keep):
        kind = next((k for k in ("function", "class", "module", "type") if k in captures), "")
        if not kind:
            continue
        node = captures[kind][0]
        if node.id in found or node.end_byte > keep:
            continue
        name = _name(node, captures, source)
        if not name:
            continue
        if kind == "function" and "receiver" in captures:
            kind = "method"
        found[node.id] = _Symbol(
            _first_row(node, source), _last_row(node), name, kind, node.start_byte, node.end_byte
        )
    return _nest(sorted(found.values(), key=lambda s: (s.start_byte, -s.end_byte)))


#: bytes of a parse whose query matches are listed at once: the binding builds every
#: match's nodes as Python objects, ~30x the bytes they cover
MATCH_RANGE_BYTES = 64 << 10


def _matches(cursor: Any, root: Any, keep: int) -> Iterator[tuple[int, dict[str, list[Any]]]]:
    """The query's matches within the first ``keep`` bytes, a range at a time (a match
    spanning ranges comes again; the caller keeps each node once)."""
    for low in range(0, max(keep, 1), MATCH_RANGE_BYTES):
        cursor.set_byte_range(low, min(keep, low + MATCH_RANGE_BYTES))
        yield from cursor.matches(root)


def _name(node: Any, captures: dict[str, list[Any]], source: bytes) -> str:
    """The symbol's name: the @name capture, the ``name`` field, or a C declarator's."""
    named = captures.get("name")
    target = named[0] if named else node.child_by_field_name("name")
    if target is None and node.type == "function_definition":  # C/C++: walk the declarators
        target = node.child_by_field_name("declarator")
        while target is not None and target.type != "function_declarator":
            inner = target.child_by_field_name("declarator")
            target = (
                inner
                if inner is not None
                else (target.named_children[-1] if target.named_children else None)
            )
        target = target.child_by_field_name("declarator") if target is not None else None
    if target is None:
        return ""
    name = " ".join(_text(target, source).split())
    receiver = captures.get("receiver")
    if receiver:  # Go: func (s *Server[T]) Handle -> Server.Handle
        base = _text(receiver[0], source).lstrip("*").split("[", 1)[0].strip()
        name = f"{base}.{name}" if base else name
    return name


def _text(node: Any, source: bytes) -> str:
    return source[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _first_row(node: Any, source: bytes) -> int:
    """Where the symbol's document starts: its wrapper, and doc comments right above it."""
    while node.parent is not None and node.parent.type in WRAPPERS:
        node = node.parent
    row = int(node.start_point[0])
    prev = node.prev_sibling
    while prev is None and node.parent is not None and node.parent.start_byte == node.start_byte:
        node = node.parent  # Ruby: a class first in a body; its comment is the body's sibling
        prev = node.prev_sibling
    while (
        prev is not None
        and prev.type in LEADING
        and prev.end_point[0] >= row - 1
        and not source[source.rfind(b"\n", 0, prev.start_byte) + 1 : prev.start_byte].strip()
    ):
        row = int(prev.start_point[0])
        prev = prev.prev_sibling
    return row


def _last_row(node: Any) -> int:
    row, column = int(node.end_point[0]), int(node.end_point[1])
    return row - 1 if column == 0 and row > node.start_point[0] else row


def _nest(symbols: list[_Symbol]) -> list[_Symbol]:
    """Symbols in a tree by byte range; what is inside a function or type stays in it, as
    does a symbol starting on its container's first line (``typedef struct {...}``)."""
    top: list[_Symbol] = []
    stack: list[_Symbol] = []
    for sym in symbols:
        while stack and stack[-1].end_byte <= sym.start_byte:
            stack.pop()
        parent = stack[-1] if stack else None
        if parent is not None:
            if parent.kind not in ("class", "module") or sym.start <= parent.start:
                continue
            sym.name = f"{parent.name}.{sym.name}"
            if sym.kind == "function" and parent.kind == "class":
                sym.kind = "method"
            parent.children.append(sym)
        else:
            top.append(sym)
        stack.append(sym)
    return top


def _partition(
    lo: int, hi: int, symbols: Sequence[_Symbol], owner: str | None, gap_kind: str
) -> list[_Piece]:
    """Rows lo..hi as consecutive pieces: symbols (containers cut into their members)
    and the gaps between them, named after ``owner``."""
    pieces: list[_Piece] = []
    cursor = lo
    for sym in symbols:
        if sym.end < cursor:
            continue  # on a line already taken (two symbols on one line)
        start = max(sym.start, cursor)
        if start > cursor:
            pieces.append(_Piece(cursor, start - 1, owner, gap_kind))
        if sym.children:
            pieces.extend(_partition(start, sym.end, sym.children, sym.name, sym.kind))
        else:
            pieces.append(_Piece(start, sym.end, sym.name, sym.kind))
        cursor = sym.end + 1
    if cursor <= hi:
        pieces.append(_Piece(cursor, hi, owner, gap_kind))
    return pieces


def _merge_wordless(pieces: list[_Piece], rows: list[str]) -> list[_Piece]:
    """Pieces without a letter or digit join the piece before (the first: the one after)."""
    out: list[_Piece] = []
    pending: int | None = None
    for piece in pieces:
        if not any(_WORD.search(rows[r]) for r in range(piece.start, piece.end + 1)):
            if out:
                last = out[-1]
                out[-1] = _Piece(last.start, piece.end, last.symbol, last.kind)
            elif pending is None:
                pending = piece.start
            continue
        if pending is not None:
            piece = _Piece(pending, piece.end, piece.symbol, piece.kind)
            pending = None
        blank = piece.start
        while out and not rows[blank].strip():  # blank lines above stay with the piece above
            blank += 1
        if blank > piece.start:
            last = out[-1]
            out[-1] = _Piece(last.start, blank - 1, last.symbol, last.kind)
            piece = _Piece(blank, piece.end, piece.symbol, piece.kind)
        out.append(piece)
    return out


def _windows(start: int, end: int, rows: list[str], limits: ChunkLimits) -> list[tuple[int, int]]:
    """start..end cut into windows within the limits, ending at a blank line when one is
    in the window's second half."""
    out: list[tuple[int, int]] = []
    i = start
    while i <= end:
        j, chars = i, 0
        while (
            j <= end
            and j - i < limits.max_lines
            and (j == i or chars + len(rows[j]) + 1 <= limits.max_chars)
        ):
            chars += len(rows[j]) + 1
            j += 1
        if j <= end:
            for k in range(j - 1, i + (j - i) // 2, -1):
                if not rows[k].strip():
                    j = k + 1
                    break
        out.append((i, j - 1))
        i = j
    return out
