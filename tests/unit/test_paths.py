"""Index names and URL paths: one checked, quoted builder, and no request path built elsewhere."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from esqlog.engine.paths import api_path, check_index_name, index_path
from esqlog.errors import UsageError
from esqlog.indexing.target import check_name

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "name",
    [
        "victim/_doc/1#",
        "*",
        "name-*",
        "a,b",
        "remote:idx",
        "Code",
        "_hidden",
        "-x",
        "+x",
        ".",
        "..",
        "a b",
        "a?b",
        'a"b',
        "a<b",
        "a|b",
        "a\\b",
        "",
        "x" * 256,
        "é" * 128,
        "a\nb",
    ],
)
def test_names_the_engines_refuse_are_refused_before_any_request(name: str) -> None:
    with pytest.raises(UsageError) as caught:
        index_path(name, "_search")
    assert "\n" not in str(caught.value)
    assert "not a usable index name" in str(caught.value)


@pytest.mark.parametrize("name", ["code", "esqlog-demo-go", ".hidden-ok", "a_b", "x" * 255])
def test_names_the_engines_accept_pass(name: str) -> None:
    assert check_index_name(name) == name


def test_patterns_only_where_asked_and_never_a_path_separator() -> None:
    assert index_path("logs-*,code", "_count", patterns=True) == "/logs-*,code/_count"
    assert index_path("remote:code", "_search", patterns=True) == "/remote:code/_search"
    for bad in ["victim/_doc/1#", "a,_b", "A*", "logs-*/x"]:
        with pytest.raises(UsageError):
            index_path(bad, "_search", patterns=True)


def test_every_part_is_one_quoted_segment() -> None:
    assert index_path("code", "_doc", "a/b#c?d%") == "/code/_doc/a%2Fb%23c%3Fd%25"
    assert index_path("code", "_stats", "docs,store") == "/code/_stats/docs,store"
    assert api_path("_scripts", "esqlog/x") == "/_scripts/esqlog%2Fx"


@given(st.text(min_size=1, max_size=40), st.text(max_size=40))
def test_a_built_path_never_holds_more_segments_than_its_parts(name: str, part: str) -> None:
    try:
        path = index_path(name, "_doc", part)
    except UsageError:
        return
    assert path.count("/") == 3 and "#" not in path and "?" not in path


def _request_paths(tree: ast.AST) -> list[ast.expr]:
    return [
        node.args[1]
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", getattr(node.func, "attr", None)) == "Request"
        and len(node.args) >= 2
    ]


def test_no_request_path_is_built_outside_the_builder() -> None:
    """Every Request in esqlog and its scripts takes a literal, or a path from esqlog.engine.paths
    (directly or through a name assigned from it), never an f-string, + or .format."""
    offenders = []
    for path in [*ROOT.glob("esqlog/**/*.py"), *ROOT.glob("scripts/**/*.py")]:
        tree = ast.parse(path.read_text(), str(path))
        for arg in _request_paths(tree):
            if isinstance(arg, ast.JoinedStr | ast.BinOp) or (
                isinstance(arg, ast.Call) and getattr(arg.func, "attr", "") == "format"
            ):
                offenders.append(f"{path.relative_to(ROOT)}:{arg.lineno}")
        source = path.read_text()
        if path.name != "paths.py" and ("urllib.parse import quote" in source or 'f"/{' in source):
            offenders.append(f"{path.relative_to(ROOT)}: quotes or pastes a path itself")
    assert offenders == []


NAME_TAIL = st.text("abcxyz019-_.", max_size=12)


@given(head=st.text("abcxyz", max_size=4), upper=st.sampled_from("ABCXYZ"), tail=NAME_TAIL)
def test_a_name_with_a_capital_is_refused_by_both_name_checks(
    head: str, upper: str, tail: str
) -> None:
    """The engines refuse upper-case index names; esqlog says so before any request, both
    where names enter a path (check_index_name) and where esqlog index creates one."""
    name = head + upper + tail
    with pytest.raises(UsageError, match="not a usable index name"):
        check_index_name(name)
    with pytest.raises(UsageError, match="not a usable index name"):
        check_name(name)


@given(tail=NAME_TAIL)
def test_a_name_starting_with_an_underscore_is_refused_by_both_name_checks(tail: str) -> None:
    """``_name`` is an API endpoint (``_search``, ``_all``), never an index."""
    with pytest.raises(UsageError, match="not a usable index name"):
        check_index_name("_" + tail)
    with pytest.raises(UsageError, match="not a usable index name"):
        check_name("_" + tail)


@pytest.mark.parametrize("name", ["code", "esqlog-demo-go", "a_b", "code-2026.12", "x" * 255])
def test_names_the_engines_accept_pass_both_name_checks(name: str) -> None:
    assert check_index_name(name) == name
    check_name(name)  # no exception
