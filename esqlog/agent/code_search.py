"""The logic behind the MCP tools: esqlog-ranked hits packed into a token budget, and exact
lines of an indexed document. I/O-light and transport-free so it is testable on its own.

Everything here only reads the cluster (search and get); the index is the only source of
code, never the filesystem. Bad input raises ``ToolInputError`` with one line naming the
problem and the fix, which the server hands to the agent as a tool error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from esqlog.agent.tokens import TokenCounter
from esqlog.calibration.calibrate import check_calibration_plan
from esqlog.calibration.record import Calibration
from esqlog.engine.client import Engine
from esqlog.engine.failures import describe_failure, error_status, is_client_error
from esqlog.engine.paths import index_path
from esqlog.engine.steps import Request
from esqlog.errors import EsqlogError

MIN_BUDGET = 200
MAX_BUDGET = 200_000
MAX_LIMIT = 200
#: document fields shown with each hit when the index has them (``esqlog index``'s names)
PATH_FIELD, SYMBOL_FIELDS = "path", ("symbol", "name")
START_FIELD, END_FIELD = "start_line", "end_line"


def search_kwargs(flavor: str, index: str, field: str, query: str, limit: int) -> dict[str, Any]:
    """The match query as each client's search() takes it (opensearch-py: a body only)."""
    source = [field, PATH_FIELD, *SYMBOL_FIELDS, START_FIELD, END_FIELD]
    request: dict[str, Any] = {"query": {"match": {field: query}}, "size": limit,
                               "_source": source}
    if flavor == "opensearch":
        return {"index": index, "body": request}
    return {"index": index, "query": request["query"], "size": limit, "source": source}


def source_lines(text: str) -> list[str]:
    """A document's lines as editors and ``esqlog index`` number them: split on ``\\n``
    alone (``str.splitlines`` also splits on form feeds and other separators that source
    files contain, which would shift every later line number); a ``\\r`` before it goes."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


class ToolInputError(Exception):
    """Bad input or an unusable cluster answer, told to the agent (never a crash)."""


@dataclass(frozen=True)
class Chunk:
    """One indexed document as the agent sees it: where it is, and its text."""

    id: str
    text: str
    path: str | None
    symbol: str | None
    start_line: int  # of text's first line (1 when the document has no line fields)

    @property
    def end_line(self) -> int:
        return self.start_line + max(len(source_lines(self.text)), 1) - 1

    def header(self, rank: int, tokens: int | None = None) -> str:
        parts = [f"--- [{rank}] id={self.id}"]
        if self.path:
            parts.append(f"path={self.path}")
        parts.append(f"lines={self.start_line}-{self.end_line}")
        if self.symbol:
            parts.append(f"symbol={self.symbol}")
        if tokens is not None:
            parts.append(f"tokens={tokens}")
        return " ".join(parts)


def chunk_of(hit: dict[str, Any], field: str) -> Chunk:
    """A search or get answer's document as a Chunk (missing fields are simply absent)."""
    source = hit.get("_source") or {}
    text = source.get(field)
    symbol = next((source[f] for f in SYMBOL_FIELDS if isinstance(source.get(f), str)
                   and source[f]), None)
    start = source.get(START_FIELD)
    path = source.get(PATH_FIELD)
    return Chunk(id=str(hit["_id"]), text=text if isinstance(text, str) else "",
                 path=path if isinstance(path, str) and path else None, symbol=symbol,
                 start_line=start if isinstance(start, int) and start > 0 else 1)


#: tokens kept free for the answer's summary line while chunks are selected
SUMMARY_RESERVE = 80


def chunk_cost(chunk: Chunk, rank: int, counter: TokenCounter) -> int:
    """What one chunk costs inside an answer: its header line (with a 7-digit token count,
    so the count can be filled in without changing the size much) and its text."""
    body = chunk.text if chunk.text.endswith("\n") else chunk.text + "\n"
    return counter.count(chunk.header(rank, 10**6) + "\n" + body)


def pack(chunks: Sequence[Chunk], budget: int, counter: TokenCounter) -> tuple[str, int]:
    """The answer text and how many chunks it shows (see :func:`pack_ranks`)."""
    text, shown = pack_ranks(chunks, budget, counter)
    return text, len(shown)


def pack_ranks(chunks: Sequence[Chunk], budget: int,
               counter: TokenCounter) -> tuple[str, list[int]]:
    """The answer text: chunks whole, best first, while the WHOLE text stays in budget;
    and the 1-based ranks it shows (what esqlog.agent.budget_recall scores).

    A chunk that does not fit is left out and later (smaller) ones may still fit; the
    summary line names what was left out. The final text is counted again and trimmed
    from the end, since BPE counts of joined texts are not exactly additive.
    """
    blocks: list[tuple[int, str]] = []
    used = 0
    for rank, chunk in enumerate(chunks, start=1):
        size = chunk_cost(chunk, rank, counter)
        if used + size + SUMMARY_RESERVE <= budget:
            body = chunk.text if chunk.text.endswith("\n") else chunk.text + "\n"
            blocks.append((rank, chunk.header(rank, size) + "\n" + body))
            used += size
    while True:
        text = _answer(blocks, len(chunks), budget, counter.name)
        if counter.count(text) <= budget or not blocks:
            return text, [rank for rank, _ in blocks]
        blocks.pop()


