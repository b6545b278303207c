"""Shared tree-sitter helpers (Java and Ruby use tree-sitter wheels from PyPI).

The grammars are loaded by esqlog's own loader (esqlog.indexing.languages, which
``esqlog index`` uses), so both read code with the same wheels in the same way.
"""

from __future__ import annotations

from typing import Any

from scripts.corpora.install import ensure_pip
from scripts.corpora.text import dedent_code


def parser(lang: str) -> Any:
    """A cached tree-sitter Parser for `lang` ("java" or "ruby"), pip-installing it."""
    from esqlog.indexing.languages import grammar_module
    from esqlog.indexing.languages import parser as cached_parser

    module = grammar_module(lang)
    ensure_pip({"tree_sitter": "tree-sitter>=0.22", module: module.replace("_", "-")})
    return cached_parser(lang)


def node_code(src: bytes, start_byte: int, end_byte: int) -> str:
    """Source text of a node, dedented using the whitespace before it on its line."""
    line_start = src.rfind(b"\n", 0, start_byte) + 1
    prefix = src[line_start:start_byte].decode("utf-8", "replace")
    body = src[start_byte:end_byte].decode("utf-8", "replace")
    return dedent_code(prefix, body)


def text_of(src: bytes, node: Any) -> str:
    """Decoded source text of a node."""
    return src[node.start_byte : node.end_byte].decode("utf-8", "replace")


def only_whitespace_between(src: bytes, a_end: int, b_start: int) -> bool:
    """True when just whitespace (so no code or blank-line gap rules apply) separates."""
    return not src[a_end:b_start].strip()
