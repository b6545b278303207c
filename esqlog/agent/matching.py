"""The lines of a hit that hold the query's words: what grep would have shown for it.

Why: a listing that names ``tree.go:133-250 node.addRoute`` makes the agent read 118 lines to
find the one that holds "conflicts with existing wildcard"; ``tree.go:232`` and its text say
it at once. Words are compared as code spells them: a line's identifiers are split at case
humps, underscores and digits (``ClientIP`` holds ``client`` and ``ip``), case aside, so a
query word finds ``clientIP``, ``client_ip`` and ``ClientIP`` alike; a whole word counts
twice its parts, so the line naming ``ClientIP`` comes before one that says "client" only.
A query that quotes text (an error message whole, or a part set off in quotes or backticks:
esqlog.agent.quoted) is shown the line that holds the quotation, as rg prints it, whatever
line holds more of its words (``// need to check if it conflicts with the existing
wildcard`` holds all three words, the panic two lines below holds the message). Pure: the lines and
their numbers are the chunk's own, numbered as esqlog index numbers them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from esqlog.agent.chunks import Chunk, source_lines
from esqlog.agent.outline import MAX_LINE_CHARS
from esqlog.agent.queries import as_written
from esqlog.agent.quoted import Quotation, line_starts, occurrences, quotations

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
#: lines shown of one quotation at most, from its first: a doc sentence over two or three
#: lines is shown whole, a longer one starts where it starts
MAX_QUOTED_LINES = 3


class LineQuery(tuple[str, ...]):
    """The query's words (what :func:`line_score` counts) and the texts it quotes
    (esqlog.agent.quoted.quotations): what a hit's matching lines are chosen by. A tuple of
    the words, so whatever takes the words alone takes it unchanged."""

    quoted: tuple[Quotation, ...]

    def __new__(cls, words: Iterable[str], quoted: Iterable[Quotation] = ()) -> LineQuery:
        query = super().__new__(cls, words)
        query.quoted = tuple(quoted)
        return query


def words_of(text: str) -> LineQuery:
    """The query's words as spelled (their humps split them), each once case aside, in
    order, prose's small words left out; with the texts it quotes (``text`` as the agent
    wrote it or as esqlog.agent.queries.agent_query prepared it)."""
    out: list[str] = []
    seen: set[str] = set()
    for token in _TOKEN.findall(text):
        low = token.lower()
        if len(low) > 1 and low not in _STOP and not low.isdigit() and low not in seen:
            seen.add(low)
            out.append(token)
    return LineQuery(out, quotations(as_written(text)))


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
    line holds a query word (a hit that matched on a word of its path or doc only). When the
    query quotes text the chunk holds, the lines that hold it instead (:func:`quoted_lines`)."""
    if isinstance(query, LineQuery) and (quoted := quoted_lines(chunk, query)):
        return quoted
    scored: list[tuple[int, int, str]] = []
    for offset, line in enumerate(source_lines(chunk.text)):
        score = line_score(line, query) if line.strip() else 0
        if score:
            scored.append((-score, chunk.start_line + offset, line))
    best = sorted(scored)[:most]
    return [(number, _short(text)) for _, number, text in sorted(best, key=lambda s: s[1])]


def quoted_lines(chunk: Chunk, query: LineQuery) -> list[tuple[int, str]]:
    """The lines of ``chunk`` that hold the texts ``query`` quotes, as (line number, text),
    in file order: for each quotation the chunk holds, one occurrence, all its lines up to
    MAX_QUOTED_LINES (a quotation joined across lines spans them): one written exactly as
    quoted first (`` `httpx.Client` `` before "the httpx client"), then the one whose lines
    hold most of the query's words, then the earlier. A line too long to show whole is cut
    around the quotation. Empty when the chunk holds none of them."""
    lines, starts = source_lines(chunk.text), line_starts(chunk.text)
    shown: dict[int, tuple[int, int]] = {}  # line -> the quotation's columns in it
    for quoted in query.quoted:
        best: tuple[tuple[bool, int, int], dict[int, tuple[int, int]]] | None = None
        for at in occurrences(chunk.text, quoted.pattern, starts):
            span = range(at.first, min(at.last, at.first + MAX_QUOTED_LINES - 1) + 1)
            exact = chunk.text[at.start : at.end] == quoted.text
            key = (not exact, -max(line_score(lines[k], query) for k in span), at.first)
            if best is None or key < best[0]:
                best = (
                    key,
                    {
                        k: (max(at.start - starts[k], 0), min(at.end - starts[k], len(lines[k])))
                        for k in span
                    },
                )
        for k, columns in best[1].items() if best else ():
            shown.setdefault(k, columns)
    return [(chunk.start_line + k, _short(lines[k], *shown[k])) for k in sorted(shown)]


def _short(line: str, start: int = 0, end: int = 0) -> str:
    """``line`` stripped, at most MAX_LINE_CHARS: a longer one is cut at its end, or, when
    that would cut off its columns ``start:end`` (a quotation in it), so that they end the
    window (what comes before a message names the call that raises it), ``…`` marking each
    cut; a quotation longer than the window is shown from its start."""
    indent = len(line) - len(line.lstrip())
    text = line.strip()
    if len(text) <= MAX_LINE_CHARS:
        return text
    start, end = max(start - indent, 0), max(end - indent, 0)
    width = MAX_LINE_CHARS - 2  # a mark at each end
    first = max(0, end - width) if end - start <= width else start
    if end <= MAX_LINE_CHARS - 1 or first == 0:
        return text[: MAX_LINE_CHARS - 1] + "…"
    return "…" + text[first : first + width] + ("…" if first + width < len(text) else "")
