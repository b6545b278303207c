"""Python corpus: CPython 3.11 standard library plus large Debian python3-* packages.

Parsed with the `ast` module. Functions and methods are collected from module
and class bodies (functions nested in functions belong to their enclosing
function's document). The docstring is the first statement when it is a
string literal; it is cut out of the document, decorators are kept.
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Iterator
from pathlib import Path

from scripts.corpora.install import package_sources
from scripts.corpora.pipeline import Func, pooled_extract
from scripts.corpora.text import dedent_code, first_paragraph, first_sentence

STDLIB_PKG = "libpython3.11-stdlib"
PY_PKGS = [
    "python3-django",
    "python3-sympy",
    "python3-twisted",
    "python3-sqlalchemy",
    "python3-networkx",
    "python3-sphinx",
    "python3-docutils",
    "python3-pygments",
    "python3-matplotlib",
    "python3-pandas",
    "python3-babel",
    "python3-nltk",
    "python3-setuptools",
    "python3-hypothesis",
    "python3-pip",
    "python3-mypy",
    "python3-scipy",
    "python3-numpy",
    "python3-sklearn",
    "python3-statsmodels",
    "python3-astroid",
    "python3-ipython",
]
ROOTS = {"/usr/lib/python3.11/": "python3.11/", "/usr/lib/python3/dist-packages/": "dist-packages/"}
_TEST_DIRS = frozenset({"test", "tests", "idle_test", "testsuite"})
_ROLE = re.compile(r":[\w:.+-]+:`(?:[^`<]*?<)?~?([^`>]+?)>?`")
_TITLED_ROLE = re.compile(r":[\w:.+-]+:`([^`<]+?)\s*<[^`>]*>`")


def _wanted(path: str) -> bool:
    """Non-test .py files: no tests/ directories, test_*.py, *_test(s).py, conftest."""
    if not path.endswith(".py"):
        return False
    parts = path.split("/")
    base = parts[-1]
    if base.startswith("test_") or base.endswith(("_test.py", "_tests.py")):
        return False
    if base == "conftest.py":
        return False
    return not any(p in _TEST_DIRS for p in parts[:-1])


def clean_rest(text: str) -> str:
    """Render reStructuredText inline markup as plain text.

    :func:`~a.b` -> b, :class:`Title <target>` -> Title, ``x`` -> x, *x* -> x,
    and epytext (Twisted): L{x} / C{x} / I{x} / B{x} -> x.
    """
    text = re.sub(r"\b[LCIBMU]\{([^{}]*)\}", r"\1", text)
    text = _TITLED_ROLE.sub(r"\1", text)
    text = _ROLE.sub(
        lambda m: m.group(1).rsplit(".", 1)[-1] if "~" in m.group(0) else m.group(1), text
    )
    text = re.sub(r"``(.+?)``", r"\1", text)
    text = re.sub(r"`([^`]+)`_?", r"\1", text)
    return re.sub(r"(?<![\w*])\*\*?([^*\s][^*]*?)\*\*?(?![\w*])", r"\1", text)


def docstring_query(doc: str, name: str) -> str:
    """First sentence of a docstring; a leading `name(...)` signature paragraph is skipped."""
    paras = [p for p in re.split(r"\n\s*\n", doc.strip()) if p.strip()]
    if len(paras) > 1 and re.match(rf"\s*{re.escape(name)}\s*\(", paras[0]):
        paras = paras[1:]
    if not paras:
        return ""
    return clean_rest(first_sentence(first_paragraph(paras[0])))


def _docstring_node(node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.Expr | None:
    """The docstring statement, as ast.get_docstring defines it."""
    if node.body and isinstance(node.body[0], ast.Expr):
        val = node.body[0].value
        if isinstance(val, ast.Constant) and isinstance(val.value, str):
            return node.body[0]
    return None


def code_without_docstring(lines: list[str], node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """Source of a function (with decorators) with its docstring statement cut out.

    Whole lines are removed when the docstring sits on lines of its own (the
    usual case); otherwise just its characters (`def f(): "doc"; return 1`).
    ast column offsets are UTF-8 byte offsets, hence the encode/decode.
    """
    start = min([node.lineno] + [d.lineno for d in node.decorator_list])
    end = node.end_lineno or node.lineno
    seg = lines[start - 1 : end]
    doc = _docstring_node(node)
    if doc is not None and doc.end_lineno is not None and doc.end_col_offset is not None:
        a, b = doc.lineno - start, doc.end_lineno - start
        head = seg[a].encode()[: doc.col_offset].decode("utf-8", "replace")
        tail = seg[b].encode()[doc.end_col_offset :].decode("utf-8", "replace")
        if not head.strip() and not tail.strip():
            seg = seg[:a] + seg[b + 1 :]
        else:
            seg = [*seg[:a], head + tail.lstrip("; "), *seg[b + 1 :]]
    return dedent_code("", "\n".join(seg))


def _walk(
    body: list[ast.stmt], lines: list[str], scope: list[str], path: str, out: list[Func]
) -> None:
    """Collect functions from a module or class body, recursing into classes."""
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node, clean=True) or ""
            out.append(
                Func(
                    path=path,
                    qualname=".".join([*scope, node.name]),
                    code=code_without_docstring(lines, node),
                    query=docstring_query(doc, node.name) if doc else "",
                    names=(node.name,),
                )
            )
        elif isinstance(node, ast.ClassDef):
            _walk(node.body, lines, [*scope, node.name], path, out)
        elif isinstance(node, ast.If | ast.Try):
            # Functions defined conditionally (platform or import fallbacks).
            for block in (node.body, node.orelse, getattr(node, "finalbody", [])):
                _walk(block, lines, scope, path, out)


def parse_python(source: str, path: str) -> list[Func]:
    """All module-level and class-level functions of one file, in source order."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    out: list[Func] = []
    _walk(tree.body, source.split("\n"), [], path, out)
    return out


def _parse_file(item: tuple[str, str]) -> list[Func]:
    """Worker: read and parse one file (undecodable files are skipped)."""
    abs_path, rel = item
    try:
        source = Path(abs_path).read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return []
    return parse_python(source, rel)


def source_files() -> list[tuple[str, str]]:
    """(absolute, stable relative) paths of the corpus files, sorted."""
    return package_sources([STDLIB_PKG, *PY_PKGS], ROOTS, _wanted)


def extract(workdir: Path) -> Iterator[Func]:
    """Functions of all corpus files in path order."""
    del workdir
    yield from pooled_extract("python", source_files(), _parse_file)
