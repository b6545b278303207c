"""The lines of a hit that hold the query's words: what grep would have shown for it.

Why: a listing that names ``tree.go:133-250 node.addRoute`` makes the agent read 118 lines to
find the one that holds "conflicts with existing wildcard"; ``tree.go:232`` and its text say
it at once. Words are compared as code spells them: a line's identifiers are split at case
humps, underscores and digits (``ClientIP`` holds ``client`` and ``ip``), case aside, so a
query word finds ``clientIP``, ``client_ip`` and ``ClientIP`` alike; a whole word counts
twice its parts, so the line naming ``ClientIP`` comes before one that says "client" only.
Pure: the lines and their numbers are the chunk's own, numbered as esqlog index numbers them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from esqlog.agent.chunks import Chunk, source_lines
from esqlog.agent.outline import MAX_LINE_CHARS

_TOKEN = re.compile(r"[A-Za-z0-9_$]+")
#: a part of an identifier: ``HTTPServer`` -> HTTP, Server; ``utf8Decode`` -> utf8, Decode
_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+[0-9]*|[0-9]+")
#: words too common in prose queries to say which line matters
_STOP = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "how",
        "in",
        "is",
        "it",
        "not",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
        "to",
        "what",
        "when",
        "where",
        "which",
        "why",
        "with",
    }
)
#: lines shown per hit at most: one. On the localization benchmark (160 real commits) a
#: second line for the first ten hits found no more changed functions (0.831 within 8K
#: tokens either way) and cost the median task 62 tokens more (1,018 against 956)
MAX_MATCHED = 1


def words_of(text: str) -> tuple[str, ...]:
    """The query's words as spelled (their humps split them), each once case aside, in
    order; prose's small words left out."""
    out: list[str] = []
    seen: set[str] = set()
    for token in _TOKEN.findall(text):
        low = token.lower()
        if len(low) > 1 and low not in _STOP and not low.isdigit() and low not in seen:
            seen.add(low)
            out.append(token)
    return tuple(out)


def _parts(token: str) -> list[str]:
    return [p.lower() for p in _PART.findall(token)]


def line_score(line: str, query: Sequence[str]) -> int:
    """How much of the query a line holds: 2 for each query word one of its identifiers
    is (case aside), 1 for each whose parts all appear among its identifiers' parts
    (``client_ip`` for ``ClientIP``); a word only partly there counts nothing (``http`` in
    a line says nothing of ``ServeHTTP``)."""
    tokens = _TOKEN.findall(line)
    whole = {t.lower() for t in tokens}
    parts = {p for t in tokens for p in _parts(t)} | whole
    score = 0
    for word in query:
        if word.lower() in whole:
            score += 2
        elif (split := _parts(word)) and set(split) <= parts:
            score += 1
    return score


def matching_lines(
    chunk: Chunk, query: Sequence[str], most: int = MAX_MATCHED
) -> list[tuple[int, str]]:
    """The ``most`` lines of ``chunk`` that hold most of the query, as (line number, text
    shortened to MAX_LINE_CHARS), in file order; ties go to the earlier line. Empty when no
    line holds a query word (a hit that matched on a word of its path or doc only)."""
    scored: list[tuple[int, int, str]] = []
    for offset, line in enumerate(source_lines(chunk.text)):
        score = line_score(line, query) if line.strip() else 0
        if score:
            scored.append((-score, chunk.start_line + offset, line))
    best = sorted(scored)[:most]
    return [(number, _short(text)) for _, number, text in sorted(best, key=lambda s: s[1])]


def _short(line: str) -> str:
    text = line.strip()
    return text if len(text) <= MAX_LINE_CHARS else text[: MAX_LINE_CHARS - 1] + "…"
