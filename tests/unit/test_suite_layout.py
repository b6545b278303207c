"""The test suite's folders say what a test needs: tests/unit needs no engine, tests/engine does.

tests/engine/conftest.py marks every test in its folder ``engine`` by folder alone, so
``pytest tests/unit`` (or ``-m "not engine"``) is the engine-free run only as long as no
module here reaches a node. What can be checked without running anything is checked here:
no tests/unit test asks for a fixture named as one of tests/engine/conftest.py (unless its
own module defines it), none imports a support module that reaches the engines, none is
marked ``engine``, and no test module imports another (shared helpers live in tests/support).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
UNIT = TESTS / "unit"
ENGINE = TESTS / "engine"
SUPPORT = TESTS / "support"

#: The support modules that reach a node (a real engine, the cluster or a private node);
#: any support module that imports one of them reaches it too.
REACHES_A_NODE = {"tests.support.engines", "tests.support.private_nodes"}


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def _imported(tree: ast.AST) -> set[str]:
    """Every module a file imports, lazy imports included."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def _fixtures(tree: ast.Module) -> set[str]:
    """The names of the functions a module decorates with ``pytest.fixture``."""
    names = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            for decorator in node.decorator_list:
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                if ast.unparse(target) in {"pytest.fixture", "fixture"}:
                    names.add(node.name)
    return names


def _node_reaching_support() -> set[str]:
    """REACHES_A_NODE and every support module that imports one of them, however indirectly."""
    imports = {
        f"tests.support.{path.stem}": _imported(_tree(path)) for path in SUPPORT.glob("*.py")
    }
    reaching = set(REACHES_A_NODE)
    grown = True
    while grown:
        grown = False
        for module, targets in imports.items():
            if module not in reaching and targets & reaching:
                reaching.add(module)
                grown = True
    return reaching


def _unit_modules() -> list[Path]:
    return sorted(UNIT.glob("*.py"))


def test_the_engine_fixtures_are_found_where_they_are_defined() -> None:
    """The checks below read this list: an empty one would let anything through."""
    assert {"engine", "opensearch", "elasticsearch", "corpus"} <= _fixtures(
        _tree(ENGINE / "conftest.py")
    )
    assert "tests.support.oracle" in _node_reaching_support()  # through engines.py


def test_no_unit_test_asks_for_an_engine_fixture() -> None:
    engine_fixtures = _fixtures(_tree(ENGINE / "conftest.py"))
    found = []
    for path in _unit_modules():
        tree = _tree(path)
        own = _fixtures(tree)
        for node in ast.walk(tree):
            # a test's or a fixture's arguments are fixtures; a helper's are passed by its caller
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and (
                node.name.startswith("test_") or node.name in own
            ):
                arguments = {a.arg for a in [*node.args.args, *node.args.kwonlyargs]}
                asked = (arguments & engine_fixtures) - own
                found += [f"{path.name}::{node.name} asks for {name}" for name in sorted(asked)]
            elif isinstance(node, ast.Call) and ast.unparse(node.func).endswith("usefixtures"):
                names = {a.value for a in node.args if isinstance(a, ast.Constant)}
                found += [f"{path.name} uses {name}" for name in sorted(names & engine_fixtures)]
    assert found == []


def test_no_unit_module_imports_what_reaches_a_node() -> None:
    reaching = _node_reaching_support()
    found = [
        f"{path.name} imports {module}"
        for path in _unit_modules()
        for module in sorted(_imported(_tree(path)) & reaching)
    ]
    assert found == []


def test_no_unit_test_is_marked_engine() -> None:
    found = [
        path.name
        for path in _unit_modules()
        if any(
            isinstance(node, ast.Attribute) and ast.unparse(node) == "pytest.mark.engine"
            for node in ast.walk(_tree(path))
        )
    ]
    assert found == []


def test_no_test_module_imports_another() -> None:
    found = [
        f"{path.relative_to(TESTS)} imports {module}"
        for path in sorted(TESTS.rglob("*.py"))
        for module in sorted(_imported(_tree(path)))
        if module.startswith(("tests.unit", "tests.engine"))
    ]
    assert found == []


def test_every_test_module_has_a_basename_of_its_own() -> None:
    """pytest imports test modules by basename (no __init__.py in tests/unit or
    tests/engine): two of one name fail the whole run's collection ("import file
    mismatch") once both folders are collected together, as CI does."""
    tests = Path(__file__).resolve().parents[1]
    names = [p.name for p in tests.rglob("test_*.py") if "data" not in p.parts]
    assert sorted(n for n in set(names) if names.count(n) > 1) == []
