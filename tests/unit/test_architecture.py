"""The layout is the architecture: layers import only downwards, no cycles, no private names.

The layers, bottom to top (docs/architecture.md draws them): the foundation modules
(errors, version and progress, then atomic and extras), engine, statistics, scoring,
calibration, identifiers, rerank, wrapper, then evaluation and indexing beside each other,
agent, cli. A module may
import its own package and any layer below its own; the package ``esqlog`` itself is the
public API and may import anything (lazily).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "esqlog"
LAYERS = {
    "errors": 0,
    "version": 0,
    "progress": 0,
    "atomic": 1,
    "extras": 1,
    "engine": 2,
    "statistics": 3,
    "scoring": 4,
    "calibration": 5,
    "identifiers": 6,
    "rerank": 7,
    "wrapper": 8,
    "evaluation": 9,
    "indexing": 9,
    "agent": 10,
    "cli": 11,
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports() -> dict[str, set[tuple[str, str]]]:
    """module -> {(imported module, imported name)} for every esqlog import, lazy ones too."""
    found: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for path in PACKAGE.rglob("*.py"):
        module = _module_name(path)
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (
                isinstance(node, ast.ImportFrom)
                and node.module
                and node.level == 0
                and node.module.split(".")[0] == "esqlog"
            ):
                for alias in node.names:
                    found[module].add((node.module, alias.name))
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "esqlog":
                        found[module].add((alias.name, ""))
    return found


def _feature(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_every_top_level_part_has_a_layer() -> None:
    tops = {
        p.stem if p.is_file() else p.name
        for p in PACKAGE.iterdir()
        if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").exists()
    }
    assert tops == set(LAYERS)


def test_no_layer_imports_one_above_it() -> None:
    upward = []
    for module, imported in _imports().items():
        if module == "esqlog":
            continue
        mine = _feature(module)
        for target, _ in imported:
            theirs = _feature(target)
            if theirs and theirs != mine and LAYERS[theirs] >= LAYERS[mine]:
                upward.append(f"{module} -> {target}")
    assert upward == []


def test_no_module_imports_a_private_name_of_another() -> None:
    private = [
        f"{module} -> {target}.{name}"
        for module, imported in _imports().items()
        for target, name in imported
        if name.startswith("_") and not name.startswith("__") and target != module
    ]
    assert private == []


def test_no_import_cycle() -> None:
    graph = {m: {t for t, _ in imported if t != m} for m, imported in _imports().items()}
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> list[str] | None:
        if node in path:
            return [*path[path.index(node) :], node]
        if node in done:
            return None
        for nxt in sorted(graph.get(node, ())):
            cycle = visit(nxt, [*path, node])
            if cycle:
                return cycle
        done.add(node)
        return None

    for start in sorted(graph):
        if start != "esqlog":
            assert visit(start, []) is None, " -> ".join(visit(start, []) or [])


def test_no_test_module_imports_another() -> None:
    """Shared test code lives in tests/support; test modules import only from there."""
    offenders = []
    for path in (ROOT / "tests").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            for name in names:
                parts = name.split(".")
                if parts[0] == "tests" and (len(parts) < 2 or parts[1] != "support"):
                    offenders.append(f"{path.relative_to(ROOT)} imports {name}")
    assert offenders == []


def _defined(module: str) -> set[str] | None:
    """The names a module defines at its top level (None for a package or an unknown one)."""
    path = ROOT.joinpath(*module.split(".")).with_suffix(".py")
    if not path.is_file():
        return None
    names: set[str] = set()
    for node in ast.parse(path.read_text(), str(path)).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                elts = target.elts if isinstance(target, ast.Tuple) else [target]
                names |= {t.id for t in elts if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def test_names_are_imported_from_the_module_that_defines_them() -> None:
    """No re-export: a name comes from its home module, so a reader finds it where it is
    imported from (the package ``esqlog`` itself, the public API, and packages' __init__
    excepted)."""
    borrowed = []
    for module, imports in _imports().items():
        for source, name in imports:
            if not name or source.count(".") < 2:
                continue
            defined = _defined(source)
            if defined is not None and name not in defined:
                borrowed.append(f"{module}: {name} from {source}")
    assert borrowed == []
