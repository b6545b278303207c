"""Shared tree-sitter helpers (Java and Ruby use tree-sitter wheels from PyPI)."""

from __future__ import annotations

from typing import Any

from corpora.install import ensure_pip
from corpora.text import dedent_code

_PARSERS: dict[str, Any] = {}


def parser(lang: str) -> Any:
    """A cached tree-sitter Parser for `lang` ("java" or "ruby"), pip-installing it."""
    if lang not in _PARSERS:
        module = f"tree_sitter_{lang}"
        ensure_pip({"tree_sitter": "tree-sitter>=0.22", module: f"tree-sitter-{lang}"})
        import importlib

        import tree_sitter

        grammar = importlib.import_module(module)
        _PARSERS[lang] = tree_sitter.Parser(tree_sitter.Language(grammar.language()))
    return _PARSERS[lang]


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
