"""Download Debian packages with `apt-get download` and unpack them without installing.

Hundreds of librust-*-dev packages cannot always be installed together (their
Depends pull in -sys libraries and version conflicts), yet only their files are
needed: `apt-get download` + `dpkg-deb -x` gives the exact files a package ships,
into a folder of our own, with no dependency resolution and no system change.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable
from pathlib import Path

from scripts.corpora.install import apt_update

DEFAULT_CACHE = Path(os.environ.get("CORPORA_DEB_CACHE", "/var/cache/esqlog-corpora-debs"))


def apt_names(pattern: str) -> list[str]:
    """Sorted names of the packages whose name matches the regex (apt-cache search)."""
    for attempt in range(2):
        out = subprocess.run(
            ["apt-cache", "search", "--names-only", pattern],
            capture_output=True,
            text=True,
            check=True,
        )
        names = {line.split(" ", 1)[0] for line in out.stdout.splitlines() if line.strip()}
        if names or attempt:
            return sorted(names)
        apt_update()  # a machine whose package lists were never fetched finds nothing
    return []


def _cached(cache: Path) -> dict[str, Path]:
    """Package name -> the .deb already in the cache (name is the part before `_`)."""
    return {p.name.split("_", 1)[0]: p for p in cache.glob("*.deb")}


def download(pkgs: Iterable[str], cache: Path = DEFAULT_CACHE, batch: int = 200) -> list[Path]:
    """The .deb of every package, downloading the missing ones in batches.

    A batch that fails (a name that vanished from the index) is retried one package
    at a time, so one bad name costs that package only; missing ones are reported.
    """
    pkgs = sorted(set(pkgs))
    cache.mkdir(parents=True, exist_ok=True)
    missing = [p for p in pkgs if p not in _cached(cache)]
    if missing:
        print(f"  apt-get download {len(missing)} package(s) into {cache}", flush=True)
    for i in range(0, len(missing), batch):
        chunk = missing[i : i + batch]
        cmd = ["apt-get", "download", "-qq"]
        if subprocess.run([*cmd, *chunk], cwd=cache, check=False).returncode != 0:
            for pkg in chunk:
                subprocess.run([*cmd, pkg], cwd=cache, check=False)
    have = _cached(cache)
    lost = [p for p in pkgs if p not in have]
    if lost:
        names = " ".join(lost[:10])
        print(f"  {len(lost)} package(s) could not be downloaded: {names}", flush=True)
    return [have[p] for p in pkgs if p in have]


def unpack(debs: Iterable[Path], dest: Path) -> Path:
    """Extract every .deb's files under `dest` (as dpkg would under /) and return it."""
    dest.mkdir(parents=True, exist_ok=True)
    for deb in debs:
        subprocess.run(["dpkg-deb", "-x", str(deb), str(dest)], check=True)
    return dest
