"""C corpus: the Linux 6.1 kernel source that Debian ships (linux-source-6.1).

The package holds one tarball (/usr/src/linux-source-6.1.tar.xz); it is
downloaded and unpacked, not installed (see debs.py), and only the `.c` files
of the chosen top-level folders are taken out of the tarball (`DIRS`: the
core kernel, drivers and x86; the other architectures would add near-copies).

Parsed with tree-sitter-c. Every function definition outside another function
is a document, also under `#if`/`#ifdef`. The doc comment is the comment right
above the definition (nothing but whitespace between): a kernel-doc block
`/** name() - description ...` gives the description after ` - `, another
comment its first sentence. Tools, samples, scripts, selftests and drivers/staging are excluded.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from scripts.corpora.debs import download, unpack
from scripts.corpora.pipeline import Func, pooled_extract
from scripts.corpora.text import first_sentence, strip_comment_markers
from scripts.corpora.treesit import node_code, only_whitespace_between, parser, text_of

KERNEL_PKG = "linux-source-6.1"
TARBALL = "usr/src/linux-source-6.1.tar.xz"
TOP = "linux-source-6.1"
PATH_PREFIX = "linux-6.1/"
DIRS = [
    "arch/x86", "block", "crypto", "drivers", "fs", "init", "io_uring", "ipc", "kernel", "lib",
    "mm", "net", "security", "sound", "virt",
]  # fmt: skip
_SKIP_DIRS = frozenset({"selftests", "testing", "tools", "samples", "scripts", "staging"})
_KDOC_HEAD = re.compile(r"^\s*(?:(?:struct|union|enum|typedef)\s+)?[\w.]+(?:\(\))?\s*-+\s*")


def kerneldoc_query(raw: str) -> str:
    """First sentence of a comment; kernel-doc's `name() - ` head is dropped."""
    text = strip_comment_markers(raw)
    if not text.strip() or text.lstrip().startswith(("SPDX", "Copyright")):
        return ""
    text = _KDOC_HEAD.sub("", text, count=1)
    return first_sentence(text).strip()


def _func_name(src: bytes, node: Any) -> str:
    """The identifier a function definition declares (through pointer declarators)."""
    decl = node.child_by_field_name("declarator")
    while decl is not None and decl.type != "identifier":
        inner = decl.child_by_field_name("declarator")
        if inner is None:
            break
        decl = inner
    return text_of(src, decl) if decl is not None and decl.type == "identifier" else ""


def _walk(src: bytes, root: Any, path: str, out: list[Func]) -> None:
    """Collect function definitions, descending through everything but function bodies.

    Iterative (an explicit stack in source order): the kernel has files whose
    initializers or macro soups nest deeper than Python's recursion limit.
    """
    stack = list(reversed(root.named_children))
    while stack:
        child = stack.pop()
        if child.type != "function_definition":
            stack.extend(reversed(child.named_children))
            continue
        name = _func_name(src, child)
        if not name:
            continue
        prev = child.prev_named_sibling
        query = ""
        if (
            prev is not None
            and prev.type == "comment"
            and only_whitespace_between(src, prev.end_byte, child.start_byte)
            and prev.end_point[0] + 1 >= child.start_point[0]
        ):
            query = kerneldoc_query(text_of(src, prev))
        out.append(
            Func(
                path=path,
                qualname=name,
                code=node_code(src, child.start_byte, child.end_byte),
                query=query,
                names=(name,),
            )
        )


def parse_c(src: bytes, path: str) -> list[Func]:
    """All top-level function definitions of one C file, in source order."""
    tree = parser("c").parse(src)
    out: list[Func] = []
    _walk(src, tree.root_node, path, out)
    return out


def _parse_file(item: tuple[str, str]) -> list[Func]:
    """Worker: parse one file."""
    abs_path, rel = item
    return parse_c(Path(abs_path).read_bytes(), rel)


def _wanted(rel: str) -> bool:
    """.c files of the chosen folders, outside tools, samples, scripts and selftests."""
    parts = rel.split("/")
    return rel.endswith(".c") and not any(p in _SKIP_DIRS for p in parts[:-1])


def source_files(root: Path) -> list[tuple[str, str]]:
    """(absolute, stable relative) paths of the kernel .c files, sorted."""
    items = []
    for top in DIRS:
        for f in sorted((root / TOP / top).rglob("*.c")):
            rel = f.relative_to(root / TOP).as_posix()
            if f.is_file() and not f.is_symlink() and _wanted(rel):
                items.append((str(f), PATH_PREFIX + rel))
    return sorted(set(items))


def extract(workdir: Path) -> Iterator[Func]:
    """Functions of the chosen kernel folders, in path order."""
    root = unpack(download([KERNEL_PKG]), workdir / "c")
    members = [f"{TOP}/{d}" for d in DIRS]
    print(f"  unpacking {len(DIRS)} folders of {TARBALL}", flush=True)
    subprocess.run(
        ["tar", "-xJf", str(root / TARBALL), "-C", str(root), "--exclude=*.h",
         "--exclude=*.S", "--exclude=Documentation", *members],
        check=True,
    )  # fmt: skip
    parser("c")
    yield from pooled_extract("c", source_files(root), _parse_file)