def _answer(blocks: list[tuple[int, str]], found: int, budget: int, tokenizer: str) -> str:
    shown = {rank for rank, _ in blocks}
    left = [rank for rank in range(1, found + 1) if rank not in shown]
    summary = (f"{len(blocks)} of {found} hits shown within {budget} tokens "
               f"(counted with {tokenizer}); ")
    summary += (f"{len(left)} left out because they did not fit (ranks "
                f"{_ranges(left)}): raise max_tokens or read_code them by id"
                if left else "none left out")
    return "\n".join([summary, *(block for _, block in blocks)])


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


class CodeSearch:
    """search/read on one calibrated index, through the wrapped (q-log) client."""

    def __init__(self, engine: Engine, calibration: Calibration, index: str, field: str,
                 counter: TokenCounter, url: str | None = None,
                 mode: Literal["boost", "identifiers"] = "boost") -> None:
        """``mode``: the wrapper's ``boost`` (native match set) or ``identifiers`` (query
        words also match inside identifiers; the calibration needs --identifiers)."""
        from esqlog.wrapper import wrap

        self.engine, self.calibration, self.index, self.field = engine, calibration, index, field
        self.counter, self.url = counter, url
        self.client = wrap(engine.client, calibration, mode=mode)
        self._checked = False

    def search(self, query: str, max_tokens: int, limit: int) -> str:
        """esqlog's ranking of ``query`` (a match on the calibrated field), packed."""
        from esqlog.scoring.query_text import check_query_text

        if not MIN_BUDGET <= max_tokens <= MAX_BUDGET:
            raise ToolInputError(f"max_tokens {max_tokens} is outside {MIN_BUDGET}-{MAX_BUDGET}; "
                                 "pass a budget in that range (8000 is a good default)")
        if not 1 <= limit <= MAX_LIMIT:
            raise ToolInputError(f"limit {limit} is outside 1-{MAX_LIMIT}; pass a limit in "
                                 "that range")
        self._guard(lambda: check_query_text(query))
        self._check_index()
        response = self._guard(lambda: self.client.search(**search_kwargs(
            self.engine.flavor, self.index, self.field, query, limit)))
        hits = response["hits"]["hits"]
        return pack([chunk_of(h, self.field) for h in hits], max_tokens, self.counter)[0]

    def read(self, id: str | None, path: str | None, start_line: int | None,
             end_line: int | None) -> str:
        """Lines ``start_line``..``end_line`` (inclusive) of one document, from the index."""
        if (id is None) == (path is None):
            raise ToolInputError("pass exactly one of id or path")
        self._check_index()
        chunks = [self._get(id)] if id is not None else self._by_path(path or "")
        first = chunks[0].start_line
        last = chunks[-1].end_line
        start = first if start_line is None else start_line
        end = last if end_line is None else end_line
        if not first <= start <= end <= last:
            where = f"id {id}" if id is not None else f"path {path}"
            raise ToolInputError(f"lines {start}-{end} are outside {where} (lines "
                                 f"{first}-{last}); pass start_line <= end_line within them")
        lines: list[str] = []
        for chunk in chunks:
            for number, line in enumerate(source_lines(chunk.text), start=chunk.start_line):
                if start <= number <= end:
                    lines.append(line)
        return "\n".join(lines)

    def _get(self, id: str) -> Chunk:
        if not id.strip():
            raise ToolInputError("id is empty; pass an id from search_code")
        try:
            found = self.engine.perform(Request(
                "GET", index_path(self.index, "_doc", id)))
        except Exception as exc:
            if error_status(exc) == 404:
                raise ToolInputError(f"no document with id {id!r} in index {self.index!r}; "
                                     "pass an id from search_code") from None
            raise self._error(exc) from None
        if not found.get("found"):
            raise ToolInputError(f"no document with id {id!r} in index {self.index!r}; "
                                 "pass an id from search_code")
        return chunk_of(found, self.field)

    def _by_path(self, path: str) -> list[Chunk]:
        """Every chunk of one file (a term query: path is matched exactly), by line."""
        if not path.strip():
            raise ToolInputError("path is empty; pass a path from search_code")
        response = self._guard(lambda: self.engine.perform(Request(
            "POST", index_path(self.index, "_search"),
            body={"query": {"term": {PATH_FIELD: path}}, "size": 1000})))
        chunks = sorted((chunk_of(h, self.field) for h in response["hits"]["hits"]),
                        key=lambda c: c.start_line)
        if not chunks:
            raise ToolInputError(f"no document with path {path!r} in index {self.index!r}; "
                                 "pass a path from search_code (or an id)")
        if len(chunks) > 1 and any(c.start_line == 1 and c is not chunks[0] for c in chunks):
            raise ToolInputError(f"path {path!r} has {len(chunks)} documents without line "
                                 "numbers; read them by id")
        return chunks

    def _check_index(self) -> None:
        """Once per server: the calibration is this index's (a tool error until it is)."""
        if not self._checked:
            self._guard(lambda: self.engine.run(
                check_calibration_plan(self.calibration, self.index)))
            self._checked = True

    def _guard(self, call: Any) -> Any:
        try:
            return call()
        except ToolInputError:
            raise
        except EsqlogError as exc:
            raise ToolInputError(str(exc)) from None
        except Exception as exc:
            raise self._error(exc) from None

    def _error(self, exc: Exception) -> ToolInputError | Exception:
        if is_client_error(exc):
            return ToolInputError(str(describe_failure(exc, self.url)))
        return exc
