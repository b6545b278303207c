"""The esqlog-terms engine plugin as the engines' standard plugin zip, for one exact release.

Why a zip built here: both engines install plugins only with their own tool
(``bin/opensearch-plugin install``, ``bin/elasticsearch-plugin install``) and only when the
zip's plugin-descriptor.properties names the node's exact version, so a user needs a zip per
engine release. The sources (plugins/esqlog-terms: the Lucene query, each engine's glue) are
compiled with the JDK's javac against that release's own jars, which come from the release's
integ-test distribution on Maven Central (as scripts/engines/engine.sh fetches them for the
test nodes) or from an unpacked distribution. No Gradle and no engine build plugins: they
need a network of their own; javac and the engine's jars are all the build needs.

Standard library only (the test nodes' scripts run it before any virtualenv exists):
``python3 -m esqlog.engine.plugin_zip --engine opensearch --distribution HOME --out ZIP``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.request
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from esqlog.errors import EsqlogError, UsageError

NAME = "esqlog-terms"
ENGINES = ("opensearch", "elasticsearch")
#: The oldest release of each engine major the sources are written for, and the newest major.
SUPPORTED = {"opensearch": ((2, 11), 3), "elasticsearch": ((8, 11), 9)}
MAVEN = "https://repo1.maven.org/maven2"
_VERSION = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")


@dataclass(frozen=True)
class Target:
    """One engine release: what the zip is built for."""

    engine: str
    version: str

    @property
    def java_release(self) -> int:
        """The engine's Java floor: OpenSearch 3.x and Elasticsearch 9.x need 21, older 17."""
        major = int(self.version.split(".")[0])
        newest = SUPPORTED[self.engine][1]
        return 21 if major >= newest else 17

    @property
    def release(self) -> tuple[int, int]:
        """(major, minor), what the per-release-range source folders are chosen by."""
        major, minor = self.version.split(".")[:2]
        return int(major), int(minor)

    @property
    def distribution_url(self) -> str:
        group = f"org/{self.engine}/distribution/integ-test-zip/{self.engine}"
        return f"{MAVEN}/{group}/{self.version}/{self.engine}-{self.version}.zip"


def target(engine: str, version: str) -> Target:
    """The checked target: a known engine and a release the sources support, else one line."""
    if engine not in ENGINES:
        raise UsageError(f"unknown engine {engine!r}", "use --engine opensearch or elasticsearch")
    found = _VERSION.match(version)
    if not found:
        raise UsageError(
            f"--version {version!r} is not a release number",
            "give the node's exact version, e.g. 2.19.1 (GET / shows it)",
        )
    major, minor = int(found[1]), int(found[2])
    oldest, newest = SUPPORTED[engine]
    if (major, minor) < oldest or major > newest:
        raise UsageError(
            f"{engine} {version} is not supported by esqlog-terms",
            f"supported: {engine} {oldest[0]}.{oldest[1]} and later, up to "
            f"{newest}.x (docs/plugin.md)",
        )
    return Target(engine, version)


def sources_folder() -> Path:
    """plugins/esqlog-terms of a checkout, else the copy the wheel carries
    (esqlog/plugins/esqlog-terms, pyproject's package-dir)."""
    here = Path(__file__).resolve()
    for candidate in (here.parents[2] / "plugins" / NAME, here.parents[1] / "plugins" / NAME):
        if (candidate / "VERSION").is_file():
            return candidate
    raise EsqlogError(
        "the esqlog-terms sources are not installed with this esqlog",
        "build from a checkout of esqlog (plugins/esqlog-terms)",
    )


def plugin_version(sources: Path) -> str:
    return (sources / "VERSION").read_text("utf-8").strip()


