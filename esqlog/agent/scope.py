"""Where search_code looks: a path glob, a language, a symbol kind, tests and prose in or out.

Why filters and not a changed ranking: an agent that asks for "code under src/ that is not a
test" wants exactly those documents, ranked as esqlog ranks them; so each choice is a clause
of the engine's own ``bool`` (``filter`` or ``must_not``), which changes neither the scores
nor the order of what stays. The fields are those ``esqlog index`` writes (``path`` as a
keyword, ``language``, ``kind``); on an index without them a filter that requires one finds
nothing, and one that excludes by it excludes nothing.

Prose is left out by default: on a code question, changelogs, release notes and docs share
the question's words and outranked the code (the localization benchmark,
docs/benchmarks/localize.md). Tests stay in the match set by default but are ranked after
the implementation (``tests="after"``: of the hits that score near the best, the tests come
after the rest, each group in the match's order; esqlog.agent.hits): on names and words that
tests repeat (``ServeHTTP``, ``Timeout``) they filled the first places; an agent fixing a test
asks with ``tests="include"`` (ranked together, the engine's order) or ``"only"``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal, get_args

from esqlog.agent.chunks import PATH_FIELD, ToolInputError

Presence = Literal["include", "exclude", "only"]
PRESENCE: tuple[Presence, ...] = get_args(Presence)
#: tests may also be ranked after the implementation (the default)
TestsPresence = Literal["after", "include", "exclude", "only"]
TESTS_PRESENCE: tuple[TestsPresence, ...] = get_args(TestsPresence)
#: what esqlog index records as the language of text that is not code
PROSE_LANGUAGES = ("markdown", "rst", "text")
#: test and example files by the conventions of the languages esqlog index parses
#: (Lucene regular expressions, matched against the whole path)
TEST_PATHS = (
    "(.*/)?(tests?|testing|testdata|spec|specs|__tests__|examples?|_examples)/.*",
    "(.*/)?test_[^/]*",
    ".*_(test|spec)\\.[a-z]+",
    ".*Tests?\\.java",
    "(.*/)?tests?\\.py",
    ".*\\.(spec|test)\\.[jt]sx?",
    "(.*/)?conftest\\.py",
)
_REGEXP_RESERVED = set('.?+*|{}[]()"\\#@&<>~')
MAX_GLOB = 500


@dataclass(frozen=True)
class Scope:
    """One search_code call's filters (all optional; the defaults: no prose)."""

    path: str | None = None
    language: str | None = None
    kind: str | None = None
    tests: TestsPresence = "after"
    prose: Presence = "exclude"

    def __post_init__(self) -> None:
        for name, allowed in (("tests", TESTS_PRESENCE), ("prose", PRESENCE)):
            value = getattr(self, name)
            if value not in allowed:
                raise ToolInputError(
                    f"{name} {value!r} is not one of {', '.join(allowed)}; "
                    f'pass {name}="{allowed[0]}" or another of them'
                )
        if self.path is not None and not 0 < len(self.path) <= MAX_GLOB:
            raise ToolInputError(
                f"path glob must have 1-{MAX_GLOB} characters; pass e.g. 'src/**/*.go' or '*.py'"
            )

    def clauses(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """(filter, must_not) clauses of the engine's bool query."""
        keep: list[dict[str, Any]] = []
        drop: list[dict[str, Any]] = []
        if self.path:
            keep.append({"regexp": {PATH_FIELD: {"value": glob_regexp(self.path)}}})
        if self.language:
            keep.append({"term": {"language": self.language.lower()}})
        if self.kind:
            keep.append({"term": {"kind": self.kind.lower()}})
        tests, prose = _tests(), _prose()
        for presence, clause in ((self.tests, tests), (self.prose, prose)):
            if presence == "only":
                keep.append(clause)
            elif presence == "exclude":
                drop.append(clause)
        return keep, drop

    def query(self, match: dict[str, Any]) -> dict[str, Any]:
        """``match`` alone when nothing is filtered, else inside a bool with the filters."""
        keep, drop = self.clauses()
        if not keep and not drop:
            return match
        body: dict[str, Any] = {"must": [match]}
        if keep:
            body["filter"] = keep
        if drop:
            body["must_not"] = drop
        return {"bool": body}


def is_test(path: str | None) -> bool:
    """Whether a path is a test or example file by TEST_PATHS (the same rules the engine's
    filter applies; these expressions mean the same in Python's ``re``)."""
    return path is not None and any(re.fullmatch(rx, path) for rx in TEST_PATHS)


def _tests() -> dict[str, Any]:
    return {
        "bool": {
            "should": [{"regexp": {PATH_FIELD: {"value": rx}}} for rx in TEST_PATHS],
            "minimum_should_match": 1,
        }
    }


def _prose() -> dict[str, Any]:
    return {"terms": {"language": list(PROSE_LANGUAGES)}}


def glob_regexp(glob: str) -> str:
    """A gitignore-style glob as a Lucene regular expression over the whole path.

    ``**`` crosses folders, ``*`` and ``?`` stay within one; a glob without ``/`` matches
    a file name at any depth (``*.go``), as in .gitignore: a ``/`` at the start or in the
    middle anchors the glob at the root (``/cmd/``, ``internal/auth/``), one at the end alone
    does not (``cmd/``: every folder named cmd). Every other character is literal, Lucene's
    optional operators ``# @ & < > ~`` included (the engine's regexp query enables them all).
    """
    out: list[str] = [] if "/" in glob.rstrip("/") else ["(.*/)?"]
    text = glob.lstrip("/")
    i = 0
    while i < len(text):
        if text.startswith("**/", i):
            out.append("(.*/)?")
            i += 3
        elif text.startswith("**", i):
            out.append(".*")
            i += 2
        elif text[i] == "*":
            out.append("[^/]*")
            i += 1
        elif text[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append("\\" + text[i] if text[i] in _REGEXP_RESERVED else text[i])
            i += 1
    if text.endswith("/"):
        out.append(".*")
    return "".join(out)
