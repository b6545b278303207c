"""search_code's scope (globs, languages, tests and prose) and the agent query text, pure."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from esqlog.agent.chunks import ToolInputError
from esqlog.agent.queries import agent_query
from esqlog.agent.scope import TEST_PATHS, Scope, glob_regexp


def _matches(rx: str, path: str) -> bool:
    """Lucene's regexp matches the whole term, as Python's fullmatch does for this subset."""
    return re.fullmatch(rx, path) is not None


@pytest.mark.parametrize(
    ("glob", "yes", "no"),
    [
        ("*.go", ["a.go", "x/y/b.go"], ["a.go.txt", "a.py"]),
        ("src/**/*.py", ["src/a.py", "src/x/y/a.py"], ["lib/src/a.py", "src/a.pyc"]),
        (
            "internal/auth/",
            ["internal/auth/token.go", "internal/auth/x/y.go"],
            ["internal/authz/a.go"],
        ),
        ("cmd/?.go", ["cmd/a.go"], ["cmd/ab.go", "cmd/x/a.go"]),
        ("a+b(c).md", ["a+b(c).md"], ["aab(c).md"]),
    ],
)
def test_globs_match_as_gitignore_does(glob: str, yes: list[str], no: list[str]) -> None:
    rx = glob_regexp(glob)
    assert all(_matches(rx, p) for p in yes), (rx, yes)
    assert not any(_matches(rx, p) for p in no), (rx, no)


@given(st.text(alphabet='ab/.*?+()[]#@&~<>"\\', min_size=1, max_size=20))
def test_every_glob_character_but_the_wildcards_is_literal(glob: str) -> None:
    rx = glob_regexp(glob)
    literal = glob.replace("*", "").replace("?", "")
    if "*" not in glob and "?" not in glob and not glob.endswith("/"):
        assert _matches(rx, literal.lstrip("/"))


@pytest.mark.parametrize(
    "path",
    [
        "pkg/auth/token_test.go",
        "tests/test_x.py",
        "test_x.py",
        "src/test/java/FooTest.java",
        "web/a.spec.ts",
        "examples/demo/main.go",
        "x/testdata/in.txt",
        "conftest.py",
    ],
)
def test_test_and_example_paths_are_recognised(path: str) -> None:
    assert any(_matches(rx, path) for rx in TEST_PATHS)


@pytest.mark.parametrize(
    "path",
    ["pkg/auth/token.go", "src/main/java/Foo.java", "latest.py", "contest/x.go", "attestation.go"],
)
def test_code_paths_are_not_tests(path: str) -> None:
    assert not any(_matches(rx, path) for rx in TEST_PATHS)


def test_the_default_scope_leaves_prose_out_and_nothing_else() -> None:
    keep, drop = Scope().clauses()
    assert keep == [] and drop == [{"terms": {"language": ["markdown", "rst", "text"]}}]
    match = {"match": {"content": "x"}}
    assert Scope(prose="include").query(match) == match
    only = Scope(path="*.go", tests="only", prose="include").query(match)["bool"]
    assert only["must"] == [match] and len(only["filter"]) == 2 and "must_not" not in only


def test_a_bad_choice_is_one_line_naming_the_choices() -> None:
    with pytest.raises(ToolInputError, match="include, exclude, only"):
        Scope(tests="no")  # type: ignore[arg-type]
    with pytest.raises(ToolInputError, match="glob"):
        Scope(path="")


@pytest.mark.parametrize(
    ("text", "want"),
    [
        (
            "crash in _termui_impl.open_url on macOS",
            "crash in _termui_impl.open_url on macOS _termui_impl open_url",
        ),
        ("see pkg/auth/token.go", "see pkg/auth/token.go pkg auth token"),
        ("Revert 3f2a9c1d4e because of #1234 (https://x.org/a) GH-12", "Revert because of ( )"),
        ("Mod::Class#method", "Mod::Class#method Mod Class"),
        ("plain words only", "plain words only"),
        ("deadbeef", "deadbeef"),  # hex letters alone: a word, not a hash
    ],
)
def test_agent_query_adds_parts_and_drops_noise(text: str, want: str) -> None:
    assert agent_query(text) == want


@given(st.text(max_size=200))
def test_agent_query_keeps_every_word_it_does_not_drop(text: str) -> None:
    out = agent_query(text)
    assert agent_query(text) == out and "\n" not in out


GIT_PATHS = [
    "cmd/main.go",
    "a/cmd/main.go",
    "cmd.go",
    "src/a.py",
    "src/x/y/a.py",
    "lib/src/a.py",
    "a.go",
    "x/y/b.go",
    "internal/auth/token.go",
    "x/internal/auth/t.go",
    "docs/cmd/x.md",
    "cmd/sub/run.go",
]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
@pytest.mark.parametrize(
    "glob",
    [
        "*.go",
        "/cmd/",
        "cmd/",
        "src/**/*.py",
        "internal/auth/",
        "/*.go",
        "cmd/*.go",
        "**/auth/*.go",
        "cmd/**",
    ],
)
def test_globs_select_what_git_check_ignore_selects(glob: str, tmp_path: Path) -> None:
    """The same glob as a .gitignore line: the files git ignores are those the path filter
    keeps (anchoring at the root, folders at any depth, ``**``)."""
    for rel in GIT_PATHS:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).touch()
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text(glob + "\n", encoding="utf-8")
    found = subprocess.run(
        ["git", "-C", str(tmp_path), "check-ignore", "--stdin"],
        input="\n".join(GIT_PATHS) + "\n",
        capture_output=True,
        text=True,
    )
    ignored = set(found.stdout.split())
    rx = glob_regexp(glob)
    assert {p for p in GIT_PATHS if _matches(rx, p)} == ignored, rx


#: Lucene RegExp's operators: the standard ones and the optional ones the engine's regexp
#: query enables by default (flags ALL: # empty, @ any string, & intersection,
#: <n-m> interval, ~ complement); any of them unescaped changes what a path glob means
LUCENE_OPERATORS = set('.?+*|{}[]()"\\') | set("#@&<>~")
#: what the glob translation itself writes: groups, "any", classes, the wildcards
GLOB_SYNTAX = set("().*/?[^]")


def _unescaped(rx: str) -> list[str]:
    """Lucene's reading of ``rx``: the characters it takes as operators (a backslash makes
    the next character literal, whatever it is)."""
    out, i = [], 0
    while i < len(rx):
        if rx[i] == "\\":
            i += 2
            continue
        if rx[i] in LUCENE_OPERATORS:
            out.append(rx[i])
        i += 1
    return out


@pytest.mark.parametrize("char", sorted(LUCENE_OPERATORS - set("*?")))
def test_each_lucene_operator_in_a_glob_is_escaped(char: str) -> None:
    rx = glob_regexp(f"src/x{char}y.go")
    assert rx == f"src/x\\{char}y\\.go"
    assert _unescaped(rx) == []


@pytest.mark.parametrize(
    "glob", ["node_modules/@types/*.d.ts", "c#/", "x<1-9>.go", "a&b~c", "#x", "@", "lib/**/a&b.rs"]
)
def test_globs_with_lucene_operators_leave_only_the_globs_own_syntax(glob: str) -> None:
    assert set(_unescaped(glob_regexp(glob))) <= GLOB_SYNTAX
