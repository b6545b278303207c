"""Go corpora: the Debian Go standard library and Debian golang-*-dev libraries.

Parsing is done by goextract/ (go/parser + go/ast), so doc comments and
function spans are exactly what `go doc` sees. Test files, testdata/, vendor/
and files marked "Code generated ... DO NOT EDIT." are skipped.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from scripts.corpora.install import depends_closure, dpkg_files, ensure_apt, find_go
from scripts.corpora.pipeline import Func
from scripts.corpora.text import first_sentence, strip_comment_markers

GO_STD_PKG = "golang-1.19-src"  # Debian 12's Go standard library sources
GO_STD_ROOT = "/usr/share/go-1.19"
GOCODE_ROOT = "/usr/share/gocode/src"
# Large, widely used Go libraries packaged by Debian 12; their golang-*-dev
# dependencies are pulled in by apt and included as well (depends_closure).
GO_LIB_PKGS = [
    "golang-golang-x-tools-dev",
    "golang-golang-x-net-dev",
    "golang-golang-x-text-dev",
    "golang-golang-x-crypto-dev",
    "golang-golang-x-sys-dev",
    "golang-google-grpc-dev",
    "golang-github-docker-docker-dev",
    "golang-github-go-git-go-git-dev",
    "golang-github-minio-minio-go-v7-dev",
    "golang-github-gin-gonic-gin-dev",
    "golang-github-syncthing-syncthing-dev",
    "golang-github-google-go-github-dev",
    "golang-github-gogo-protobuf-dev",
    "golang-github-lucas-clemente-quic-go-dev",
    "golang-github-miekg-dns-dev",
    "golang-etcd-server-dev",
    "golang-github-containerd-containerd-dev",
    "golang-github-opencontainers-runc-dev",
    "golang-github-go-kit-kit-dev",
]
_DIRECTIVE = re.compile(r"^\s*//(?:[a-z0-9]+:[a-z0-9]|line |export |extern |nolint)")
_DOC_LINK = re.compile(r"\[(\*?[A-Za-z_][\w.]*)\]")
_SKIP_PARTS = frozenset({"testdata", "vendor"})

GOEXTRACT_DIR = Path(__file__).resolve().parent / "goextract"


def go_query(raw_doc: str) -> str:
    """First sentence of a Go doc comment, with directives and doc links removed.

    `//go:noinline`-style directives are part of the AST's Doc group but not of
    the documentation; `[io.Reader]` doc links render as plain `io.Reader`.
    """
    if not raw_doc:
        return ""
    lines = [ln for ln in raw_doc.split("\n") if not _DIRECTIVE.match(ln)]
    text = strip_comment_markers("\n".join(lines))
    return _DOC_LINK.sub(r"\1", first_sentence(text))


def _wanted(path: str) -> bool:
    """Non-test .go files outside testdata/ and vendor/ trees."""
    if not path.endswith(".go") or path.endswith("_test.go"):
        return False
    parts = path.split("/")
    return not any(p in _SKIP_PARTS or p.startswith((".", "_")) for p in parts[:-1])


def build_extractor(workdir: Path) -> Path:
    """Compile goextract with whatever Go toolchain is available (stdlib only)."""
    exe = workdir / "goextract"
    env_go = find_go()
    print(f"  building goextract with {env_go}", flush=True)
    subprocess.run(
        [env_go, "build", "-o", str(exe), "."],
        cwd=GOEXTRACT_DIR,
        check=True,
        env={**os.environ, "GO111MODULE": "on", "GOTOOLCHAIN": "local", "GOFLAGS": ""},
    )
    return exe


def _run_extractor(exe: Path, files: list[str], base: str, prefix: str) -> Iterator[Func]:
    """Run goextract on a file list; paths become prefix + path relative to base."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as fh:
        fh.write("\n".join(files) + "\n")
        listfile = fh.name
    print(f"  parsing {len(files)} Go files under {base}", flush=True)
    proc = subprocess.run(
        [str(exe), "-files", listfile, base], capture_output=True, text=True, check=True
    )
    Path(listfile).unlink()
    for line in proc.stdout.splitlines():
        rec = json.loads(line)
        name = rec["name"]
        qual = f"{rec['recv']}.{name}" if rec["recv"] else name
        yield Func(
            path=f"{prefix}/{rec['path']}",
            qualname=qual,
            code=rec["code"],
            query=go_query(rec["doc"]),
            names=(name,),
        )


def std_files() -> list[str]:
    """Go standard library files of the Debian source package (src/ and misc/)."""
    ensure_apt([GO_STD_PKG])
    return [f for f in dpkg_files([GO_STD_PKG]) if _wanted(f[len(GO_STD_ROOT) :])]


def lib_packages() -> list[str]:
    """The golang-*-dev library packages of the corpus, with their dependencies."""
    ensure_apt(GO_LIB_PKGS)
    return depends_closure(GO_LIB_PKGS, r"^golang-.*-dev$")


def extract_std(workdir: Path) -> Iterator[Func]:
    """Functions of the Go standard library only (the bundled sample's source)."""
    exe = build_extractor(workdir)
    yield from _run_extractor(exe, std_files(), GO_STD_ROOT, "go-1.19")


def extract_all(workdir: Path) -> Iterator[Func]:
    """Standard library first, then the libraries in path order."""
    exe = build_extractor(workdir)
    yield from _run_extractor(exe, std_files(), GO_STD_ROOT, "go-1.19")
    pkgs = lib_packages()
    print(f"  {len(pkgs)} golang-*-dev packages in the dependency closure", flush=True)
    files = [f for f in dpkg_files(pkgs) if f.startswith(GOCODE_ROOT + "/")]
    files = [f for f in files if _wanted(f[len(GOCODE_ROOT) :])]
    yield from _run_extractor(exe, files, GOCODE_ROOT, "gocode")
