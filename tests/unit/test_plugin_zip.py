"""esqlog plugin build's checks and the zip's make-up, without a JDK run (the engines' own
plugin tools installing the zips is what every engine node does: scripts/engines/engine.sh,
and tests/engine/test_identifiers_plugin.py searches them)."""

from __future__ import annotations

import fnmatch
import shutil
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from esqlog.cli import main
from esqlog.engine import plugin_zip
from esqlog.errors import UsageError

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("flavor", "version", "release"),
    [
        ("opensearch", "2.11.0", 17),
        ("opensearch", "2.19.6", 17),
        ("opensearch", "3.0.0", 21),
        ("elasticsearch", "8.11.0", 17),
        ("elasticsearch", "8.19.21", 17),
        ("elasticsearch", "9.2.0", 21),
    ],
)
def test_supported_releases_and_their_java_floor(flavor: str, version: str, release: int) -> None:
    assert plugin_zip.target(flavor, version).java_release == release


@pytest.mark.parametrize(
    ("flavor", "version", "said"),
    [
        ("opensearch", "2.10.0", "not supported"),
        ("opensearch", "4.0.0", "not supported"),
        ("elasticsearch", "8.10.4", "not supported"),
        ("elasticsearch", "7.17.0", "not supported"),
        ("elasticsearch", "10.0.0", "not supported"),
        ("opensearch", "2.19", "not a release"),
        ("opensearch", "2.19.1; rm -rf /", "not a release"),
        ("solr", "9.0.0", "unknown engine"),
    ],
)
def test_other_releases_are_one_line(flavor: str, version: str, said: str) -> None:
    with pytest.raises(UsageError) as error:
        plugin_zip.target(flavor, version)
    assert said in str(error.value) and "\n" not in str(error.value)


def test_the_descriptor_names_the_exact_release() -> None:
    lines = plugin_zip.descriptor(plugin_zip.target("opensearch", "2.19.6"), "1.4.0").splitlines()
    assert "opensearch.version=2.19.6" in lines and "java.version=17" in lines
    assert "version=1.4.0" in lines and "classname=esqlog.terms.TermsPlugin" in lines
    assert "custom.foldername=esqlog-terms" in lines
    es = plugin_zip.descriptor(plugin_zip.target("elasticsearch", "9.2.0"), "1.4.0")
    assert "elasticsearch.version=9.2.0" in es.splitlines() and "java.version=21" in es
    assert "opensearch" not in es and "custom.foldername" not in es


def test_the_distribution_url_is_the_integ_test_zip_on_maven_central() -> None:
    assert plugin_zip.target("elasticsearch", "8.19.21").distribution_url == (
        "https://repo1.maven.org/maven2/org/elasticsearch/distribution/integ-test-zip/"
        "elasticsearch/8.19.21/elasticsearch-8.19.21.zip"
    )


def test_the_digest_follows_the_sources_and_the_release(tmp_path: Path) -> None:
    sources = tmp_path / "esqlog-terms"
    shutil.copytree(plugin_zip.sources_folder(), sources)
    tgt = plugin_zip.target("opensearch", "3.6.0")
    first = plugin_zip.digest(sources, tgt)
    assert plugin_zip.digest(sources, plugin_zip.target("opensearch", "3.8.0")) != first
    glue = next((sources / "opensearch" / "src").rglob("*.java"))
    glue.write_text(glue.read_text() + "\n// edited\n")
    assert plugin_zip.digest(sources, tgt) != first
    edited = plugin_zip.digest(sources, tgt)
    (sources / "VERSION").write_text("9.9.9\n")
    assert plugin_zip.digest(sources, tgt) != edited
    # The other engine's glue is not part of this engine's zip.
    es_glue = next((sources / "elasticsearch" / "src").rglob("*.java"))
    es_glue.write_text(es_glue.read_text() + "\n// edited\n")
    assert plugin_zip.digest(sources, tgt) == plugin_zip.digest(sources, tgt)
    assert all(
        "elasticsearch" not in str(p.relative_to(sources))
        for p in plugin_zip.java_files(sources, tgt)
    )


def test_the_wheel_carries_every_source_the_build_compiles() -> None:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    patterns = data["package-data"]["esqlog.plugins"]
    sources = plugin_zip.sources_folder()
    for engine, version in (
        ("opensearch", "2.19.6"),
        ("opensearch", "3.8.0"),
        ("elasticsearch", "8.11.0"),
        ("elasticsearch", "9.2.0"),
        ("elasticsearch", "9.5.3"),
    ):
        for path in plugin_zip.java_files(sources, plugin_zip.target(engine, version)):
            rel = path.relative_to(sources.parent).as_posix()
            assert any(fnmatch.fnmatch(rel, p) for p in patterns), rel
    assert "esqlog-terms/VERSION" in patterns


