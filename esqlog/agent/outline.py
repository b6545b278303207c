"""What one hit says in a listing: its first code line and the first line of its doc.

An agent deciding which hit to open needs the signature and the one-line summary, not
the body: ``def search(self, query, ...)`` plus "esqlog's ranking of query, packed" cost
~40 tokens where the whole chunk costs ~400. Both are read from the chunk's own text, so
any index works; nothing here parses a language properly, it only recognises comment
and docstring markers common to the languages ``esqlog index`` cuts (a wrong guess costs
one uninformative line, never a wrong location).
"""

from __future__ import annotations

import re

#: characters kept of a signature or doc line (a long line costs tokens, not information)
MAX_LINE_CHARS = 120
_PREPROCESSOR = re.compile(
    r"#\s*(include|define|if|ifdef|ifndef|elif|else|endif|pragma|"
    r"undef|import|error|line)\b"
)
_LINE_COMMENT = ("///", "//!", "//", "#", "--", ";;", "%")
_DOCSTRING = re.compile(r"^[rRuUbBfF]{0,2}(\"\"\"|''')")
_DECORATOR = re.compile(r"^(@[\w.]+(\(.*\))?|#!?\[.*\])\s*$")
_IMPORT = re.compile(
    r"^((from\s+\S+\s+)?import|package|use|using|#\s*include|"
    r"require(_relative)?|extern\s+crate|mod)\b"
)
_OPEN, _CLOSE = "([", ")]"  # not braces: a body opens one


def _is_line_comment(stripped: str) -> bool:
    if stripped.startswith("#") and _PREPROCESSOR.match(stripped):
        return False  # C's #include / #define are code
    return stripped.startswith(_LINE_COMMENT)


def _comment_text(stripped: str) -> str:
    """A comment line without its markers ('// Foo does x' -> 'Foo does x')."""
    text = stripped
    for marker in ("/**", "/*!", "/*", "*/", "///", "//!", "//", "#:", "#", "--", ";;", "%", "*"):
        if text.startswith(marker):
            text = text[len(marker) :]
            break
    return text.removesuffix("*/").strip()


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_LINE_CHARS else text[: MAX_LINE_CHARS - 1] + "…"


def outline(text: str) -> tuple[str | None, str | None]:
    """(signature, doc): the chunk's first code line and its doc comment's first line.

    The doc is a comment block just above the signature (Go, Java, Rust, C, Ruby) or a
    docstring just below it (Python); a leading module docstring counts as the doc too.
    Decorators and attributes are skipped: the line after them says more.
    """
    lines = text.split("\n")
    doc: str | None = None
    signature_at: int | None = None
    in_block = False
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        i += 1
        if in_block:
            if doc is None and _comment_text(stripped):
                doc = _comment_text(stripped)
            in_block = "*/" not in stripped
            continue
        if not stripped or _DECORATOR.match(stripped):
            continue
        if _IMPORT.match(stripped) and _more_code(lines, _statement_end(lines, i - 1)):
            i = _statement_end(lines, i - 1)
            continue  # a file's imports: the code after them says what the chunk is
        if stripped.startswith("/*"):
            doc = doc or (_comment_text(stripped) or None)
            in_block = "*/" not in stripped[2:]
            continue
        if _is_line_comment(stripped):
            if doc is None and not stripped.startswith("#!"):
                doc = _comment_text(stripped) or None
            continue
        if _DOCSTRING.match(stripped) and signature_at is None:
            found, i = _docstring(lines, i - 1)
            doc = doc or found
            continue
        signature_at = i - 1
        break
    if signature_at is None:
        return None, _short(doc) if doc else None
    signature, rest = _joined(lines, signature_at)
    if doc is None:
        while rest < len(lines) and not lines[rest].strip():
            rest += 1
        if rest < len(lines) and _DOCSTRING.match(lines[rest].strip()):
            doc = _docstring(lines, rest)[0]
    return _short(signature), _short(doc) if doc else None


def _statement_end(lines: list[str], at: int) -> int:
    """The index after the statement starting at ``lines[at]`` (brackets it opens closed)."""
    depth = _depth(lines[at])
    j = at + 1
    while depth > 0 and j < len(lines):
        depth += _depth(lines[j])
        j += 1
    return j


def _more_code(lines: list[str], at: int) -> bool:
    """Whether code other than imports starts at or after ``lines[at]`` (else an import
    chunk shows its first import rather than nothing)."""
    while at < len(lines):
        stripped = lines[at].strip()
        if stripped and not _is_line_comment(stripped):
            if not _IMPORT.match(stripped):
                return True
            at = _statement_end(lines, at)
        else:
            at += 1
    return False


def _joined(lines: list[str], at: int) -> tuple[str, int]:
    """The signature line, with its continuation lines while a bracket it opened is still
    open (``def scroll_plan(`` alone says nothing), up to MAX_LINE_CHARS; and the index of
    the line after the last one used."""
    text = lines[at].strip()
    j = at + 1
    depth = _depth(text)
    while depth > 0 and j < len(lines) and j - at < 40:
        part = lines[j].strip()
        depth += _depth(part)
        if len(text) <= MAX_LINE_CHARS:  # past it only the end of the signature is sought
            text += (
                "" if text.endswith(tuple(_OPEN)) or part.startswith(tuple(_CLOSE)) else " "
            ) + part
        j += 1
    return text, j


def _depth(text: str) -> int:
    return sum(text.count(c) for c in _OPEN) - sum(text.count(c) for c in _CLOSE)


def _docstring(lines: list[str], at: int) -> tuple[str | None, int]:
    """The first text line of the docstring opening at ``lines[at]``, and the index of the
    line after the docstring ends."""
    stripped = lines[at].strip()
    match = _DOCSTRING.match(stripped)
    quote = match.group(1) if match else '"""'
    body = stripped[match.end() if match else 0 :]
    if quote in body:  # one line: """Does x."""
        return body.split(quote, 1)[0].strip() or None, at + 1
    first = body.strip() or None
    j = at + 1
    while j < len(lines) and quote not in lines[j]:
        first = first or (lines[j].strip() or None)
        j += 1
    if first is None and j < len(lines):
        first = lines[j].split(quote, 1)[0].strip() or None
    return first, j + 1
