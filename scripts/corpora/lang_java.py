"""Java corpus: the OpenJDK 17 class library sources (Debian openjdk-17-source).

Methods and constructors are found with tree-sitter-java; the Javadoc is the
`/** ... */` block comment immediately before the declaration (before its
annotations and modifiers, which stay in the document). Methods of anonymous
or local classes inside method bodies are part of their enclosing method's
document and not separate entries.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterator
from multiprocessing import Pool
from pathlib import Path
from typing import Any

from scripts.corpora.install import ensure_apt
from scripts.corpora.pipeline import Func, Progress
from scripts.corpora.text import first_sentence, strip_comment_markers, strip_html
from scripts.corpora.treesit import node_code, only_whitespace_between, parser, text_of

JDK_PKG = "openjdk-17-source"
SRC_ZIP = "/usr/lib/jvm/openjdk-17/lib/src.zip"
PATH_PREFIX = "openjdk-17"
_TYPE_DECLS = frozenset(
    {
        "class_declaration",
        "interface_declaration",
        "enum_declaration",
        "record_declaration",
        "annotation_type_declaration",
    }
)
_METHODS = frozenset(
    {"method_declaration", "constructor_declaration", "compact_constructor_declaration"}
)
_BODIES = frozenset(
    {
        "class_body",
        "interface_body",
        "enum_body",
        "enum_body_declarations",
        "annotation_type_body",
        "program",
    }
)
_BLOCK_HTML = re.compile(
    r"<\s*/?\s*(p|pre|ul|ol|li|dl|dt|dd|table|h[1-6]|blockquote|hr)\b[^>]*>", re.IGNORECASE
)


def _inline_tag(tag: str, body: str) -> str:
    """Plain-text rendering of one Javadoc inline tag {@tag body}."""
    body = body.strip()
    if tag in ("inheritDoc", "docRoot"):
        return ""
    if tag in ("link", "linkplain", "value", "see"):
        ref, _, label = body.partition(" ")
        if label.strip():
            return label.strip()
        ref = re.sub(r"\(.*", "", ref)  # drop parameter lists
        return ref.lstrip("#").replace("#", ".")
    if tag == "index":
        return body.split(" ")[0].strip('"')
    return body  # code, literal, summary, ...


def replace_inline_tags(text: str) -> str:
    """Replace {@tag ...} with its text, honouring nested braces as javadoc does."""
    out = []
    i = 0
    while True:
        j = text.find("{@", i)
        if j < 0:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i:j])
        depth, k = 0, j
        while k < len(text):
            if text[k] == "{":
                depth += 1
            elif text[k] == "}":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        inner = text[j + 2 : k]
        m = re.match(r"(\w+)\s*(.*)", inner, re.DOTALL)
        out.append(_inline_tag(m.group(1), m.group(2)) if m else inner)
        i = k + 1


def javadoc_query(raw: str) -> str:
    """First sentence of a Javadoc comment's main description.

    The description ends at the first block tag (@param, @return, ...); block
    HTML such as <p> ends a paragraph; inline tags render as their text, so an
    {@inheritDoc}-only comment yields "" and is not a query.
    """
    lines = []
    for line in strip_comment_markers(raw).split("\n"):
        if re.match(r"\s*@\w", line):
            break
        lines.append(line)
    text = replace_inline_tags("\n".join(lines))
    text = _BLOCK_HTML.sub("\n\n", text)
    return strip_html(first_sentence(text)).strip()


def _javadoc_before(src: bytes, node: Any) -> str:
    """The /** */ comment directly preceding a declaration, or ""."""
    prev = node.prev_sibling
    if prev is None or prev.type not in ("block_comment", "comment"):
        return ""
    raw = text_of(src, prev)
    if not raw.startswith("/**") or raw.startswith("/**/"):
        return ""
    return raw if only_whitespace_between(src, prev.end_byte, node.start_byte) else ""


def _walk(src: bytes, node: Any, scope: list[str], path: str, out: list[Func]) -> None:
    """Collect methods from type bodies, recursing into nested types only."""
    for child in node.children:
        if child.type in _METHODS:
            name_node = child.child_by_field_name("name")
            name = text_of(src, name_node) if name_node else "<init>"
            out.append(
                Func(
                    path=path,
                    qualname=".".join([*scope, name]),
                    code=node_code(src, child.start_byte, child.end_byte),
                    query=javadoc_query(_javadoc_before(src, child)),
                    names=(name,),
                )
            )
        elif child.type in _TYPE_DECLS:
            name_node = child.child_by_field_name("name")
            inner = [*scope, text_of(src, name_node) if name_node else "?"]
            body = child.child_by_field_name("body")
            if body is not None:
                _walk(src, body, inner, path, out)
        elif child.type in _BODIES:
            _walk(src, child, scope, path, out)


def parse_java(src: bytes, path: str) -> list[Func]:
    """All methods and constructors of one compilation unit, in source order."""
    tree = parser("java").parse(src)
    out: list[Func] = []
    _walk(src, tree.root_node, [], path, out)
    return out


def _parse_entries(names: list[str]) -> list[Func]:
    """Worker: parse a batch of src.zip entries (each worker opens the zip)."""
    out: list[Func] = []
    with zipfile.ZipFile(SRC_ZIP) as zf:
        for name in names:
            out.extend(parse_java(zf.read(name), f"{PATH_PREFIX}/{name}"))
    return out


def extract(workdir: Path) -> Iterator[Func]:
    """All methods of src.zip in entry-name order (module-info/package-info skipped)."""
    del workdir
    ensure_apt([JDK_PKG])
    parser("java")  # install before forking workers
    with zipfile.ZipFile(SRC_ZIP) as zf:
        names = sorted(
            n
            for n in zf.namelist()
            if n.endswith(".java") and not n.endswith(("module-info.java", "package-info.java"))
        )
    batches = [names[i : i + 200] for i in range(0, len(names), 200)]
    prog = Progress("java", len(names))
    with Pool(2) as pool:
        for batch, funcs in zip(batches, pool.imap(_parse_entries, batches), strict=True):
            prog.step(len(batch))
            yield from funcs