def test_a_release_gets_the_classes_of_its_own_ranges_only() -> None:
    """The classes whose engine API moved come from the newest open range at or before the
    release and from the bounded ranges holding it: two copies of one class would not compile,
    a wrong one would not load, a missing one (the plugin class) would build a zip that
    does not start."""
    sources = plugin_zip.sources_folder()

    def ranges(engine: str, version: str) -> list[str]:
        files = plugin_zip.java_files(sources, plugin_zip.target(engine, version))
        names = [p.name for p in files]
        assert len(names) == len(set(names)), version
        assert "TermsPlugin.java" in names, version
        assert "StatsAction.java" in names, version
        assert engine == "opensearch" or "LeafBuilder.java" in names, version
        return sorted(
            {
                p.relative_to(sources).parts[0]
                for p in files
                if p.relative_to(sources).parts[0].startswith(engine + "-")
            }
        )

    assert ranges("opensearch", "2.11.1") == ["opensearch-2.11"]
    assert ranges("opensearch", "2.19.6") == ["opensearch-2.11"]
    assert ranges("opensearch", "3.0.0") == ["opensearch-3.0"]
    assert ranges("opensearch", "3.8.0") == ["opensearch-3.0"]
    es = "elasticsearch"
    leaf = "elasticsearch-8.11-9.3"  # LeafBuilder on AbstractQueryBuilder, to 9.3
    assert ranges(es, "8.11.4") == ["elasticsearch-8.11", leaf]
    assert ranges(es, "8.12.2") == ["elasticsearch-8.11", leaf]
    assert ranges(es, "8.13.0") == [leaf, "elasticsearch-8.13", "elasticsearch-8.13-9.0"]
    assert ranges(es, "8.15.5") == [leaf, "elasticsearch-8.13", "elasticsearch-8.13-9.0"]
    assert ranges(es, "8.16.0") == [leaf, "elasticsearch-8.13-9.0", "elasticsearch-8.16"]
    assert ranges(es, "8.19.21") == [leaf, "elasticsearch-8.13-9.0", "elasticsearch-8.16"]
    assert ranges(es, "9.0.8") == [leaf, "elasticsearch-8.13-9.0", "elasticsearch-9.0"]
    stats = "elasticsearch-9.1-9.x"  # the stats action, from 9.1 on
    assert ranges(es, "9.1.5") == [leaf, "elasticsearch-9.1", stats]
    assert ranges(es, "9.2.0") == [leaf, "elasticsearch-9.1", stats]
    assert ranges(es, "9.3.4") == [leaf, "elasticsearch-9.1", stats]
    assert ranges(es, "9.4.0") == [
        stats,
        "elasticsearch-9.4",
    ]  # LeafQueryBuilder, RestHandlersServices
    assert ranges(es, "9.5.3") == [stats, "elasticsearch-9.4"]


def test_the_lucene_impacts_class_follows_the_distributions_lucene(tmp_path: Path) -> None:
    """Weight.scorer is final from Lucene 10.0, Impacts.getImpacts a FreqAndNormBuffer (not a
    List of Impact) from 10.4: the build takes the classes of the Lucene in the distribution's
    lib/, one copy only."""
    sources = plugin_zip.sources_folder()

    def lucene(engine: str, version: str, jar: str | None = None) -> list[str]:
        lib = None
        if jar is not None:
            lib = tmp_path / jar
            lib.mkdir()
            (lib / jar).write_bytes(b"")
        files = plugin_zip.java_files(sources, plugin_zip.target(engine, version), lib)
        return sorted(
            {
                p.relative_to(sources).parts[0]
                for p in files
                if p.relative_to(sources).parts[0].startswith("lucene-")
            }
        )

    older = ["lucene-9.0", "lucene-9.0-10.3"]
    assert lucene("opensearch", "2.19.6", "lucene-core-9.12.3.jar") == older
    assert lucene("elasticsearch", "9.2.0", "lucene-core-10.3.1.jar") == [
        "lucene-10.0",
        "lucene-9.0-10.3",
    ]
    assert lucene("opensearch", "3.6.0", "lucene-core-10.4.0.jar") == ["lucene-10.4"]
    assert lucene("opensearch", "3.8.0", "lucene-core-10.5.0.jar") == ["lucene-10.4"]
    # the jar decides, whatever the engine's release would suggest
    assert lucene("opensearch", "3.1.0", "lucene-core-10.4.1.jar") == ["lucene-10.4"]
    # without a distribution: what the engine's releases are known to ship
    assert lucene("elasticsearch", "8.19.21") == older
    assert lucene("opensearch", "3.0.0") == ["lucene-10.0", "lucene-9.0-10.3"]
    assert lucene("opensearch", "3.6.0") == ["lucene-10.4"]


