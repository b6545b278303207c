"""Rust corpus: the crate sources Debian ships in its librust-*-dev packages.

Each librust-*-dev package carries one crate's source under
/usr/share/cargo/registry/<crate>-<version>/. The packages are downloaded and
unpacked, not installed (see debs.py): only the files are needed. Feature
packages (`librust-foo+bar-dev`) ship no source and are skipped.

Parsed with tree-sitter-rust. Functions are collected from files, `mod`,
`impl` and `trait` bodies (functions nested in function bodies belong to their
enclosing function's document). The doc comment is the run of `///` lines
directly above the function, among its attributes; attributes stay in the
document, the doc comment does not. Test code is excluded: `tests/`,
`benches/`, `examples/` trees, `#[cfg(test)]` modules and `#[test]`/`#[bench]`
functions.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from scripts.corpora.debs import apt_names, download, unpack
from scripts.corpora.pipeline import Func, pooled_extract
from scripts.corpora.text import first_sentence, strip_comment_markers, strip_html
from scripts.corpora.treesit import node_code, parser, text_of

REGISTRY = "usr/share/cargo/registry/"
PATH_PREFIX = "cargo/"
_SKIP_DIRS = frozenset({"tests", "test", "benches", "examples", "fuzz", "target"})
_TEST_ATTR = re.compile(r"#\s*\[\s*(test|bench|cfg\s*\(\s*test\s*\)|tokio::test)\b")
_MD_LINK = re.compile(r"\[`?([^\]`]+)`?\]\([^)]*\)|\[`([^\]`]+)`\]|\[([^\]]+)\]\[[^\]]*\]")


def _wanted(rel: str) -> bool:
    """Non-test .rs files of the crate (no tests/, benches/, examples/, build.rs)."""
    if not rel.endswith(".rs"):
        return False
    parts = rel.split("/")
    return parts[-1] != "build.rs" and not any(p in _SKIP_DIRS for p in parts[1:-1])


def rustdoc_query(raw: str) -> str:
    """First sentence of a `///` comment, its Markdown rendered as plain text.

    Intra-doc links [`Foo`] and [text](url) keep their text, backticks and
    emphasis go; a leading `# Examples`-style heading paragraph gives no query.
    """
    text = strip_comment_markers(raw)
    if text.lstrip().startswith("#"):
        return ""
    text = _MD_LINK.sub(lambda m: m.group(1) or m.group(2) or m.group(3), text)
    out = first_sentence(text).replace("`", "")
    out = re.sub(r"(?<!\w)[*_]{1,2}([^*_\s][^*_]*?)[*_]{1,2}(?!\w)", r"\1", out)
    return strip_html(out).strip()


def _leading(src: bytes, node: Any) -> tuple[Any, list[str], bool]:
    """(first attribute node or the item, doc comment lines, is test code) above an item."""
    start, docs, test = node, [], False
    prev = node.prev_sibling
    while prev is not None and prev.type in ("attribute_item", "line_comment"):
        text = text_of(src, prev)
        if prev.type == "attribute_item":
            test = test or bool(_TEST_ATTR.match(text))
            if not docs:
                start = prev
        elif text.startswith("///") and not text.startswith("////"):
            docs.append(text)
        else:
            break
        prev = prev.prev_sibling
    return start, list(reversed(docs)), test


def _type_name(src: bytes, node: Any, field: str) -> str:
    """Name of an impl's type or a trait/mod, generics dropped (`Vec<T>` -> `Vec`)."""
    child = node.child_by_field_name(field)
    return re.sub(r"<.*", "", text_of(src, child)).strip() if child is not None else "?"


def _walk(src: bytes, node: Any, scope: list[str], path: str, out: list[Func]) -> None:
    """Collect function items outside function bodies; mod/impl/trait names form the scope."""
    for child in node.named_children:
        if child.type == "function_item":
            start, docs, test = _leading(src, child)
            if test:
                continue
            name = text_of(src, child.child_by_field_name("name"))
            out.append(
                Func(
                    path=path,
                    qualname="::".join([*scope, name]),
                    code=node_code(src, start.start_byte, child.end_byte),
                    query=rustdoc_query("\n".join(docs)),
                    names=(name,),
                )
            )
        elif child.type in ("mod_item", "impl_item", "trait_item"):
            body = child.child_by_field_name("body")
            if body is None or _leading(src, child)[2]:
                continue
            field = "type" if child.type == "impl_item" else "name"
            _walk(src, body, [*scope, _type_name(src, child, field)], path, out)


def parse_rust(src: bytes, path: str) -> list[Func]:
    """All functions of one Rust file, in source order."""
    tree = parser("rust").parse(src)
    out: list[Func] = []
    _walk(src, tree.root_node, [], path, out)
    return out


def _parse_file(item: tuple[str, str]) -> list[Func]:
    """Worker: parse one file."""
    abs_path, rel = item
    return parse_rust(Path(abs_path).read_bytes(), rel)


def source_files(root: Path) -> list[tuple[str, str]]:
    """(absolute, stable relative) paths of the crate sources unpacked under root."""
    registry = root / REGISTRY
    items = []
    for f in sorted(registry.rglob("*.rs")):
        rel = f.relative_to(registry).as_posix()
        if f.is_file() and not f.is_symlink() and _wanted(rel):
            items.append((str(f), PATH_PREFIX + rel))
    return items


def extract(workdir: Path) -> Iterator[Func]:
    """Functions of every librust-*-dev crate, in path order."""
    pkgs = [p for p in apt_names(r"^librust-.*-dev$") if "+" not in p]
    root = unpack(download(pkgs), workdir / "rust")
    parser("rust")
    yield from pooled_extract("rust", source_files(root), _parse_file)