def java_files(sources: Path, tgt: Target, lib: Path | None = None) -> list[Path]:
    """The shared Lucene code, this engine's glue, the classes whose engine API moved between
    releases (``opensearch-2.11/`` up to 2.x, ``opensearch-3.0/`` from 3.0; the Elasticsearch
    eras of ``elasticsearch-8.11/`` to ``-9.1/`` and the bounded ``-8.13-9.0/``) and those whose
    Lucene API moved (``lucene-9.0/``: 9.x, ``lucene-10.0/``: 10.0-10.3, ``lucene-10.4/`` from
    10.4, ``lucene-9.0-10.3/``: 9.0 to 10.3), chosen by :func:`range_folders` for the release
    and for the Lucene it ships (``lib``'s lucene-core jar), in a stable order."""
    folders = [sources / "lucene" / "src", sources / tgt.engine / "src"]
    for prefix, release in ((tgt.engine, tgt.release), ("lucene", lucene_release(tgt, lib))):
        folders += range_folders(sources, prefix, release)
    return sorted(path for folder in folders for path in folder.rglob("*.java"))


_RANGE = re.compile(r"^(\d+)\.(\d+)(?:-(\d+)\.(\d+|x))?$")


def range_folders(sources: Path, prefix: str, release: tuple[int, int]) -> list[Path]:
    """The version-specific source folders of ``prefix`` (an engine, or ``lucene``) that
    ``release`` (major, minor) compiles: the newest open range starting at or before it
    (``lucene-10.0/`` serves 10.0 until ``lucene-10.4/`` takes over), plus every bounded
    range that holds it (``lucene-9.0-10.3/``: 9.0 to 10.3, both ends included;
    ``elasticsearch-9.1-9.x/``: 9.1 and every later 9.x).

    Why two kinds: an open range holds the classes of one API era, each era its own copy of
    the class whose API moved; a class that stayed the same across eras goes once into a
    bounded range spanning them, instead of a copy per era (so no two folders a release
    compiles define one class); one that has not changed since (``-9.1-9.x``) spans the
    eras to its major's end. This is the one selection rule: the Maven poms' regex
    properties and tests/unit/test_plugin_maven.py follow it, and
    scripts/engines/test-plugin-java.sh asks it (``--lucene-folders``)."""
    open_ranges: list[tuple[tuple[int, int], Path]] = []
    bounded: list[Path] = []
    for folder in sorted(sources.glob(f"{prefix}-*")):
        found = _RANGE.match(folder.name.removeprefix(f"{prefix}-"))
        if not found or not (folder / "src").is_dir():
            continue
        start = (int(found[1]), int(found[2]))
        if found[3] is None:
            open_ranges.append((start, folder / "src"))
        else:  # "x": every later minor of that major
            end = (int(found[3]), sys.maxsize if found[4] == "x" else int(found[4]))
            if start <= release <= end:
                bounded.append(folder / "src")
    newest = max((r for r in open_ranges if r[0] <= release), default=None)
    return ([newest[1]] if newest else []) + bounded


#: The first release that ships Lucene 10.4 (its impacts API), only for when no distribution
#: is at hand (a build always reads its distribution's own lucene-core jar): OpenSearch 3.6.0
#: ships 10.4.0 and Elasticsearch 9.2.0 10.3.1 (their lib/ folders); later Elasticsearch 9.x
#: are taken to ship 10.4 (unchecked).
LUCENE_10_4_FROM = {"opensearch": (3, 6), "elasticsearch": (9, 3)}


def lucene_release(tgt: Target, lib: Path | None = None) -> tuple[int, int]:
    """(major, minor) of the Lucene the release ships: from ``lib``'s lucene-core jar when
    given, else from what is known of the engine's releases."""
    if lib is not None:
        for jar in lib.glob("lucene-core-*.jar"):
            found = re.fullmatch(r"lucene-core-(\d+)\.(\d+)\.\d+(-.*)?\.jar", jar.name)
            if found:
                return int(found[1]), int(found[2])
    if tgt.release >= LUCENE_10_4_FROM[tgt.engine]:
        return 10, 4
    return (10, 0) if tgt.java_release >= 21 else (9, 0)


