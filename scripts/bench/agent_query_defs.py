"""Definitions, doc comments and error strings of a checkout, read by language parsers.

The agent-query benchmark's gold must not come from esqlog's own chunker or index, so this
module parses each source file itself: Python's ``ast`` for Python, the tree-sitter Go and
Java grammars for Go and Java. A definition is a function, method, class or (Go) type, with
its file, 1-based line range, the line of its name, the first sentence of its doc comment
and the error strings raised inside it (``raise X("...")``, ``errors.New``/``fmt.Errorf``,
``throw new X("...")`` and Guava-style ``checkArgument(c, "...")``).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

LANG_OF = {".py": "python", ".go": "go", ".java": "java"}
SKIP_DIRS = {
    "docs",
    "examples",
    "example",
    "_examples",
    "vendor",
    "third_party",
    "testdata",
    "scripts",
    "benchmarks",
    "profiling",
    "gallery",
}


@dataclass
class Defn:
    """One definition: ``qual`` is ``Class.method``/``Recv.Method``/``Outer.Inner``."""

    path: str
    lang: str
    qual: str
    kind: str  # function | method | class | type
    start: int
    end: int
    line: int  # the line of the name
    doc: str = ""
    pointer: bool = False  # Go: a method on *T
    errors: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.qual.rsplit(".", 1)[-1]


def is_test_path(path: str) -> bool:
    parts = path.split("/")
    name = parts[-1]
    if any("test" in d.lower() or d.lower() in SKIP_DIRS for d in parts[:-1]):
        return True
    return bool(
        name.endswith("_test.go")
        or name.startswith("test_")
        or name.endswith("_test.py")
        or name == "conftest.py"
        or re.search(r"(Test|Tests|IT|TestCase)\.java$", name)
    )


def first_sentence(doc: str) -> str:
    """The doc comment's first sentence on one line (markup of ``{@code x}`` kept as x)."""
    if doc.lstrip().startswith("@"):
        return ""  # only block tags (@param ...): no sentence of its own
    doc = re.sub(r"\{@\w+\s+([^}]*)\}", r"\1", doc)
    para = re.split(r"\n\s*\n|\n\s*@\w+", doc.strip(), maxsplit=1)[0]
    text = " ".join(para.split())
    m = re.search(r"(?<!e\.g)(?<!i\.e)(?<=[a-z0-9)`'\"])\.(\s|$)", text)
    return text[: m.start() + 1] if m else text


def strip_format(message: str) -> str:
    """The longest run of a format string's own words between its holes (printf verbs,
    ``{}`` and f-string values), ends trimmed: the part of the message that a rendered
    error shows verbatim whatever the values were."""
    text = message.replace("\\n", "\n").replace("\\t", " ")
    runs = re.split(r"%(?:\[\d+\])?[-+# 0-9.*]*[a-zA-Z]|\{[^{}]*\}|\$[A-Za-z]|\x00|\n", text)
    best = max(runs, key=lambda r: len(r.split()), default="")
    return " ".join(best.split()).strip(" '\"`:,;(=")


def source_files(tree: Path) -> Iterator[tuple[str, str]]:
    for p in sorted(tree.rglob("*")):
        lang = LANG_OF.get(p.suffix)
        rel = p.relative_to(tree).as_posix()
        if lang and p.is_file() and not is_test_path(rel) and not rel.startswith("."):
            yield rel, lang


def definitions(tree: Path) -> list[Defn]:
    out: list[Defn] = []
    for rel, lang in source_files(tree):
        source = (tree / rel).read_bytes()
        parse = {"python": python_defs, "go": go_defs, "java": java_defs}[lang]
        out += parse(rel, source)
    return out


# --------------------------------------------------------------------------- Python


def _py_errors(node: ast.AST) -> list[str]:
    found = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Raise) and isinstance(sub.exc, ast.Call) and sub.exc.args:
            arg = sub.exc.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                found.append(arg.value)
            elif isinstance(arg, ast.JoinedStr):
                # a value's hole as NUL: strip_format splits the message there
                found.append(
                    "".join(
                        v.value
                        if isinstance(v, ast.Constant) and isinstance(v.value, str)
                        else "\x00"
                        for v in arg.values
                    )
                )
    return found


def python_defs(path: str, source: bytes) -> list[Defn]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    out: list[Defn] = []

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                cls = isinstance(node, ast.ClassDef)
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                kind = "class" if cls else ("method" if prefix else "function")
                out.append(
                    Defn(
                        path,
                        "python",
                        prefix + node.name,
                        kind,
                        start,
                        node.end_lineno or node.lineno,
                        node.lineno,
                        first_sentence(ast.get_docstring(node) or ""),
                        errors=[] if cls else _py_errors(node),
                    )
                )
                if cls:
                    walk(node.body, prefix + node.name + ".")
            elif isinstance(node, (ast.If, ast.Try)):
                for part in ("body", "orelse", "finalbody"):
                    walk(getattr(node, part, []) or [], prefix)

    walk(tree.body, "")
    return out


# --------------------------------------------------------------------------- tree-sitter


@cache
def _parser(lang: str) -> Any:
    import tree_sitter as ts

    if lang == "go":
        import tree_sitter_go as grammar
    else:
        import tree_sitter_java as grammar  # type: ignore[no-redef]
    return ts.Parser(ts.Language(grammar.language()))


