"""Function and method spans of one source file, for gold labels and their checks.

A span is (symbol, start_line, end_line), 1-based and inclusive, for every *outermost*
function or method: a Python ``def`` at module level or inside classes only (its decorators
included), a Go ``func`` declaration (``Recv.Name`` for methods), a Java method or
constructor not nested in another method (``Class.name``, inner classes dotted). Nested
functions and closures belong to the function around them, as an agent would read them.
"""

from __future__ import annotations

import ast
from functools import cache
from typing import Any

Span = tuple[str, int, int]

LANGUAGES = {".py": "python", ".go": "go", ".java": "java"}


def language_of(path: str) -> str | None:
    for ext, lang in LANGUAGES.items():
        if path.endswith(ext):
            return lang
    return None


def spans(path: str, source: bytes) -> list[Span] | None:
    """Spans of the file, or None when it does not parse."""
    lang = language_of(path)
    if lang == "python":
        return _python_spans(source)
    if lang == "go":
        return _go_spans(source)
    if lang == "java":
        return _java_spans(source)
    return None


def _python_spans(source: bytes) -> list[Span] | None:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    out: list[Span] = []

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                out.append((prefix + node.name, start, node.end_lineno or node.lineno))
            elif isinstance(node, ast.ClassDef):
                walk(node.body, prefix + node.name + ".")
            elif isinstance(node, (ast.If, ast.Try)):
                # functions defined under `if TYPE_CHECKING:` / `try: ... except ImportError:`
                for part in ("body", "orelse", "finalbody"):
                    walk(getattr(node, part, []) or [], prefix)
                for handler in getattr(node, "handlers", []):
                    walk(handler.body, prefix)

    walk(tree.body, "")
    return out


@cache
def _parser(lang: str) -> Any:
    import tree_sitter as ts
    import tree_sitter_go
    import tree_sitter_java

    grammar = tree_sitter_go if lang == "go" else tree_sitter_java
    return ts.Parser(ts.Language(grammar.language()))


def _text(node: Any) -> str:
    return node.text.decode("utf-8", "replace") if node is not None else ""


def _go_spans(source: bytes) -> list[Span] | None:
    root = _parser("go").parse(source).root_node
    out: list[Span] = []
    for node in root.children:
        if node.type == "function_declaration":
            name = _text(node.child_by_field_name("name"))
        elif node.type == "method_declaration":
            recv = node.child_by_field_name("receiver")
            rtype = ""
            if recv is not None:
                # (c *Command) / (c Command[T]) -> Command
                for ident in _walk(recv):
                    if ident.type == "type_identifier":
                        rtype = _text(ident)
                        break
            name = (rtype + "." if rtype else "") + _text(node.child_by_field_name("name"))
        else:
            continue
        out.append((name, node.start_point[0] + 1, node.end_point[0] + 1))
    return out


def _walk(node: Any) -> Any:
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


JAVA_TYPES = {
    "class_declaration",
    "interface_declaration",
    "enum_declaration",
    "record_declaration",
    "annotation_type_declaration",
}
JAVA_METHODS = {"method_declaration", "constructor_declaration", "compact_constructor_declaration"}


def _java_spans(source: bytes) -> list[Span] | None:
    root = _parser("java").parse(source).root_node
    out: list[Span] = []

    def visit(node: Any, prefix: str) -> None:
        for child in node.children:
            if child.type in JAVA_TYPES:
                name = _text(child.child_by_field_name("name"))
                body = child.child_by_field_name("body")
                if body is not None:
                    visit(body, prefix + name + ".")
            elif child.type in JAVA_METHODS:
                name = _text(child.child_by_field_name("name"))
                out.append((prefix + name, child.start_point[0] + 1, child.end_point[0] + 1))
            elif child.type in ("enum_body_declarations", "program"):
                visit(child, prefix)

    visit(root, "")
    return out
