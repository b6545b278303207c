"""search_code's answers: hits packed, best first, into the token budget the agent asked for.

Two shapes, one rule. ``detail="list"`` (the default) gives each hit as a few lines an
agent can act on (``path:start-end symbol``, the first code line, the doc's first line:
~40 tokens); ``detail="code"`` gives whole chunks (what scripts/bench/budget_recall.py
scores). Either way the text the agent receives is counted again with the same
tokenizer at the end and trimmed from the end until it fits: BPE counts of joined texts
are not exactly additive, and a budget the answer can exceed is no budget.

The hits come first and what the agent may do next (how many were shown, what was left
out, the offset that lists it, how to read the code) is one short line after them: an agent
reads an answer from the top, and on a name the definition's entry is the answer. With
that line first (about 60 tokens), the definition of a rare symbol cost more tokens than
``rg -w NAME`` prints to reach it (104 against 62 on docs/benchmarks/agent-queries.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from esqlog.agent.chunks import Chunk
from esqlog.agent.matching import MAX_MATCHED, matching_lines
from esqlog.agent.outline import outline
from esqlog.agent.tokens import TokenCounter

#: a query's words as matching.words_of gives them
QueryWords = Sequence[str]
#: tokens kept free for the answer's closing summary line while hits are selected
SUMMARY_RESERVE = 80


def chunk_cost(chunk: Chunk, rank: int, counter: TokenCounter) -> int:
    """What one chunk costs inside a detail="code" answer: its header line (with a 7-digit
    token count, so the count can be filled in without changing the size much) and text."""
    return counter.count(chunk.header(rank, 10**6) + "\n" + _body(chunk))


def _body(chunk: Chunk) -> str:
    return chunk.text if chunk.text.endswith("\n") else chunk.text + "\n"


def pack(chunks: Sequence[Chunk], budget: int, counter: TokenCounter) -> tuple[str, int]:
    """The detail="code" answer and how many chunks it shows (see :func:`pack_ranks`)."""
    text, shown = pack_ranks(chunks, budget, counter)
    return text, len(shown)


def pack_ranks(
    chunks: Sequence[Chunk], budget: int, counter: TokenCounter, more: str = ""
) -> tuple[str, list[int]]:
    """Whole chunks, best first, while the WHOLE text stays in budget; and the 1-based
    ranks shown. A chunk that does not fit is left out and later (smaller) ones may still
    fit; the summary line after them names what was left out."""
    blocks: list[tuple[int, str]] = []
    used = 0
    for rank, chunk in enumerate(chunks, start=1):
        size = chunk_cost(chunk, rank, counter)
        if used + size + SUMMARY_RESERVE <= budget:
            blocks.append((rank, chunk.header(rank, size) + "\n" + _body(chunk)))
            used += size
    hint = "raise max_tokens or read_code them"
    return _fit(
        blocks, lambda kept: _summary(kept, len(chunks), budget, hint, more=more), budget, counter
    )


#: hits of a listing shown with their signature and doc lines; the rest get one line each
OUTLINED = 10


def listing_entry(
    chunk: Chunk, rank: int, outlined: bool = True, query: QueryWords | None = None
) -> str:
    """One hit of a detail="list" answer: where it is (``path:start-end symbol``), then the
    line that holds the query's words best (``query``: matching.words_of), numbered; when no
    line holds them, an ``outlined`` hit shows its signature and doc lines instead.

    Why the matching line alone: it says why the hit is listed, as grep's output line does,
    and the location line already names the symbol. On the localization benchmark (160 real
    commits, docs/benchmarks/localize.md, run v8) the signature and doc line beside it cost
    the median task about half of its listing tokens and found nothing more.

    ``path:start-end`` is exactly what read_code takes; a document without path or line
    fields is named by its id instead (the only handle read_code has for it). A signature
    that does not name the chunk's symbol is a body line (the second part of a function
    cut in two) and is not shown as one."""
    where = (
        f"{chunk.path}:{chunk.start_line}-{chunk.end_line}"
        if chunk.located
        else f"id={chunk.id}"
        + (f" {chunk.path}" if chunk.path else "")
        + f" lines {chunk.start_line}-{chunk.end_line}"
    )
    head = f"{rank}. {where}" + (f" {chunk.symbol}" if chunk.symbol else "")
    matched = matching_lines(chunk, query, MAX_MATCHED if outlined else 1) if query else []
    shown = [f"   {number}| {text}" for number, text in matched]
    if shown or not outlined:
        return "\n".join([head, *shown])
    signature, doc = outline(chunk.text)
    lines = [head]
    if signature and _names(signature, chunk.symbol):
        lines.append(f"   {signature}")
    if doc:
        lines.append(f"   {doc}")
    return "\n".join(lines)


def _names(signature: str, symbol: str | None) -> bool:
    """Whether a signature line is the symbol's own (it spells the symbol's last part), or
    the chunk names no symbol to check it against."""
    if not symbol:
        return True
    return signature != symbol and symbol.rsplit(".", 1)[-1] in signature


def pack_listing(
    chunks: Sequence[Chunk],
    budget: int,
    counter: TokenCounter,
    query: QueryWords | None = None,
    more: str = "",
) -> tuple[str, list[int]]:
    """The detail="list" answer: one entry per hit, best first, while it stays in budget;
    past the first OUTLINED hits an entry is its location line and one matching line
    (about half the tokens), so a default answer lists more candidates within the same
    budget. ``more`` (the hits the score cut left out) goes in the summary line after
    the entries."""
    blocks: list[tuple[int, str]] = []
    used = 0
    for rank, chunk in enumerate(chunks, start=1):
        entry = listing_entry(chunk, rank, outlined=rank <= OUTLINED, query=query)
        size = counter.count(entry)
        if used + size + SUMMARY_RESERVE > budget:
            break  # entries are alike in size: the rest would not fit either
        blocks.append((rank, entry))
        used += size
    hint = "raise max_tokens to list them"
    return _fit(
        blocks,
        lambda kept: _summary(kept, len(chunks), budget, hint, listing=True, more=more),
        budget,
        counter,
    )


def _fit(
    blocks: list[tuple[int, str]],
    summary: Callable[[list[tuple[int, str]]], str],
    budget: int,
    counter: TokenCounter,
) -> tuple[str, list[int]]:
    """The final text counted as sent (the blocks, then the summary line), blocks dropped
    from the end until it fits."""
    while True:
        text = "\n".join([*(block for _, block in blocks), summary(blocks)])
        if counter.count(text) <= budget or not blocks:
            return text, [rank for rank, _ in blocks]
        blocks = blocks[:-1]


def _summary(
    blocks: list[tuple[int, str]],
    found: int,
    budget: int,
    hint: str,
    listing: bool = False,
    more: str = "",
) -> str:
    """The closing line: hits shown, those the budget left out (by rank, with ``hint``),
    ``more`` (what the score cut left out) and, for a listing, how to read the code. Terse:
    every answer pays for it."""
    shown = {rank for rank, _ in blocks}
    left = [rank for rank in range(1, found + 1) if rank not in shown]
    parts = [
        f"{len(blocks)} of {found} hits shown"
        if left
        else f"{found} hit{'s' if found != 1 else ''} shown"
    ]
    if left:
        parts.append(
            f"{len(left)} left out for the budget of {budget} tokens (ranks "
            f"{_ranges(left)}): {hint}"
        )
    if more:
        parts.append(more)
    if listing and blocks:
        parts.append("code: read_code(path, start_line, end_line)")
    return "; ".join(parts)


def _ranges(ranks: list[int]) -> str:
    """[2, 3, 4, 9] -> '2-4, 9' (a long list costs the agent tokens for nothing)."""
    out: list[str] = []
    start = prev = ranks[0]
    for rank in [*ranks[1:], -1]:
        if rank != prev + 1:
            out.append(f"{start}-{prev}" if prev > start else str(start))
            start = rank
        prev = rank
    return ", ".join(out)
