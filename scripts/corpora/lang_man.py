"""Prose control corpus: rendered man pages.

Sources: the English pages (/usr/share/man/man*/) shipped by a fixed list of
Debian packages (MAN_PKGS, installed by the build), found with `dpkg -L`, so
the corpus does not depend on what else is installed (a machine with the
Google Cloud CLI has 16K near-identical gcloud pages, for instance).
Pages are rendered with groff (-mandoc handles man and mdoc, -t tables, -k
input encoding) to 80-column plain text. The query is the NAME line's
description (after the dash); the document is the page without its NAME
section and without the running header and footer lines, which repeat the
page name.
"""

from __future__ import annotations

import gzip
import os
import re
import subprocess
from collections.abc import Iterator
from multiprocessing import Pool
from pathlib import Path

from scripts.corpora.install import dpkg_files, ensure_apt
from scripts.corpora.pipeline import Func, Progress
from scripts.corpora.text import normalize_space

MAN_PKGS = [
    "manpages",
    "manpages-dev",  # Linux system calls, libc, files, overviews
    "libssl-doc",
    "perl-doc",
    "git-man",
    "libx11-doc",
    "tcl8.6-doc",  # large API references
    "coreutils",
    "util-linux",
    "bash",
    "findutils",
    "grep",
    "sed",
    "tar",
    "gzip",
    "openssh-client",
    "curl",
    "binutils",
    "man-db",
]
MAN_ROOT = "/usr/share/man"
_PAGE_DIR = re.compile(r"^/usr/share/man/(man[1-9n])/[^/]+$")
_DASH = re.compile(r"\s+[-\u2212\u2010\u2013\u2014]+\s+")


def read_source(path: str) -> bytes:
    """Raw roff source, gunzipped when needed."""
    data = Path(path).read_bytes()
    return gzip.decompress(data) if path.endswith(".gz") else data


def render(source: bytes) -> str:
    """Render roff to plain text (no overstrike, no SGR) at 80 columns."""
    proc = subprocess.run(
        ["groff", "-k", "-t", "-mandoc", "-Tutf8", "-P-cbou", "-rLL=80n", "-rHY=0"],
        input=source,
        capture_output=True,
        check=False,
        env={**os.environ, "LC_ALL": "C.UTF-8"},
    )
    text = proc.stdout.decode("utf-8", "replace")
    return re.sub(r"\n\s*\n(\s*\n)+", "\n\n", text)


def split_page(text: str) -> tuple[list[str], str, str]:
    """Split rendered text into (names, description, rest of the page).

    Returns an empty description when there is no parsable NAME section.
    """
    lines = text.split("\n")
    nonblank = [i for i, ln in enumerate(lines) if ln.strip()]
    if len(nonblank) < 3:
        return [], "", ""
    body = lines[nonblank[0] + 1 : nonblank[-1]]  # drop running header and footer
    try:
        start = next(i for i, ln in enumerate(body) if ln.strip() == "NAME")
    except StopIteration:
        return [], "", ""
    end = start + 1
    while end < len(body) and (not body[end].strip() or body[end][:1].isspace()):
        end += 1
    name_line = normalize_space(" ".join(body[start + 1 : end]))
    rest = "\n".join(body[:start] + body[end:]).strip("\n")
    parts = _DASH.split(name_line, maxsplit=1)
    if len(parts) != 2:
        return [], "", rest
    names = [n.strip() for n in parts[0].split(",") if n.strip()]
    return names, parts[1].strip(), rest


def _page(item: tuple[str, str]) -> Func | None:
    """Worker: render one page; None for `.so` redirects and unrenderable pages."""
    abs_path, rel = item
    try:
        source = read_source(abs_path)
    except (OSError, EOFError, gzip.BadGzipFile):
        return None
    if source.lstrip().startswith(b".so ") and source.count(b"\n") <= 3:
        return None
    names, desc, rest = split_page(render(source))
    if not rest.strip():
        return None
    section = rel.split("/")[0][3:]
    stem = Path(rel).name.removesuffix(".gz")
    title = names[0] if names else stem.rsplit(".", 1)[0]
    return Func(
        path=f"man/{rel}",
        qualname=f"{title}({section})",
        code=rest,
        query=desc,
        names=tuple(names) or (title,),
    )


def source_files() -> list[tuple[str, str]]:
    """Regular (non-symlink) English pages of MAN_PKGS, sorted by path."""
    ensure_apt(["groff-base", *MAN_PKGS])
    return [(f, f[len(MAN_ROOT) + 1 :]) for f in dpkg_files(MAN_PKGS) if _PAGE_DIR.match(f)]


def extract(workdir: Path) -> Iterator[Func]:
    """All pages in section/name order."""
    del workdir
    items = source_files()
    prog = Progress("man", len(items), every=1000)
    with Pool(2) as pool:
        for func in pool.imap(_page, items, chunksize=16):
            prog.step()
            if func is not None:
                yield func
