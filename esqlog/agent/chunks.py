"""One indexed document as the agent sees it (where it is, its text), read from a hit.

Shared by the packers (esqlog.agent.packing), the outline of a hit (esqlog.agent.outline)
and the tools (esqlog.agent.code_search); it knows only the field names ``esqlog index``
writes, and takes whatever of them a document has.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: document fields shown with each hit when the index has them (``esqlog index``'s names)
PATH_FIELD, SYMBOL_FIELDS = "path", ("symbol", "name")
START_FIELD, END_FIELD = "start_line", "end_line"


class ToolInputError(Exception):
    """Bad input or an unusable cluster answer, told to the agent (never a crash)."""


def source_lines(text: str) -> list[str]:
    """A document's lines as editors and ``esqlog index`` number them: split on ``\\n``
    alone (``str.splitlines`` also splits on form feeds and other separators that source
    files contain, which would shift every later line number); a ``\\r`` before it goes."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


@dataclass(frozen=True)
class Chunk:
    """One indexed document: its id, text, and where it is when the index says so.

    ``lines_known`` is True when the document carries its own ``start_line``: then
    ``path:start-end`` names it uniquely and the agent never needs its (long) id.
    """

    id: str
    text: str
    path: str | None
    symbol: str | None
    start_line: int  # of text's first line (1 when the document has no line fields)
    lines_known: bool = False

    @property
    def end_line(self) -> int:
        return self.start_line + max(len(source_lines(self.text)), 1) - 1

    @property
    def located(self) -> bool:
        """path + line range identify this document (read_code takes them)."""
        return self.path is not None and self.lines_known

    def header(self, rank: int, tokens: int | None = None) -> str:
        """The line above a whole chunk in detail="code" answers; the id only when path and
        lines do not identify the chunk (an id costs ~14 tokens and says nothing)."""
        parts = [f"--- [{rank}]"]
        if not self.located:
            parts.append(f"id={self.id}")
        if self.path:
            parts.append(f"path={self.path}")
        parts.append(f"lines={self.start_line}-{self.end_line}")
        if self.symbol:
            parts.append(f"symbol={self.symbol}")
        if tokens is not None:
            parts.append(f"tokens={tokens}")
        return " ".join(parts)


def chunk_of(hit: dict[str, Any], field: str) -> Chunk:
    """A search or get answer's document as a Chunk (missing fields are simply absent)."""
    source = hit.get("_source") or {}
    text = source.get(field)
    symbol = next(
        (source[f] for f in SYMBOL_FIELDS if isinstance(source.get(f), str) and source[f]), None
    )
    start = source.get(START_FIELD)
    path = source.get(PATH_FIELD)
    line = start if isinstance(start, int) and not isinstance(start, bool) else 0
    known = line > 0
    return Chunk(
        id=str(hit["_id"]),
        text=text if isinstance(text, str) else "",
        path=path if isinstance(path, str) and path else None,
        symbol=symbol,
        start_line=line if known else 1,
        lines_known=known,
    )
