"""Packaging facts a plain ``pip install`` depends on (the install itself, from a built
wheel into scratch environments, is scripts/check-install.sh, run by scripts/test.sh)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from esqlog.errors import UsageError
from esqlog.extras import EVAL_MODULES, missing_modules, require_extra

ROOT = Path(__file__).resolve().parents[2]


def test_a_missing_extra_is_one_line_naming_it() -> None:
    with pytest.raises(UsageError) as error:
        require_extra("demo", "eval", ["esqlog_no_such_module", "json"])
    text = str(error.value)
    assert "\n" not in text and "esqlog_no_such_module" in text and "json," not in text
    assert "pip install 'esqlog[eval]'" in text
    require_extra("demo", "eval", ["json"])  # present: no error


def test_the_eval_extra_provides_what_the_commands_check() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    eval_extra = " ".join(project["optional-dependencies"]["eval"]).replace("-", "_").lower()
    for module in EVAL_MODULES:
        assert {"yaml": "pyyaml"}.get(module, module) in eval_extra
    assert missing_modules(EVAL_MODULES) == []  # the dev extra installs it: the demo runs


def test_client_extras_pin_one_major_each_and_license_is_spdx() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    assert extras["es8"] == ["elasticsearch>=8.15,<9"]
    assert extras["es9"] == ["elasticsearch>=9,<10"]
    assert "elasticsearch>=8.15,<9" in extras["integrations"]  # the tests' node is 8.19
    assert isinstance(project["license"], str)
    assert "graft tests" in (ROOT / "MANIFEST.in").read_text()
    assert "graft scripts" in (ROOT / "MANIFEST.in").read_text()  # tests import scripts.*


def test_the_listed_packages_are_the_package_folders() -> None:
    """pyproject lists the packages by name (painless/ is mapped into esqlog/painless): a new
    package folder left off the list would be missing from the wheel."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = {"esqlog"} | {
        "esqlog." + init.parent.name for init in (ROOT / "esqlog").glob("*/__init__.py")
    }
    data = {"esqlog.data"}  # the sample corpus: a folder of data setuptools takes as a package
    assert set(setuptools["packages"]) == folders | data | {"esqlog.painless", "esqlog.plugins"}
    assert setuptools["package-dir"] == {"esqlog.painless": "painless", "esqlog.plugins": "plugins"}
    assert not (ROOT / "esqlog" / "painless").exists()  # one copy of each script
    assert not (ROOT / "esqlog" / "plugins").exists()  # one copy of the plugin's sources
    manifest = (ROOT / "MANIFEST.in").read_text()  # the sdist builds the wheel
    assert "graft painless" in manifest and "graft plugins" in manifest
