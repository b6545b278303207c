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
words, a commit message) is ranked as before. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from esqlog.agent.hits import Hit

#: fewer words than this are a phrase too short to say where it was written
MIN_WORDS = 3
#: a query longer than this many words is no quotation (a task or a commit message)
MAX_WORDS = 40
_WORD = re.compile(r"[A-Za-z0-9]+")


def quotation(query: str) -> re.Pattern[str] | None:
    """The pattern of the query's words in order, case aside, separated by anything that is
    no letter or digit; None when the query has fewer than MIN_WORDS or more than MAX_WORDS
    words."""
    words = _WORD.findall(query)
    if not MIN_WORDS <= len(words) <= MAX_WORDS:
        return None
    return re.compile(
        r"(?<![A-Za-z0-9])" + r"[^A-Za-z0-9]+".join(map(re.escape, words)) + r"(?![A-Za-z0-9])",
        re.IGNORECASE,
    )


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
