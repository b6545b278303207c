"""Idempotent installers and package file listings (Debian apt, PyPI via pip).

The corpora come from Debian source/library packages so that a fresh machine
rebuilds the same corpus: installing is part of the build, and file lists come
from `dpkg -L` (only the named packages' files, whatever else is installed).
"""

from __future__ import annotations

import importlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping

_apt_updated = False


def installed(pkg: str) -> bool:
    """True when dpkg reports the package as fully installed."""
    res = subprocess.run(
        ["dpkg-query", "-W", "-f=${Status}", pkg], capture_output=True, text=True, check=False
    )
    return res.returncode == 0 and res.stdout.strip().endswith("install ok installed")


def ensure_apt(pkgs: Iterable[str]) -> None:
    """apt-get install the packages not yet installed (runs apt-get update once)."""
    missing = [p for p in pkgs if not installed(p)]
    if not missing:
        return
    if os.geteuid() != 0:
        raise SystemExit(f"need root to apt-get install: {' '.join(missing)}")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    apt_update()
    print(f"  apt-get install {len(missing)} package(s): {' '.join(missing)}", flush=True)
    subprocess.run(
        ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing],
        check=True,
        env=env,
    )


def apt_update() -> None:
    """apt-get update, once per build (package lists may be missing or stale)."""
    global _apt_updated
    if not _apt_updated:
        print("  apt-get update", flush=True)
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
        _apt_updated = True


def ensure_pip(modules: dict[str, str]) -> None:
    """pip install (into this interpreter) the distributions whose module is missing.

    `modules` maps an import name to its PyPI requirement.
    """
    missing = []
    for mod, req in modules.items():
        try:
            importlib.import_module(mod)
        except ImportError:
            missing.append(req)
    if missing:
        print(f"  pip install {' '.join(missing)}", flush=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", *missing], check=True)
        importlib.invalidate_caches()


def dpkg_files(pkgs: Iterable[str]) -> list[str]:
    """Sorted regular files shipped by the packages (symlinks and dirs dropped)."""
    files: set[str] = set()
    for pkg in pkgs:
        out = subprocess.run(["dpkg", "-L", pkg], capture_output=True, text=True, check=True)
        for line in out.stdout.splitlines():
            if os.path.isfile(line) and not os.path.islink(line):
                files.add(line)
    return sorted(files)


def package_sources(
    pkgs: Iterable[str], roots: Mapping[str, str], wanted: Callable[[str], bool]
) -> list[tuple[str, str]]:
    """(absolute, stable relative) paths of the wanted files the packages install.

    ``roots`` maps an install folder to the prefix that replaces it in the stable path, so
    ids do not depend on where a distribution puts its files.
    """
    pkgs = list(pkgs)
    ensure_apt(pkgs)
    items = []
    for f in dpkg_files(pkgs):
        for root, prefix in roots.items():
            if f.startswith(root) and wanted(f[len(root) :]):
                items.append((f, prefix + f[len(root) :]))
    return items


def depends_closure(roots: Iterable[str], pattern: str) -> list[str]:
    """Installed packages reachable from `roots` by Depends whose name matches.

    Used for Go: the golang-*-dev packages named in the build pull in their
    library dependencies, which are part of the corpus too.
    """
    rx = re.compile(pattern)
    todo = list(roots)
    seen: set[str] = set()
    while todo:
        pkg = todo.pop()
        if pkg in seen or not installed(pkg):
            continue
        seen.add(pkg)
        out = subprocess.run(
            ["dpkg-query", "-W", "-f=${Depends}", pkg], capture_output=True, text=True, check=True
        )
        for alt in out.stdout.split(","):
            for dep in alt.split("|"):
                name = dep.strip().split(" ")[0].split(":")[0]
                if name and rx.match(name) and name not in seen:
                    todo.append(name)
    return sorted(seen)


def find_go() -> str:
    """A Go toolchain to build the extractor: PATH, /usr/local/go, else Debian's."""
    for cand in (shutil.which("go"), "/usr/local/go/bin/go"):
        if cand and os.path.exists(cand):
            return cand
    ensure_apt(["golang-go"])
    return shutil.which("go") or "/usr/bin/go"