def digest(sources: Path, tgt: Target, lib: Path | None = None) -> str:
    """What the zip is made of: a changed source or plugin version makes another zip."""
    h = hashlib.sha1(f"{plugin_version(sources)} {tgt.engine} {tgt.version}".encode())
    for path in java_files(sources, tgt, lib):
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def find_javac(release: int) -> Path:
    """The newest JDK whose javac targets ``release``: ESQLOG_JAVA_HOME, JAVA_HOME, then the
    JDKs under /usr/lib/jvm, then javac on PATH."""
    homes = [os.environ.get("ESQLOG_JAVA_HOME", ""), os.environ.get("JAVA_HOME", "")]
    jvm = Path("/usr/lib/jvm")
    if jvm.is_dir():
        homes += sorted((str(p) for p in jvm.iterdir()), reverse=True)
    candidates = [Path(h) / "bin" / "javac" for h in homes if h]
    on_path = shutil.which("javac")
    if on_path:
        candidates.append(Path(on_path))
    for javac in candidates:
        if javac.is_file() and _javac_major(javac) >= release:
            return javac
    raise EsqlogError(
        f"no JDK {release} or newer found (javac)",
        f"install a JDK >= {release} or set ESQLOG_JAVA_HOME to one",
    )


def _javac_major(javac: Path) -> int:
    try:
        out = subprocess.run(
            [str(javac), "-version"], capture_output=True, text=True, timeout=60, check=False
        )
    except OSError:
        return 0
    found = re.search(r"javac (\d+)", out.stdout + out.stderr)
    return int(found[1]) if found else 0


def distribution_zip(tgt: Target, say: Callable[[str], None]) -> Path:
    """The release's integ-test distribution in the local Maven repository, fetched once."""
    repo = Path(os.environ.get("MAVEN_REPO", Path.home() / ".m2" / "repository"))
    local = repo / tgt.distribution_url.removeprefix(MAVEN + "/")
    if local.is_file() and local.stat().st_size > 0:
        return local
    say(f"downloading {tgt.engine} {tgt.version}'s jars from Maven Central")
    local.parent.mkdir(parents=True, exist_ok=True)
    part = local.with_suffix(".part")
    try:
        with (
            urllib.request.urlopen(tgt.distribution_url, timeout=120) as answer,
            part.open("wb") as out,
        ):
            shutil.copyfileobj(answer, out)
    except OSError as exc:
        part.unlink(missing_ok=True)
        raise EsqlogError(
            f"could not fetch {tgt.distribution_url}: {exc}",
            "check the version exists on Maven Central, or pass --distribution "
            "with an unpacked distribution of that release",
        ) from None
    part.replace(local)
    return local


def _libs_from_zip(archive: Path, into: Path) -> Path:
    """lib/*.jar of a distribution zip (its one top folder stripped) into ``into``."""
    into.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(archive) as zf:
        for info in zf.infolist():
            parts = Path(info.filename).parts
            if len(parts) == 3 and parts[1] == "lib" and parts[2].endswith(".jar"):
                with zf.open(info) as src, (into / parts[2]).open("wb") as dst:
                    shutil.copyfileobj(src, dst)
    return into


def descriptor(tgt: Target, version: str) -> str:
    """plugin-descriptor.properties: the keys both tools check, the exact engine version."""
    lines = [
        "description=esqlog_terms: one BM25 saturation over a list of terms",
        f"version={version}",
        f"name={NAME}",
        "classname=esqlog.terms.TermsPlugin",
        f"java.version={tgt.java_release}",
        f"{tgt.engine}.version={tgt.version}",
    ]
    if tgt.engine == "opensearch":
        lines += [f"custom.foldername={NAME}", "extended.plugins=", "has.native.controller=false"]
    return "\n".join(lines) + "\n"


def _jar_entries(classes: Path) -> Iterator[tuple[str, Path]]:
    for path in sorted(classes.rglob("*.class")):
        yield path.relative_to(classes).as_posix(), path


