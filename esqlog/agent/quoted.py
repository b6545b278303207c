"""Text quoted from the code: an error message or a doc sentence, found where it is written.

Why: an agent pastes what it read, ``cannot read nil body`` from a log or a sentence of a
doc comment. BM25 ranks the hits that share those words, and for words as common as these
every file shares some: the listing filled its 2,000 tokens with them (a median of 1,849
tokens for error messages on docs/benchmarks/agent-queries.md), and the function that
raises the message was not always first. The hits whose text holds the query's words in
its order, with nothing but spaces and punctuation between them (string concatenation,
comment markers and line breaks included), are where the text is written: they are the
answer, as a definition is for a name, and the others are counted with the offset that
lists them. A query whose words no hit holds in that order (a question in the agent's own
words, a commit message) is ranked as before. The same patterns say where in a hit the
quotation is (:func:`occurrences`), so the line an answer shows for it is the line that holds it
(esqlog.agent.matching). Pure.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from esqlog.agent.hits import Hit

#: fewer words than this are a phrase too short to say where it was written
MIN_WORDS = 3
#: a query longer than this many words is no quotation (a task or a commit message)
MAX_WORDS = 40
_WORD = re.compile(r"[A-Za-z0-9]+")
#: what an agent sets off as quoted inside a longer query: ``"..."``, ``“...”`` or a name in
#: backticks. Single quotes are no mark: they are apostrophes, and the quoting inside the
#: messages themselves (``'%s' in new path '%s'``)
_SET_OFF = re.compile(r'"([^"\n]+)"|“([^”\n]+)”|`([^`\n]+)`')


def _pattern(words: Sequence[str]) -> re.Pattern[str]:
    """``words`` in order, case aside, separated by anything that is no letter or digit."""
    return re.compile(
        r"(?<![A-Za-z0-9])" + r"[^A-Za-z0-9]+".join(map(re.escape, words)) + r"(?![A-Za-z0-9])",
        re.IGNORECASE,
    )


def quotation(query: str) -> re.Pattern[str] | None:
    """The pattern of the query's words in order, case aside, separated by anything that is
    no letter or digit; None when the query has fewer than MIN_WORDS or more than MAX_WORDS
    words."""
    words = _WORD.findall(query)
    if not MIN_WORDS <= len(words) <= MAX_WORDS:
        return None
    return _pattern(words)


@dataclass(frozen=True)
class Quotation:
    """A text a query quotes: as written, from its first word to its last, and the pattern
    that finds it (:func:`quotation`'s rule)."""

    text: str
    pattern: re.Pattern[str]


def quotations(query: str) -> tuple[Quotation, ...]:
    """Every text ``query`` quotes, each once: the whole query when it is a quotation, then
    each part it sets off in double quotes or backticks, of any length up to MAX_WORDS
    words (``panic "conflicts with existing wildcard"``, `` `httpx.Client` ``: the agent's
    marks say what is quoted)."""
    found = [Quotation(_trimmed(query), whole)] if (whole := quotation(query)) else []
    for mark in _SET_OFF.finditer(query):
        text = next(g for g in mark.groups() if g is not None)
        words = _WORD.findall(text)
        if 1 <= len(words) <= MAX_WORDS:
            found.append(Quotation(_trimmed(text), _pattern(words)))
    return tuple(dict.fromkeys(found))


def _trimmed(text: str) -> str:
    """``text`` from its first letter or digit to its last."""
    words = list(_WORD.finditer(text))
    return text[words[0].start() : words[-1].end()] if words else ""


@dataclass(frozen=True)
class Occurrence:
    """Where a text holds a quotation once: its first and last line (0-based, lines split on
    ``\\n`` as esqlog.agent.chunks.source_lines numbers them) and its offsets in the text."""

    first: int
    last: int
    start: int
    end: int


def line_starts(text: str) -> list[int]:
    """The offset in ``text`` where each of its lines starts (lines split on ``\\n``, as
    :class:`Occurrence` numbers them): 0, then one past each newline."""
    return [0, *(m.end() for m in re.finditer("\n", text))]


def occurrences(
    text: str, pattern: re.Pattern[str], starts: Sequence[int] | None = None
) -> list[Occurrence]:
    """Every place ``text`` holds the quotation ``pattern``, in order (a quotation joined
    across lines spans them). ``starts``: ``line_starts(text)`` when the caller has them
    (one text searched for several quotations)."""
    if starts is None:
        starts = line_starts(text)
    return [
        Occurrence(
            bisect_right(starts, m.start()) - 1, bisect_right(starts, m.end() - 1) - 1, *m.span()
        )
        for m in pattern.finditer(text)
    ]


def quoting(hits: Sequence[Hit], query: str) -> tuple[list[Hit], list[Hit]] | None:
    """(the hits holding the query's text, the others), in the engine's order; None when
    the query is no quotation or no hit holds it."""
    pattern = quotation(query)
    if pattern is None:
        return None
    holds = [bool(pattern.search(h.chunk.text)) for h in hits]
    if not any(holds):
        return None
    return (
        [h for h, held in zip(hits, holds, strict=True) if held],
        [h for h, held in zip(hits, holds, strict=True) if not held],
    )