def _text(node: Any) -> str:
    return node.text.decode("utf-8", "replace") if node is not None else ""


def _walk(node: Any) -> Iterator[Any]:
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def _comment_above(node: Any) -> str:
    """The comment lines ending just above ``node`` (Go ``//`` lines, a Java ``/** */``)."""
    lines: list[str] = []
    prev, top = node.prev_sibling, node.start_point[0]
    while (
        prev is not None
        and prev.type in ("comment", "block_comment", "line_comment")
        and prev.end_point[0] >= top - 1
    ):
        lines.insert(0, _text(prev))
        top, prev = prev.start_point[0], prev.prev_sibling
    text = "\n".join(lines)
    if text.startswith("/**"):
        text = re.sub(r"^\s*/\*\*|\*/\s*$", "", text)
        text = "\n".join(re.sub(r"^\s*\*\s?", "", ln) for ln in text.split("\n"))
    elif text.startswith("/*"):
        return ""
    else:
        text = "\n".join(re.sub(r"^\s*//\s?", "", ln) for ln in text.split("\n"))
    return first_sentence(text)


def _string_value(node: Any) -> str | None:
    if node is None or node.type not in (
        "interpreted_string_literal",
        "string_literal",
        "raw_string_literal",
    ):
        return None
    return _text(node)[1:-1]


def _go_errors(node: Any) -> list[str]:
    found = []
    for sub in _walk(node):
        if sub.type == "call_expression" and _text(sub.child_by_field_name("function")) in (
            "errors.New",
            "fmt.Errorf",
        ):
            args = [a for a in sub.child_by_field_name("arguments").named_children]
            value = _string_value(args[0]) if args else None
            if value:
                found.append(value)
    return found


def go_defs(path: str, source: bytes) -> list[Defn]:
    root = _parser("go").parse(source).root_node
    out: list[Defn] = []
    for node in root.children:
        doc = _comment_above(node)
        span = (node.start_point[0] + 1, node.end_point[0] + 1)
        name_node = node.child_by_field_name("name")
        if node.type == "function_declaration":
            out.append(
                Defn(
                    path,
                    "go",
                    _text(name_node),
                    "function",
                    *span,
                    name_node.start_point[0] + 1,
                    doc,
                    errors=_go_errors(node),
                )
            )
        elif node.type == "method_declaration":
            recv = node.child_by_field_name("receiver")
            rtype = next((_text(n) for n in _walk(recv) if n.type == "type_identifier"), "")
            out.append(
                Defn(
                    path,
                    "go",
                    f"{rtype}.{_text(name_node)}",
                    "method",
                    *span,
                    name_node.start_point[0] + 1,
                    doc,
                    pointer="*" in _text(recv),
                    errors=_go_errors(node),
                )
            )
        elif node.type == "type_declaration":
            for spec in node.named_children:
                if spec.type == "type_spec":
                    sname = spec.child_by_field_name("name")
                    out.append(
                        Defn(path, "go", _text(sname), "type", *span, sname.start_point[0] + 1, doc)
                    )
    return out


JAVA_TYPES = {
    "class_declaration",
    "interface_declaration",
    "enum_declaration",
    "record_declaration",
    "annotation_type_declaration",
}
JAVA_METHODS = {"method_declaration", "constructor_declaration"}


def _java_errors(node: Any) -> list[str]:
    found = []
    for sub in _walk(node):
        args = None
        if (
            sub.type == "object_creation_expression"
            and sub.parent is not None
            and sub.parent.type == "throw_statement"
        ):
            args = sub.child_by_field_name("arguments").named_children[:1]
        elif sub.type == "method_invocation" and _text(sub.child_by_field_name("name")) in (
            "checkArgument",
            "checkState",
            "checkNotNull",
        ):
            args = sub.child_by_field_name("arguments").named_children[1:2]
        value = _string_value(args[0]) if args else None
        if value:
            found.append(value)
    return found


def java_defs(path: str, source: bytes) -> list[Defn]:
    root = _parser("java").parse(source).root_node
    out: list[Defn] = []

    def visit(node: Any, prefix: str) -> None:
        for child in node.children:
            if child.type in JAVA_TYPES | JAVA_METHODS:
                name_node = child.child_by_field_name("name")
                qual = prefix + _text(name_node)
                method = child.type in JAVA_METHODS
                out.append(
                    Defn(
                        path,
                        "java",
                        qual,
                        "method" if method else "class",
                        child.start_point[0] + 1,
                        child.end_point[0] + 1,
                        name_node.start_point[0] + 1,
                        _comment_above(child),
                        errors=_java_errors(child) if method else [],
                    )
                )
                body = child.child_by_field_name("body")
                if not method and body is not None:
                    visit(body, qual + ".")
            elif child.type == "enum_body_declarations":
                visit(child, prefix)

    visit(root, "")
    return out


def java_package(source: str) -> str:
    m = re.search(r"^\s*package\s+([\w.]+)\s*;", source, re.M)
    return m.group(1) if m else ""


def go_package(source: str) -> str:
    m = re.search(r"^package\s+(\w+)", source, re.M)
    return m.group(1) if m else ""


def go_module(tree: Path) -> str:
    mod = tree / "go.mod"
    m = re.search(r"^module\s+(\S+)", mod.read_text(), re.M) if mod.exists() else None
    return m.group(1) if m else ""
