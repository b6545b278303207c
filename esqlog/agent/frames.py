"""Stack frames as agents paste them: the file and line a frame points to.

Why: a frame names its function by a last part many definitions share (``File
"httpx/_client.py", line 1058, in get``: httpx defines eight ``get``), but it also says where
that function is: its file and a line inside it. ``esqlog index`` stores each chunk's path
and line range, so the definition the frame means is the one of that name whose chunk, in a
file the frame's path ends with (or that ends with it), spans that line. Python's
``File "…", line N, in f``, Go's ``\\tgin/context.go:1148 +0x1d`` and Java's
``(MethodSpec.java:531)`` all give a file and a line. Pure: esqlog.agent.names builds the
clause that lifts the definition at its place.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

#: a Python traceback frame, the source line after it included when pasted with it
#: (``File "httpx/_client.py", line 1058, in get`` + ``    return self.request(...)``)
PY_FRAME = re.compile(
    r'File "(?P<path>[^"\n]+)", line (?P<line>\d+), in (?P<name>[A-Za-z_]\w*)'
    r'(?:\n[ \t]+(?!File ")\S[^\n]*)?(?:\n[ \t]*[~^]+[ \t]*(?=\n|$))?'
)
#: a source file as frames and compiler messages name it (``MethodSpec.java:531``,
#: ``gin/context.go:185``), its line when given: a place, not a qualified name
SOURCE_FILE = re.compile(
    r"(?P<path>[\w./\\@-]*\w\.(?:py|pyi|java|kt|scala|go|rb|rs|js|mjs|cjs|ts|tsx|jsx|c|cc"
    r"|cpp|cxx|h|hh|hpp|cs|swift|php))\b(?::(?P<line>\d+)(?::\d+)?)?"
)
#: what a frame holds besides its names and its place: Java's ``at``, Go's argument words
#: (``(...)``, ``(0xc000, 0x1)``) and program counter offset (``+0x1d``), brackets
FRAME_REST = re.compile(
    r"\bat\b|\(\s*(?:\.\.\.|0x[0-9a-fA-F]+(?:\s*,\s*(?:0x[0-9a-fA-F]+|\.\.\.))*)?\s*\)"
    r"|\+0x[0-9a-fA-F]+|[()]"
)
#: characters a wildcard query reads as operators: a path holding one is matched by
#: its suffixes only
_WILDCARD = re.compile(r"[*?\\]")


@dataclass(frozen=True)
class Place:
    """Where a frame points: a file as the frame writes it (``/`` separated) and a line."""

    path: str
    line: int


def places(text: str) -> tuple[Place, ...]:
    """The places ``text``'s frames point to, in order, each once: Python frames' file and
    line, then every ``file.ext:line``."""
    found: list[Place] = []
    for frame in PY_FRAME.finditer(text):
        found.append(Place(_slashed(frame.group("path")), int(frame.group("line"))))
    for source in SOURCE_FILE.finditer(PY_FRAME.sub(" ", text)):
        if source.group("line"):
            found.append(Place(_slashed(source.group("path")), int(source.group("line"))))
    return tuple(dict.fromkeys(found))


def _slashed(path: str) -> str:
    """A frame's path with ``/`` separators and no ``./`` or leading ``/``."""
    pieces = [p for p in re.split(r"[/\\]", path) if p and p != "."]
    return "/".join(pieces)


def path_clause(place: Place, field: str) -> dict[str, Any]:
    """Documents whose path is the frame's or a tail of it (``gin/context.go`` for an index
    of gin's folder holds ``context.go``; an absolute path of a module cache ends with the
    indexed one), or ends with it (Java names the file alone: ``MethodSpec.java`` is
    ``src/main/java/…/MethodSpec.java``)."""
    pieces = place.path.split("/")
    tails = ["/".join(pieces[k:]) for k in range(len(pieces))]
    should: list[dict[str, Any]] = [{"terms": {field: tails}}]
    if not _WILDCARD.search(place.path):
        should.append({"wildcard": {field: {"value": f"*/{place.path}"}}})
    return {"bool": {"should": should, "minimum_should_match": 1}}


def spans(place: Place, start_field: str, end_field: str) -> list[dict[str, Any]]:
    """Chunks whose line range holds the place's line."""
    return [
        {"range": {start_field: {"lte": place.line}}},
        {"range": {end_field: {"gte": place.line}}},
    ]
