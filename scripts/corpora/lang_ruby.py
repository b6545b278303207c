"""Ruby corpus: Ruby 3.1 standard library plus large Debian ruby-* gems.

Parsed with tree-sitter-ruby. A method's doc comment is the run of `#` line
comments directly above `def` (no blank line between, each comment alone on
its line), as RDoc and YARD read it. `private def x` keeps the `private`
call in the document and takes its comment from above that line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from scripts.corpora.install import package_sources
from scripts.corpora.pipeline import Func, pooled_extract
from scripts.corpora.text import first_sentence, strip_comment_markers, strip_html
from scripts.corpora.treesit import node_code, parser, text_of

RUBY_STD_PKG = "libruby3.1"
RUBY_PKGS = [
    "ruby-activesupport",
    "ruby-activerecord",
    "ruby-actionpack",
    "ruby-actionview",
    "ruby-activemodel",
    "ruby-railties",
    "ruby-sequel",
    "ruby-rack",
    "ruby-rspec-core",
    "ruby-rspec-expectations",
    "rubocop",
    "ruby-rouge",
    "ruby-thor",
    "ruby-i18n",
    "ruby-kramdown",
    "ruby-addressable",
    "ruby-mail",
    "ruby-sinatra",
    "puppet",
]
ROOTS = {
    "/usr/lib/ruby/3.1.0/": "ruby-3.1/",
    "/usr/lib/ruby/vendor_ruby/": "vendor_ruby/",
    "/usr/share/rubygems-integration/all/gems/": "gems/",
}
_TEST_DIRS = frozenset({"test", "tests", "spec", "specs", "fixtures"})
_METHODS = frozenset({"method", "singleton_method"})
_WRAPPERS = frozenset(
    {
        "private",
        "protected",
        "public",
        "module_function",
        "private_class_method",
        "public_class_method",
        "memoize",
    }
)
_MAGIC = re.compile(
    r"^\s*#\s*(?:-\*-|frozen_string_literal:|encoding:|coding:|rubocop:|typed:"
    r"|!/|:stopdoc:|:startdoc:)"
)


def _wanted(rel: str) -> bool:
    """Non-test .rb files (no spec/ or test/ trees, *_spec.rb, *_test.rb, test_*.rb)."""
    if not rel.endswith(".rb"):
        return False
    parts = rel.split("/")
    base = parts[-1]
    if base.endswith(("_spec.rb", "_test.rb")) or base.startswith("test_"):
        return False
    return not any(p in _TEST_DIRS for p in parts[:-1])


def rdoc_query(raw: str) -> str:
    """First sentence of an RDoc/YARD comment.

    Magic comments and :nodoc: are not documentation; a leading `:call-seq:`
    block and YARD tags (@param ...) are skipped; +code+, <tt>code</tt>,
    *bold* and _em_ render as their text.
    """
    if ":nodoc:" in raw:
        return ""
    lines = [ln for ln in raw.split("\n") if not _MAGIC.match(ln)]
    text = strip_comment_markers("\n".join(lines))
    paras = [p for p in re.split(r"\n\s*\n", text) if p.strip()]
    while paras and re.match(
        r"\s*(:?call-seq:|(\w+\.)?\w+[!?=]?\s*(\(.*\))?\s*(->|=>|→))", paras[0]
    ):
        paras = paras[1:]
    body = []
    for line in "\n\n".join(paras).split("\n"):
        if re.match(r"\s*@\w", line):
            break
        body.append(line)
    out = first_sentence("\n".join(body))
    out = re.sub(r"\+([^+\s][^+]*?)\+", r"\1", out)
    out = re.sub(r"(?<!\w)[*_]([^*_\s][^*_]*?)[*_](?!\w)", r"\1", out)
    return strip_html(out).strip()


def own_line_comments(src: bytes, root: Any) -> dict[int, str]:
    """Map row -> text of every `#` comment that stands alone on its line.

    Comments hang at varying depths of tree-sitter-ruby's tree (before the
    first statement of a body they are siblings of the body, not of `def`),
    so doc comments are matched by line adjacency instead of by siblings.
    """
    rows: dict[int, str] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "comment":
            line_start = src.rfind(b"\n", 0, node.start_byte) + 1
            alone = not src[line_start : node.start_byte].strip()
            if alone and node.start_point[0] == node.end_point[0]:
                rows[node.start_point[0]] = text_of(src, node)
        else:
            stack.extend(node.children)
    return rows


def comment_above(comments: dict[int, str], row: int) -> str:
    """The run of own-line comments ending on the line just above `row`."""
    lines = []
    row -= 1
    while row in comments:
        lines.append(comments[row])
        row -= 1
    return "\n".join(reversed(lines))


def _anchor(node: Any) -> Any:
    """The `private def x` call when the method is its single argument, else the method."""
    args = node.parent
    if args is not None and args.type == "argument_list" and args.named_child_count == 1:
        call = args.parent
        meth = call.child_by_field_name("method") if call is not None else None
        if meth is not None and meth.text.decode() in _WRAPPERS:
            return call
    return node


def _walk(
    src: bytes, node: Any, scope: list[str], path: str, out: list[Func], comments: dict[int, str]
) -> None:
    """Collect methods outside other methods; class/module names form the scope."""
    for child in node.children:
        if child.type in _METHODS:
            name = text_of(src, child.child_by_field_name("name"))
            qual = name if child.type == "method" else f"self.{name}"
            anchor = _anchor(child)
            out.append(
                Func(
                    path=path,
                    qualname="::".join(scope) + ("#" if scope else "") + qual,
                    code=node_code(src, anchor.start_byte, anchor.end_byte),
                    query=rdoc_query(comment_above(comments, anchor.start_point[0])),
                    names=(name.rstrip("!?="),),
                )
            )
        elif child.type in ("class", "module"):
            name_node = child.child_by_field_name("name")
            inner = [*scope, text_of(src, name_node) if name_node else "?"]
            _walk(src, child, inner, path, out, comments)
        else:
            _walk(src, child, scope, path, out, comments)


def parse_ruby(src: bytes, path: str) -> list[Func]:
    """All methods of one Ruby file, in source order."""
    tree = parser("ruby").parse(src)
    out: list[Func] = []
    _walk(src, tree.root_node, [], path, out, own_line_comments(src, tree.root_node))
    return out


def _parse_file(item: tuple[str, str]) -> list[Func]:
    """Worker: parse one file."""
    abs_path, rel = item
    return parse_ruby(Path(abs_path).read_bytes(), rel)


def source_files() -> list[tuple[str, str]]:
    """(absolute, stable relative) paths of the corpus files, sorted."""
    return package_sources([RUBY_STD_PKG, *RUBY_PKGS], ROOTS, _wanted)


def extract(workdir: Path) -> Iterator[Func]:
    """Methods of all corpus files in path order."""
    del workdir
    parser("ruby")
    yield from pooled_extract("ruby", source_files(), _parse_file)