def build(
    tgt: Target,
    out: Path,
    distribution: Path | None = None,
    say: Callable[[str], None] = lambda line: None,
) -> Path:
    """Compile the sources against the release's jars and write the plugin zip to ``out``
    (atomically: a temporary file renamed)."""
    sources = sources_folder()
    version = plugin_version(sources)
    javac = find_javac(tgt.java_release)
    with tempfile.TemporaryDirectory(prefix="esqlog-terms-") as tmp:
        work = Path(tmp)
        if distribution is not None:
            lib = distribution / "lib"
            if not lib.is_dir():
                raise UsageError(
                    f"{distribution} has no lib/ folder",
                    "pass the home folder of an unpacked distribution",
                )
        else:
            lib = _libs_from_zip(distribution_zip(tgt, say), work / "lib")
        say(
            f"compiling esqlog-terms {version} for {tgt.engine} {tgt.version} "
            f"(--release {tgt.java_release}, {javac})"
        )
        run = subprocess.run(
            [
                str(javac),
                "-nowarn",
                "-Xlint:-options",
                "--release",
                str(tgt.java_release),
                "-d",
                str(work / "classes"),
                "-cp",
                f"{lib}/*",
                *map(str, java_files(sources, tgt, lib)),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if run.returncode != 0:
            first = next((ln for ln in run.stderr.splitlines() if "error:" in ln), run.stderr)
            raise EsqlogError(
                f"esqlog-terms does not compile against {tgt.engine} "
                f"{tgt.version}: {first.strip()}",
                "report it with the version; docs/plugin.md lists the ones tested",
            )
        jar = work / f"{NAME}.jar"
        with zipfile.ZipFile(jar, "w", zipfile.ZIP_DEFLATED) as zf:
            for name, path in _jar_entries(work / "classes"):
                zf.write(path, name)
        out.parent.mkdir(parents=True, exist_ok=True)
        part = out.with_name(out.name + ".part")
        with zipfile.ZipFile(part, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.write(jar, f"{NAME}.jar")
            zf.writestr("plugin-descriptor.properties", descriptor(tgt, version))
        part.replace(out)
    return out


def zip_name(tgt: Target) -> str:
    return f"{NAME}-{plugin_version(sources_folder())}-{tgt.engine}-{tgt.version}.zip"


def _version_of(distribution: Path, engine: str) -> str:
    for jar in (distribution / "lib").glob(f"{engine}-*.jar"):
        found = re.fullmatch(rf"{engine}-(\d+\.\d+\.\d+)\.jar", jar.name)
        if found:
            return found[1]
    raise UsageError(
        f"no {engine}-VERSION.jar in {distribution}/lib",
        "pass the home folder of an unpacked distribution",
    )


def main(argv: list[str] | None = None) -> int:
    """The test nodes' entry (scripts/engines/build-plugin.sh): build for an unpacked
    distribution, print the digest with --digest; with --lucene-folders, the Lucene source
    folders a Lucene version compiles, one a line (scripts/engines/test-plugin-java.sh)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", choices=ENGINES)
    parser.add_argument("--distribution", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--digest", action="store_true")
    parser.add_argument("--lucene-folders", metavar="LUCENE_VERSION")
    args = parser.parse_args(argv)
    if args.lucene_folders is not None:
        return _print_lucene_folders(args.lucene_folders)
    if args.engine is None or args.distribution is None:
        parser.error("--engine and --distribution are required")
    try:
        tgt = target(args.engine, _version_of(args.distribution, args.engine))
        if args.digest:
            print(digest(sources_folder(), tgt, args.distribution / "lib"))
            return 0
        out = args.out or args.distribution.parent / zip_name(tgt)
        print(
            build(
                tgt, out, args.distribution, lambda line: print(f"[{NAME}] {line}", file=sys.stderr)
            )
        )
    except EsqlogError as exc:
        print(f"[{NAME}] {exc}", file=sys.stderr)
        return 1
    return 0


def _print_lucene_folders(lucene: str) -> int:
    found = _VERSION.match(lucene)
    if not found:
        print(f"[{NAME}] {lucene!r} is not a Lucene version, e.g. 10.4.0", file=sys.stderr)
        return 2
    sources = sources_folder()
    release = (int(found[1]), int(found[2]))
    for folder in [sources / "lucene" / "src", *range_folders(sources, "lucene", release)]:
        print(folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
