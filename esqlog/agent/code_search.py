"""search_code's logic: esqlog-ranked hits packed into a token budget. Transport-free so it
is testable on its own (read_code's logic is esqlog.agent.reading, which CodeSearch extends).

Everything here only reads the cluster (search); the index is the only source of code,
never the filesystem. Bad input raises ``ToolInputError`` with one line naming the problem
and the fix, which the server hands to the agent as a tool error. Answers stay under Claude
Code's 25,000-token cut of a tool result: search_code's budget is capped at MAX_BUDGET.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from esqlog.agent.chunks import (
    END_FIELD,
    PATH_FIELD,
    START_FIELD,
    SYMBOL_FIELDS,
    ToolInputError,
)
from esqlog.agent.hits import (
    CUT_FRACTION,
    CUT_FRACTIONS,
    Hit,
    cut,
    hits_of,
    implementation_first,
    merge_parts,
)
from esqlog.agent.matching import words_of
from esqlog.agent.names import (
    NamedQuery,
    closest_clause,
    definition_clauses,
    is_definition,
    named,
)
from esqlog.agent.packing import pack_listing, pack_ranks
from esqlog.agent.queries import agent_query
from esqlog.agent.quoted import quoting
from esqlog.agent.reading import PATH_PAGE, FileReader
from esqlog.agent.scope import Scope, is_test
from esqlog.agent.tokens import TokenCounter
from esqlog.calibration.record import Calibration
from esqlog.engine.client import Engine
from esqlog.engine.paths import index_path
from esqlog.engine.steps import Request

MIN_BUDGET = 200
#: under Claude Code's default 25,000-token cut of one tool result (it warns above 10,000)
MAX_BUDGET = 20_000
#: the default listing: up to 50 hits within 2,000 tokens, the first 10 with their signature
#: and doc lines, the rest one line each (packing.OUTLINED). With 20 outlined hits the gold
#: was listed for 82.1% of the Go queries, and no budget could raise that; the one-line
#: tail lists 45 on average and the gold for 84.3% (docs/benchmarks/token-recall.md)
DEFAULT_BUDGET = 2_000
MAX_LIMIT = 200
DEFAULT_LIMIT = 50
#: with tests ranked after the implementation (the default), the engine is asked for this
#: many times ``limit`` hits (up to MAX_LIMIT), so that the implementation the listing puts
#: first is drawn from deeper than the first ``limit`` of a ranking that tests crowd. Why: on
#: a gson tree test methods outnumber the code and repeat its class names, and the changed
#: function of "Throw exception when registering adapter for Object or JsonElement" ranked
#: past 50 behind 44 tests, so "tests after" never reached it (the localization benchmark,
#: docs/benchmarks/localize.md, run v8)
TESTS_AFTER_POOL = 3
DETAILS = ("list", "code")
MAX_OFFSET = 10_000


def _narrowing(scope: Scope) -> str:
    """The filters that keep documents out (prose is out by default: not counted)."""
    parts = [
        f"{name}={value!r}"
        for name, value in (
            ("path", scope.path),
            ("language", scope.language),
            ("kind", scope.kind),
        )
        if value
    ]
    parts += [
        f"{name}={value!r}"
        for name, value in (("tests", scope.tests), ("prose", scope.prose))
        if value == "only"
    ]
    return ", ".join(parts)


def _more(left: Sequence[Hit], why: str) -> str:
    """What the summary says of the hits the cut left out (``why``), and how to list them."""
    if not left:
        return ""
    first = min(h.position for h in left)
    return f"{len(left)} more {why}: offset={first} lists the ranking from there, uncut"


def _listed(
    ranked: Sequence[Hit], query: str, fraction: float, names: NamedQuery
) -> tuple[list[Hit], str]:
    """The hits an answer from the top lists, and what its summary says of the rest: the
    hits holding the text the query quotes (esqlog.agent.quoted), else the definitions a
    name alone names, else those scoring near the best (esqlog.agent.hits.cut)."""
    quoted = None if names.only_name else quoting(ranked, query)
    if quoted is not None:
        return quoted[0], _more(quoted[1], "do not hold the query's text")
    listed, left = cut(ranked, fraction, names.only_name)
    defined = names.only_name and any(h.definition for h in listed)
    why = "are not the named definition" if defined else f"scored below {fraction:.0%} of the best"
    return listed, _more(left, why)


def pool_size(limit: int, scope: Scope, offset: int) -> int:
    """How many hits the engine is asked for: ``limit``, or TESTS_AFTER_POOL times it (up to
    MAX_LIMIT) when a listing from the top ranks tests after the implementation."""
    if scope.tests != "after" or offset:
        return limit
    return max(limit, min(MAX_LIMIT, TESTS_AFTER_POOL * limit))


def _after_limit(listed: Sequence[Hit], limit: int, more: str) -> tuple[list[Hit], str]:
    """The first ``limit`` of the implementation-first listing, and the summary's note on
    the rest (tests, or implementation past the limit) with how to list them."""
    kept, rest = list(listed[:limit]), listed[limit:]
    if not rest:
        return kept, more
    tests = sum(1 for h in rest if is_test(h.chunk.path))
    what = f"{len(rest)} more past limit={limit}" + (f", {tests} of them tests" if tests else "")
    note = f"{what}: raise limit or pass tests='only' to list them"
    return kept, f"{more}; {note}" if more else note


def search_kwargs(
    flavor: str,
    index: str,
    field: str,
    query: str,
    limit: int,
    scope: Scope | None = None,
    symbols: Sequence[str] | NamedQuery = (),
    offset: int = 0,
) -> dict[str, Any]:
    """The match query (inside the scope's filters) as each client's search() takes it
    (opensearch-py: a body only). The definitions of the names the query spells
    (``symbols``: esqlog.agent.names.named, or bare names) are listed before the hits that
    only mention them: constant scores far above what a match scores are added
    (esqlog.agent.names.definition_clauses), so among the definitions and among the rest the
    match's order holds. Why: asked for ``dialConn`` or ``httpx.Client``, the agent wants the
    definition, not its shorter callers or the tests, which BM25's length norm puts first.
    The match set is the match's (the clauses are optional); ``offset`` hits are
    skipped (the engine's ``from``)."""
    source = [field, PATH_FIELD, *SYMBOL_FIELDS, START_FIELD, END_FIELD]
    named_query = symbols if isinstance(symbols, NamedQuery) else NamedQuery(tuple(symbols))
    match: dict[str, Any] = {"match": {field: query}}
    clauses = definition_clauses(named_query)
    if clauses:
        match = {"bool": {"must": [match], "should": clauses}}
    request: dict[str, Any] = {
        "query": scope.query(match) if scope else match,
        "size": limit,
        "_source": source,
    }
    if offset:
        request["from"] = offset
    if flavor == "opensearch":
        return {"index": index, "body": request}
    return {
        "index": index,
        "query": request["query"],
        "size": limit,
        "source": source,
        **({"from_": offset} if offset else {}),
    }


class CodeSearch(FileReader):
    """search_code (and read_code) on one calibrated index, through the wrapped (q-log)
    client."""

    def __init__(
        self,
        engine: Engine,
        calibration: Calibration,
        index: str,
        field: str,
        counter: TokenCounter,
        url: str | None = None,
        mode: Literal["boost", "identifiers"] = "boost",
        page_size: int = PATH_PAGE,
    ) -> None:
        """``mode``: the wrapper's ``boost`` (native match set) or ``identifiers`` (query
        words also match inside identifiers; the calibration needs --identifiers).
        ``page_size``: documents per scroll page of read_code(path=...)."""
        from esqlog.wrapper import wrap

        super().__init__(engine, calibration, index, field, counter, url, page_size)
        self.mode = mode
        self.client = wrap(engine.client, calibration, mode=mode)
        self._symbols: bool | None = None  # whether the index names definitions, once asked

    def reload(self, calibration: Calibration) -> None:
        """Rank with ``calibration`` from now on (the one a re-index refreshed), checked
        against the index again at the next call."""
        from esqlog.wrapper import wrap

        self.calibration = calibration
        self.client = wrap(self.engine.client, calibration, mode=self.mode)
        self._checked = False
        self._symbols = None

    def search(
        self,
        query: str,
        max_tokens: int = DEFAULT_BUDGET,
        limit: int = DEFAULT_LIMIT,
        detail: str = "list",
        scope: Scope | None = None,
        offset: int = 0,
    ) -> str:
        """esqlog's ranking of ``query`` (a match on the calibrated field, its text as
        esqlog.agent.queries prepares an agent's, within ``scope``: no prose by default, tests
        after the rest): a listing of the hits (``detail="list"``) or their whole chunks
        (``"code"``), within ``max_tokens``; one entry per function, and (from the top, not
        past an ``offset``) only the hits that score near the best (esqlog.agent.hits)."""
        from esqlog.scoring.query_text import check_query_text

        if not MIN_BUDGET <= max_tokens <= MAX_BUDGET:
            raise ToolInputError(
                f"max_tokens {max_tokens} is outside {MIN_BUDGET}-{MAX_BUDGET}; "
                f"pass a budget in that range ({DEFAULT_BUDGET} is the default)"
            )
        if not 1 <= limit <= MAX_LIMIT:
            raise ToolInputError(
                f"limit {limit} is outside 1-{MAX_LIMIT}; pass a limit in that range"
            )
        if not 0 <= offset <= MAX_OFFSET:
            raise ToolInputError(
                f"offset {offset} is outside 0-{MAX_OFFSET}; pass the offset "
                "an answer's last line names"
            )
        if detail not in DETAILS:
            raise ToolInputError(
                f'detail {detail!r} is not one of list, code; pass "list" '
                '(locations, signatures) or "code" (whole chunks)'
            )
        self._guard(lambda: check_query_text(query))
        text = agent_query(query) or query
        self._check_index()
        names = named(query)
        scope = Scope() if scope is None else scope
        pool = pool_size(limit, scope, offset)
        response = self._guard(
            lambda: self.client.search(
                **search_kwargs(
                    self.engine.flavor, self.index, self.field, text, pool, scope, names, offset
                )
            )
        )
        ranked = merge_parts(hits_of(response["hits"]["hits"], self.field, offset))
        fraction = CUT_FRACTIONS.get(self.mode, CUT_FRACTION)
        listed, more = _listed(ranked, query, fraction, names) if offset == 0 else (ranked, "")
        if scope.tests == "after":
            listed, more = _after_limit(implementation_first(listed), limit, more)
        chunks = [h.chunk for h in listed]
        if not chunks and (problem := self._filter_problem(scope, offset)):
            return problem
        if not chunks and (narrowed := _narrowing(scope)):
            return f"no hits within {narrowed}: widen or drop these filters"
        note = ""
        if (
            names.only_name
            and not any(is_definition(c.symbol, names) for c in chunks)
            and self._has_symbols()
        ):
            note = self._no_definition(names)
            if not any(self._mentioned(name) for name in names.names):
                return note + "\nno indexed text holds it either."
        if not chunks:
            return "\n".join(filter(None, [note, "no hits: no indexed document matches"]))
        budget = max_tokens - self.counter.count(note) if note else max_tokens
        listing = (
            pack_listing(chunks, budget, self.counter, words_of(text), more)[0]
            if detail == "list"
            else pack_ranks(chunks, budget, self.counter, more)[0]
        )
        return f"{note}\n{listing}" if note else listing

    def _filter_problem(self, scope: Scope, offset: int) -> str:
        """Why nothing matched, when a filter says: past the offset, or a language or kind
        the index does not hold, with the values it does (one terms aggregation per such
        filter); empty when the filters are not the reason."""
        if offset:
            return f"no hits past offset {offset}"
        problems = []
        for field, value in (("language", scope.language), ("kind", scope.kind)):
            if value:
                present = self._values(field)
                if value.lower() not in present:
                    problems.append(
                        f"no document has {field}={value!r}; this index has "
                        f"{field} " + (", ".join(present) or "none")
                    )
        return "; ".join(problems)

    def _values(self, field: str) -> list[str]:
        """The values of a keyword field present in the index, most frequent first."""
        body = {"size": 0, "aggs": {"values": {"terms": {"field": field, "size": 100}}}}
        found = self._guard(
            lambda: self.engine.perform(
                Request("POST", index_path(self.index, "_search"), body=body)
            )
        )
        buckets = ((found.get("aggregations") or {}).get("values") or {}).get("buckets") or []
        return [str(b["key"]) for b in buckets if "key" in b]

    def _no_definition(self, names: NamedQuery) -> str:
        """The answer's first line when a name-only query has no definition in the index,
        with the symbols spelled most like it."""
        body = {"query": closest_clause(names), "size": 20, "_source": [SYMBOL_FIELDS[0]]}
        hits = self._guard(
            lambda: self.engine.perform(
                Request("POST", index_path(self.index, "_search"), body=body)
            )
        )["hits"]["hits"]
        close: list[str] = []
        for hit in hits:
            symbol = (hit.get("_source") or {}).get(SYMBOL_FIELDS[0])
            if isinstance(symbol, str) and symbol not in close:
                close.append(symbol)
        shown = ", ".join(close[:5]) if close else "none"
        return f"no definition named {' / '.join(names.names)} in this index; closest: {shown}"

    def _has_symbols(self) -> bool:
        """Whether the index names its definitions at all (esqlog index's ``symbol``): in one
        that does not, a missing definition says nothing. Asked once."""
        if self._symbols is None:
            self._symbols = self._any({"exists": {"field": SYMBOL_FIELDS[0]}})
        return self._symbols

    def _mentioned(self, name: str) -> bool:
        """Whether any indexed term holds the name: ``httptest.NewRecorder`` is one token
        under the ``standard`` analyzer, so a term wildcard over the field's dictionary
        (lowercased as the analyzer does; a name is a word, so no wildcard character of its
        own). Asked only when nothing defines a name-only query: one request, no scoring."""
        return self._any({"wildcard": {self.field: {"value": f"*{name.lower()}*"}}})

    def _any(self, query: dict[str, Any]) -> bool:
        """Whether any document matches ``query`` (no hits fetched, counting stops at one)."""
        body = {"query": query, "size": 0, "track_total_hits": 1}
        found = self._guard(
            lambda: self.engine.perform(
                Request("POST", index_path(self.index, "_search"), body=body)
            )
        )
        total = found["hits"]["total"]
        return (total["value"] if isinstance(total, dict) else int(total)) > 0
