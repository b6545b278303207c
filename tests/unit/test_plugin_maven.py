"""The Maven build of esqlog-terms (plugins/esqlog-terms/pom.xml) makes the zip plugin_zip.py
makes, read from the poms without running Maven: the same plugin version, the same source set,
the same jar and zip names and, byte for byte, the same plugin-descriptor.properties (the file
both engines' plugin tools check). scripts/engines/test-plugin-maven.sh runs the build itself."""

from __future__ import annotations

import re
import shutil
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from esqlog.engine import plugin_zip

SOURCES = plugin_zip.sources_folder()
NS = {"m": "http://maven.apache.org/POM/4.0.0"}
RELEASES = [
    ("opensearch", "2.11.0"),
    ("opensearch", "2.19.6"),
    ("opensearch", "3.0.0"),
    ("opensearch", "3.6.0"),
    ("elasticsearch", "8.11.0"),
    ("elasticsearch", "8.19.21"),
    ("elasticsearch", "9.2.0"),
    ("elasticsearch", "9.5.3"),
]


def _pom(folder: Path) -> ET.Element:
    return ET.parse(folder / "pom.xml").getroot()


def _text(node: ET.Element, path: str) -> str:
    found = node.find(path, NS)
    assert found is not None and found.text is not None, path
    return found.text.strip()


def _properties(engine: str, version: str, lucene: str | None = None) -> dict[str, str]:
    """What Maven interpolates for ``-D<engine>.version=<version>`` (and
    ``-D<engine>.lucene.version=<lucene>``): the parent's properties, the module's, the
    command line's, then those the module's regex-property executions set, in the pom's
    order (each sets its property to its replacement on a match, else to the value it read;
    Java's and Python's regexes agree on these patterns)."""
    props = {"project.version": _text(_pom(SOURCES), "m:properties/m:revision")}
    for folder in (SOURCES, SOURCES / engine):
        for prop in _pom(folder).findall("m:properties/*", NS):
            props[prop.tag.split("}")[1]] = (prop.text or "").strip()
    props[f"{engine}.version"] = version
    if lucene is not None:
        props[f"{engine}.lucene.version"] = lucene
    for execution in _pom(SOURCES / engine).iterfind(".//m:execution", NS):
        if execution.findtext("m:goals/m:goal", namespaces=NS) != "regex-property":
            continue
        config = execution.find("m:configuration", NS)
        assert config is not None
        value = _interpolate(_text(config, "m:value"), props)
        props[_text(config, "m:name")] = re.sub(
            _text(config, "m:regex"), _text(config, "m:replacement"), value
        )
    return props


def _interpolate(text: str, props: dict[str, str]) -> str:
    return re.sub(r"\$\{([^}]+)\}", lambda m: props[m[1]], text)


def test_the_pom_version_is_the_plugin_version() -> None:
    assert _properties("opensearch", "3.6.0")["project.version"] == plugin_zip.plugin_version(
        SOURCES
    )
    for flavor in plugin_zip.ENGINES:
        module = _pom(SOURCES / flavor)
        assert _text(module, "m:parent/m:version") == "${revision}"
        assert _text(module, "m:parent/m:artifactId") == _text(_pom(SOURCES), "m:artifactId")
    modules = [m.text or "" for m in _pom(SOURCES).iterfind("m:modules/m:module", NS)]
    assert sorted(modules) == sorted(plugin_zip.ENGINES)


@pytest.mark.parametrize(("flavor", "version"), RELEASES)
def test_the_filtered_descriptor_is_the_one_plugin_zip_writes(flavor: str, version: str) -> None:
    template = (SOURCES / flavor / "descriptor" / "plugin-descriptor.properties").read_bytes()
    filtered = _interpolate(template.decode("utf-8"), _properties(flavor, version))
    tgt = plugin_zip.target(flavor, version)
    assert filtered.encode("utf-8") == plugin_zip.descriptor(
        tgt, plugin_zip.plugin_version(SOURCES)
    ).encode("utf-8")


@pytest.mark.parametrize(("flavor", "version"), RELEASES)
def test_the_jar_and_zip_are_named_as_plugin_zip_names_them(flavor: str, version: str) -> None:
    props = _properties(flavor, version)
    module = _pom(SOURCES / flavor)
    assert _interpolate(_text(module, "m:build/m:finalName"), props) == plugin_zip.NAME
    assembly = _interpolate(_text(module, ".//m:execution[m:id='plugin-zip']//m:finalName"), props)
    assert f"{assembly}.zip" == plugin_zip.zip_name(plugin_zip.target(flavor, version))
    layout = (SOURCES / "assembly.xml").read_text("utf-8")
    assert "${project.build.directory}/${plugin.name}.jar" in layout
    assert "<includeBaseDirectory>false</includeBaseDirectory>" in layout


@pytest.mark.parametrize("flavor", plugin_zip.ENGINES)
def test_each_module_compiles_the_source_set_plugin_zip_compiles(flavor: str) -> None:
    module = _pom(SOURCES / flavor)
    default = _text(_pom(SOURCES), f"m:properties/m:{flavor}.version")
    folders = [_text(module, "m:build/m:sourceDirectory")]
    folders += [
        s.text or ""
        for s in module.iterfind(".//m:execution[m:id='shared-lucene-sources']//m:source", NS)
    ]
    lucene_default = _text(module, f"m:properties/m:{flavor}.lucene.version")
    others = (
        [("2.11.1", "9.7.0"), ("2.19.6", "9.12.3"), ("3.0.0", "10.1.0")]
        if flavor == "opensearch"
        else [
            ("8.11.0", "9.8.0"),
            ("8.12.2", "9.9.2"),
            ("8.13.4", "9.10.0"),
            ("8.15.5", "9.11.1"),
            ("8.16.0", "9.12.0"),
            ("9.0.8", "10.1.0"),
            ("9.1.5", "10.2.2"),
            ("9.2.0", "10.3.1"),
            ("9.3.4", "10.3.2"),
            ("9.5.3", "10.5.1"),
        ]
    )
    for version, lucene in [(default, lucene_default), *others]:
        target = plugin_zip.target(flavor, version)
        # the release and Lucene ranges the pom's regex properties choose for this version
        props = _properties(flavor, version, lucene)
        assert props["lucene.range"] in ("lucene-9.0", "lucene-10.0", "lucene-10.4"), lucene
        assert props["lucene.bounded"] in ("lucene-9.0-10.3", "lucene"), lucene
        roots = {(SOURCES / flavor / _interpolate(f, props)).resolve() for f in folders}
        compiled = sorted(p for root in roots for p in root.rglob("*.java"))
        lib = Path(tempfile.mkdtemp())
        (lib / f"lucene-core-{lucene}.jar").write_bytes(b"")
        assert compiled == plugin_zip.java_files(SOURCES, target, lib), version
        shutil.rmtree(lib)
    assert _text(module, "m:build/m:testSourceDirectory") == "../lucene/test"
    engine_dep = [
        d
        for d in module.iterfind("m:dependencies/m:dependency", NS)
        if d.findtext("m:artifactId", namespaces=NS) == flavor
    ]
    assert [_text(d, "m:scope") for d in engine_dep] == ["provided"]
    assert _text(engine_dep[0], "m:version") == f"${{{flavor}.version}}"
