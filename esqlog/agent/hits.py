"""Hits as the answer lists them: one entry per function, and only the hits that score.

Why: ``esqlog index`` cuts a long function into chunks of a few dozen lines, and both halves
of ``node.getValue`` matched, so the listing named it twice, the second time with a body line
as its "signature". And every answer filled its 50 places: past the few hits that hold the
query's rare words come dozens that share one common word (``.goreleaser.yaml:1-56``), each
costing the agent tokens and a decision. So adjacent chunks of one symbol merge into one
entry (the first part's start, the last part's end, their text joined), and the listing stops
where the match's scores fall away: a hit scoring below a share of the best (CUT_FRACTIONS,
by the mode) is left out
and counted, with how to ask for it. Scores are the match's own: the constants that lift
definitions (esqlog.agent.names.constant) are taken off first, and a definition the query
names is never cut. Of what is listed, tests come after the rest by default
(implementation_first). Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from esqlog.agent.chunks import Chunk, chunk_of, source_lines
from esqlog.agent.names import DEFINITION_LIFT, lifted
from esqlog.agent.scope import is_test

#: a hit scoring below this share of the best hit's match score is left out, per mode of the
#: wrapper. Commit messages are vaguer than doc comments: on the localization benchmark
#: (scripts/bench/localize, 160 real commits) a cut at 35% in the identifiers mode left out
#: the changed function of tasks it used to find at ranks 22-50 (success within 8K tokens
#: 0.781 against 0.819 uncut), while 20% found as many as no cut at all; on 120 queries drawn
#: from httpx's and gin's doc comments (scripts/bench/agent_hits.py --words 3) the gold's
#: lowest share was 0.208 in the boost mode and 0.460 in the identifiers mode, so half the
#: identifiers share for boost keeps the same margin
CUT_FRACTIONS = {"boost": 0.1, "identifiers": 0.2}
CUT_FRACTION = CUT_FRACTIONS["boost"]


@dataclass(frozen=True)
class Hit:
    """One ranked document: its chunk, the match's own score, and where the engine ranked
    it (0-based, the ``offset`` that lists from it)."""

    chunk: Chunk
    score: float
    position: int
    #: the constants its definition clauses added (esqlog.agent.names.lifted)
    lift: float = 0.0

    @property
    def definition(self) -> bool:
        """Whether the query names this hit's symbol (bare or as a member)."""
        return self.lift >= DEFINITION_LIFT


def hits_of(raw: Sequence[dict[str, Any]], field: str, offset: int = 0) -> list[Hit]:
    """The engine's hits with their lifts taken off their scores."""
    out: list[Hit] = []
    for k, hit in enumerate(raw):
        lift = lifted(hit.get("matched_queries"))
        score = hit.get("_score")
        match = float(score) - lift if isinstance(score, int | float) else 0.0
        out.append(Hit(chunk_of(hit, field), match, offset + k, lift))
    return out


def merge_parts(hits: Sequence[Hit]) -> list[Hit]:
    """One entry per function: a hit whose chunk continues (or precedes) a better-ranked
    hit's, same path and symbol with touching line ranges, joins that entry; the entry keeps
    the better rank and score."""
    out: list[Hit] = []
    for hit in hits:
        for k, kept in enumerate(out):
            if _adjacent(kept.chunk, hit.chunk):
                out[k] = replace(
                    kept, chunk=_joined(kept.chunk, hit.chunk), lift=max(kept.lift, hit.lift)
                )
                break
        else:
            out.append(hit)
    return out


def _adjacent(a: Chunk, b: Chunk) -> bool:
    if not (a.located and b.located and a.path == b.path and a.symbol and a.symbol == b.symbol):
        return False
    return b.start_line <= a.end_line + 1 and a.start_line <= b.end_line + 1


def _joined(a: Chunk, b: Chunk) -> Chunk:
    """The two chunks' lines as one chunk, each line once, numbered from the first."""
    first, second = (a, b) if a.start_line <= b.start_line else (b, a)
    lines = source_lines(first.text)
    extra = source_lines(second.text)[max(first.end_line + 1 - second.start_line, 0) :]
    return replace(first, id=a.id, text="\n".join([*lines, *extra]) + "\n")


def cut(
    hits: Sequence[Hit], fraction: float = CUT_FRACTION, name_only: bool = False
) -> tuple[list[Hit], list[Hit]]:
    """(listed, left out): a hit is listed when it is one of the definitions the query
    names best (the highest lift: ``Timeout.__init__`` itself, not every ``__init__``) or
    its match score is at least ``fraction`` of the best one's; the order stays the
    engine's. When the query is a name alone (``name_only``) and the index defines it, the
    definitions are the answer: the hits that only mention the name (whose scores, lifts
    included, fall far below the definitions') are left out."""
    best = max((h.score for h in hits), default=0.0)
    named = max((h.lift for h in hits), default=0.0)
    defined = name_only and named >= DEFINITION_LIFT

    def kept(hit: Hit) -> bool:
        if hit.definition and hit.lift >= named:
            return True
        return not defined and hit.score >= fraction * best

    return [h for h in hits if kept(h)], [h for h in hits if not kept(h)]


def implementation_first(hits: Sequence[Hit]) -> list[Hit]:
    """The hits with test and example files after the others, each group in its order
    (scope.is_test; the definitions a query names stay first, tests' after the rest of
    them): what is listed still scores near the best, tests included, but an agent reads
    the implementation first."""
    return sorted(hits, key=lambda h: (not h.definition, is_test(h.chunk.path)))
