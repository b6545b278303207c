"""grep_code: a literal or regular-expression search of the indexed text, line by line.

Why: ranking answers "where is the code about X"; some questions are exact ("every line
with `conflicts with existing wildcard`", "every `TODO(`", "`Timeout\\(\\d`"), and the agent
would otherwise grep the disk. The engine narrows the chunks to those whose terms contain
the words the pattern requires (a literal's words, or the literal runs a regular
expression cannot match without, read from Python's own parse of it), and Python's ``re``
verifies each line, so the lines are those ``rg`` prints on the indexed files
(esqlog.agent.line_scan). A pattern that requires no word of 3+ characters scans every
chunk, up to MAX_CANDIDATES, and says so when it stopped.

Python's ``re`` has no timeout, so a pattern is refused when it is longer than
MAX_PATTERN_CHARS or repeats a group that itself repeats (``(a+)+``: exponential
backtracking on a line that almost matches).
"""

from __future__ import annotations

import re
import re._constants as _sre  # Python's own regular-expression parser (3.11+)
import re._parser as _parser
from typing import Any

from esqlog.agent.chunks import ToolInputError
from esqlog.agent.line_scan import (
    DEFAULT_LIMIT,
    Candidate,
    LineHit,
    TextScan,
    answer,
    check_limit,
    containing_terms,
    counted,
    matching_lines,
    unread_note,
    where,
    word_runs,
)
from esqlog.agent.reading import IndexTool, shown
from esqlog.agent.tokens import TokenCounter

MAX_PATTERN_CHARS = 300

_REPEATS = {_sre.MAX_REPEAT, _sre.MIN_REPEAT, _sre.POSSESSIVE_REPEAT}
_GROUPS = {_sre.SUBPATTERN, _sre.ATOMIC_GROUP}


def compile_pattern(pattern: str, regex: bool) -> re.Pattern[str]:
    """``pattern`` as a compiled ``re`` pattern (escaped when literal); bad input is one
    readable line."""
    if not pattern:
        raise ToolInputError(
            "pattern is empty; pass the text (or regex=true: the regular expression) to find"
        )
    if len(pattern) > MAX_PATTERN_CHARS:
        raise ToolInputError(
            f"pattern of {len(pattern)} characters is too long; pass at most {MAX_PATTERN_CHARS}"
        )
    if "\n" in pattern:
        raise ToolInputError(
            "pattern has a line break; grep_code matches within one line, so pass one line of it"
        )
    if not regex:
        return re.compile(re.escape(pattern))
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise ToolInputError(
            f"regex {shown(pattern)} does not compile: {exc}; fix it, or pass "
            "regex=false to search the text literally"
        ) from None
    if _nested_repeat(_parser.parse(pattern), False):
        raise ToolInputError(
            f"regex {shown(pattern)} repeats a group that itself repeats "
            "(like (a+)+), which can take exponential time; rewrite it "
            "without a repeat inside a repeat"
        )
    return compiled


def _nested_repeat(items: Any, inside: bool) -> bool:
    """Whether a repeat of more than one occurrence holds another such repeat."""
    for op, av in items:
        if op in _REPEATS:
            many = av[1] > 1
            if (inside and many) or _nested_repeat(av[2], inside or many):
                return True
        elif op in _GROUPS:
            if _nested_repeat(av[-1], inside):
                return True
        elif op == _sre.BRANCH:
            if any(_nested_repeat(branch, inside) for branch in av[1]):
                return True
        elif op in (_sre.ASSERT, _sre.ASSERT_NOT) and _nested_repeat(av[1], inside):
            return True
    return False


def required_runs(pattern: str, regex: bool) -> list[str]:
    """The literal texts every match of ``pattern`` contains (a literal: itself; a regular
    expression: the runs of literal characters outside alternatives and optional parts;
    case-insensitive ones too, since the engine's terms are lowercase)."""
    if not regex:
        return [pattern]
    runs: list[str] = []
    last = _literal_runs(_parser.parse(pattern), runs, "")
    if last:
        runs.append(last)
    return runs


def _literal_runs(items: Any, runs: list[str], current: str) -> str:
    """Adds each maximal required literal run of ``items`` to ``runs``; returns the run
    still open at the end (it may continue after a group)."""
    for op, av in items:
        if op == _sre.LITERAL:
            current += chr(av)
        elif op == _sre.AT:
            continue  # an anchor or \\b consumes nothing: the run goes on
        elif op in _GROUPS:
            current = _literal_runs(av[-1], runs, current)
        else:
            if current:
                runs.append(current)
            current = ""
            if op in _REPEATS and av[0] >= 1:
                inner = _literal_runs(av[2], runs, "")
                if inner:
                    runs.append(inner)
    return current


def candidate_query(pattern: str, regex: bool) -> dict[str, Any] | None:
    """The engine's query for chunks that can hold a match (None: every chunk)."""
    words: list[str] = []
    for run in required_runs(pattern, regex):
        words.extend(word_runs(run))
    return containing_terms(sorted(set(words), key=lambda w: (-len(w), w)))


def grep_hits(candidates: list[Candidate], compiled: re.Pattern[str]) -> list[LineHit]:
    hits: list[LineHit] = []
    for candidate in candidates:
        chunk = candidate.chunk
        for number, line, at in matching_lines(chunk, compiled):
            hits.append(LineHit(where(chunk), number, line, at=at))
    return hits


def grep_answer(
    pattern: str,
    regex: bool,
    hits: list[LineHit],
    limit: int,
    note: str = "",
    path_glob: str | None = None,
    counter: TokenCounter | None = None,
) -> str:
    kind = "regex" if regex else "literal"
    under = f" under {path_glob!r}" if path_glob else ""
    if not hits:
        zero = f"no indexed line matches {kind} {shown(pattern)}{under}"
        return f"{note}\n{zero}" if note else zero
    lines, files = counted(hits)
    head = (
        f"{lines} line{'s' * (lines != 1)} match {kind} {shown(pattern)}{under} in "
        f"{files} file{'s' * (files != 1)}"
    )
    if note:
        head = f"{note}\n{head}"
    return answer(head, hits, limit, "lines", counter)


class Grep:
    """grep_code on one index."""

    def __init__(self, tool: IndexTool, scan: TextScan | None = None) -> None:
        self.scan = scan if scan is not None else TextScan(tool)

    def grep(
        self,
        pattern: str,
        regex: bool = False,
        path_glob: str | None = None,
        limit: int = DEFAULT_LIMIT,
    ) -> str:
        """Every indexed line ``pattern`` matches (by path and line), up to ``limit``, then
        how many more."""
        check_limit(limit)
        compiled = compile_pattern(pattern, regex)
        query = candidate_query(pattern, regex)
        candidates, total = self.scan.candidates(query, path_glob)
        note = unread_note(len(candidates), total)
        if note and query is None:
            note = (
                f"{note}; the pattern has no word of 3+ letters or digits to narrow the "
                "chunks by, so every chunk is a candidate"
            )
        return grep_answer(
            pattern,
            regex,
            grep_hits(candidates, compiled),
            limit,
            note,
            path_glob,
            self.scan.tool.counter,
        )