def test_range_folders_take_the_newest_open_range_and_every_bounded_one_holding_it(
    tmp_path: Path,
) -> None:
    """An open range (lucene-10.0/) serves from its start until the next one starts; a
    bounded one (lucene-9.0-10.3/, both ends included; lucene-10.3-10.x/, to the end of 10.x)
    is added wherever it holds the release, so a class shared by several open ranges lives in
    one folder."""
    for name in (
        "lucene-9.0",
        "lucene-10.0",
        "lucene-10.4",
        "lucene-9.0-10.3",
        "lucene-10.2-10.2",
        "lucene-10.3-10.x",
    ):
        (tmp_path / name / "src").mkdir(parents=True)
    (tmp_path / "lucene-11.0").mkdir()  # no src/: not a range
    (tmp_path / "lucene-x" / "src").mkdir(parents=True)  # not a version: not a range

    def picked(release: tuple[int, int]) -> list[str]:
        return [p.parent.name for p in plugin_zip.range_folders(tmp_path, "lucene", release)]

    assert picked((8, 11)) == []
    assert picked((9, 12)) == ["lucene-9.0", "lucene-9.0-10.3"]
    assert picked((10, 1)) == ["lucene-10.0", "lucene-9.0-10.3"]
    assert picked((10, 2)) == ["lucene-10.0", "lucene-10.2-10.2", "lucene-9.0-10.3"]
    assert picked((10, 3)) == ["lucene-10.0", "lucene-10.3-10.x", "lucene-9.0-10.3"]
    assert picked((10, 4)) == ["lucene-10.4", "lucene-10.3-10.x"]  # "x": every later 10.x
    assert picked((10, 99)) == ["lucene-10.4", "lucene-10.3-10.x"]
    assert picked((11, 0)) == ["lucene-10.4"]


@pytest.mark.parametrize(
    ("flavor", "version", "lucene"),
    [
        ("opensearch", "2.19.6", "9.12.3"),
        ("elasticsearch", "9.2.0", "10.3.1"),
        ("opensearch", "3.0.0", "10.1.0"),
        ("opensearch", "3.6.0", "10.4.0"),
    ],
)
def test_a_release_compiles_each_class_once(
    tmp_path: Path, flavor: str, version: str, lucene: str
) -> None:
    """No two folders a release compiles define one class (javac would refuse the build)."""
    (tmp_path / f"lucene-core-{lucene}.jar").write_bytes(b"")
    files = plugin_zip.java_files(
        plugin_zip.sources_folder(), plugin_zip.target(flavor, version), tmp_path
    )
    names = [p.name for p in files]
    assert sorted(set(names)) == sorted(names)
    assert names.count("LevelImpacts.java") == 1


def test_each_engine_compiles_its_own_glue_and_never_the_others() -> None:
    """OpenSearch's glue imports org.opensearch, Elasticsearch's org.elasticsearch: a build
    that took the other engine's folder would not compile against its jars."""
    sources = plugin_zip.sources_folder()
    for engine, other, version in (
        ("opensearch", "elasticsearch", "3.8.0"),
        ("elasticsearch", "opensearch", "9.2.0"),
    ):
        tops = {
            p.relative_to(sources).parts[0]
            for p in plugin_zip.java_files(sources, plugin_zip.target(engine, version))
        }
        assert "lucene" in tops and engine in tops
        assert not any(top.split("-")[0] == other for top in tops), tops


def test_the_command_refuses_a_bad_version_in_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main,
        ["plugin", "build", "--engine", "opensearch", "--version", "1.3.0", "--out", str(tmp_path)],
    )
    assert result.exit_code == 2
    assert "not supported" in result.output and "Traceback" not in result.output
    assert list(tmp_path.iterdir()) == []


def test_a_missing_jdk_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plugin_zip, "_javac_major", lambda javac: 11)
    with pytest.raises(plugin_zip.EsqlogError) as error:
        plugin_zip.find_javac(21)
    assert "no JDK 21 or newer" in str(error.value)


def test_the_lucene_folders_entry_prints_what_a_lucene_version_compiles(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """scripts/engines/test-plugin-java.sh compiles the folders this prints, so the Java
    tests see the classes the zips hold."""
    assert plugin_zip.main(["--lucene-folders", "10.2.0"]) == 0
    sources = plugin_zip.sources_folder()
    printed = [Path(line).relative_to(sources).parts[0] for line in capsys.readouterr().out.split()]
    assert printed == ["lucene", "lucene-10.0", "lucene-9.0-10.3"]
    assert plugin_zip.main(["--lucene-folders", "10.4"]) == 2
    assert "not a Lucene version" in capsys.readouterr().err
