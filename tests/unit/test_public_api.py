"""``esqlog.__all__`` is the public API: pinned here name by name, every name resolving,
the exception hierarchy as errors.py draws it, and ``import esqlog`` still light."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import esqlog

ROOT = Path(__file__).resolve().parents[2]

PUBLIC = {
    "wrap",
    "calibrate",
    "load_calibration",
    "Calibration",
    "IdentifierSettings",
    "SearchMode",
    "StatsSource",
    "RerankWhere",
    "EsqlogError",
    "UsageError",
    "ClusterError",
    "ScriptingUnavailable",
    "__version__",
}


def test_all_is_exactly_the_public_api() -> None:
    assert sorted(esqlog.__all__) == sorted(PUBLIC)
    assert len(esqlog.__all__) == len(set(esqlog.__all__))


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_every_public_name_resolves_to_its_definition(name: str) -> None:
    value = getattr(esqlog, name)
    assert value is not None
    assert name in dir(esqlog)
    if (
        callable(value)
        and hasattr(value, "__module__")
        and name not in ("SearchMode", "StatsSource", "RerankWhere")
    ):
        assert value.__module__.startswith("esqlog.")
        assert value.__name__ == name


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="'wrapp'"):
        _ = esqlog.wrapp  # mypy: Any, through the module's __getattr__


def test_the_exception_hierarchy() -> None:
    assert issubclass(esqlog.EsqlogError, Exception)
    assert issubclass(esqlog.UsageError, esqlog.EsqlogError)
    assert issubclass(esqlog.ClusterError, esqlog.EsqlogError)
    assert issubclass(esqlog.ScriptingUnavailable, esqlog.UsageError)
    assert not issubclass(esqlog.ClusterError, esqlog.UsageError)
    assert (esqlog.UsageError.exit_code, esqlog.ClusterError.exit_code) == (2, 3)
    # every exception class in __all__ is one of these four: a new one must be added here
    errors = {
        n
        for n in esqlog.__all__
        if isinstance(getattr(esqlog, n), type) and issubclass(getattr(esqlog, n), BaseException)
    }
    assert errors == {"EsqlogError", "UsageError", "ClusterError", "ScriptingUnavailable"}


def test_the_errors_docstring_draws_every_public_exception() -> None:
    import esqlog.errors

    doc = esqlog.errors.__doc__ or ""
    for name in ("EsqlogError", "UsageError", "ClusterError", "ScriptingUnavailable"):
        assert name in doc


def test_import_esqlog_loads_neither_numpy_nor_a_client() -> None:
    probe = (
        "import sys, esqlog; heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('numpy', 'elasticsearch', 'opensearchpy', 'elastic_transport', 'click')); "
        "print(heavy)"
    )
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", probe],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    imported = {
        line.rsplit("|", 1)[-1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "esqlog" in imported  # this checkout's esqlog was the one imported
    assert not {
        m for m in imported if m.split(".")[0] in ("numpy", "elasticsearch", "opensearchpy")
    }


def test_docs_api_shows_every_public_name_and_its_examples_parse() -> None:
    import ast
    import inspect
    import re

    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    table = text.split("\n## ", 1)[0]
    for name in PUBLIC:
        assert f"`{name}`" in table, f"docs/api.md's table does not list {name}"
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    signatures = 0
    for block in blocks:
        head = re.match(r"(\w+)\(", block)
        if head and head[1] in PUBLIC and "->" in block.splitlines()[-1]:
            # a signature: the same parameters, kinds and defaults as the function's own
            documented = ast.parse(f"def {block.strip()}: ...").body[0]
            assert isinstance(documented, ast.FunctionDef)
            shown = (
                [a.arg for a in documented.args.args]
                + ["*"]
                + [a.arg for a in documented.args.kwonlyargs]
            )
            real = inspect.signature(getattr(esqlog, head[1])).parameters.values()
            actual = (
                [p.name for p in real if p.kind is not p.KEYWORD_ONLY]
                + ["*"]
                + [p.name for p in real if p.kind is p.KEYWORD_ONLY]
            )
            assert shown == actual, head[1]
            defaults = [
                ast.literal_eval(d) if not isinstance(d, ast.Name) else d.id
                for d in documented.args.kw_defaults
                if d is not None
            ]
            assert defaults == [p.default for p in real if p.kind is p.KEYWORD_ONLY], head[1]
            signatures += 1
        else:
            ast.parse(block)  # an example: valid Python
    assert signatures == 3  # calibrate, wrap, load_calibration
    assert len(blocks) >= 10
