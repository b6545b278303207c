"""Names as agents write them: what definition a query names, and how it is ranked first.

Why: agents name APIs the way they read them, ``httpx.Client``, ``Context.ClientIP``,
``github.com/gin-gonic/gin.(*Context).Next``. Under the ``standard`` analyzer such a name is
one token no document holds, and its last part (``Client``, ``Next``) is an ordinary word that
tests mention far more often than the definition does; BM25 alone lists the tests first. The
definition is known from the index itself: ``esqlog index`` stores each symbol's name
(``symbol``, members as ``Owner.member``) and file path as keywords. So a name's last part
is looked up exactly among the symbols, its owner (``Context.Next``) exactly among the
members, and the other parts of its qualifier (``httpx``, ``binding``) in the file paths;
each lookup adds a constant far above what a match scores, so the definitions come first in
the match's own order among them. Pure: the clauses are built here, searched by code_search.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from esqlog.agent.chunks import END_FIELD, PATH_FIELD, START_FIELD, SYMBOL_FIELDS
from esqlog.agent.frames import FRAME_REST, PY_FRAME, SOURCE_FILE, Place, path_clause, places, spans
from esqlog.agent.queries import named_symbols

#: added to the score of a hit whose symbol is a named one (a bare definition)
SYMBOL_BOOST = 10_000.0
#: a member named so (``Owner.name``): below a bare definition, so ``httpx.get`` lists the
#: module function before ``Client.get``
MEMBER_BOOST = 6_000.0
#: the whole qualified member (``Context.Next``) as the index names it
QUALIFIED_BOOST = 10_000.0
#: a qualifier part in the file's path (``binding`` in binding/binding.go)
PATH_BOOST = 3_000.0
#: a named definition at the place a stack frame points to (its file, a line it spans):
#: above every other definition of that name (esqlog.agent.frames)
PLACE_BOOST = 10_000.0

#: a stack frame's receiver, ``(*Context)`` or ``(Context)``: the owner's name
_RECEIVER = re.compile(r"\(\*?([A-Za-z_][\w$]*)\)")
#: a qualified name: parts joined by ``.``, ``/``, ``::`` or ``#`` (Ruby's ``Class#method``)
_QUALIFIED = re.compile(r"[A-Za-z_$][\w$-]*(?:(?:\.|/|::|#)[A-Za-z_$][\w$-]*)+")
_SPLIT = re.compile(r"\.|/|::|#")
#: qualifier parts that say nothing of where the definition is
_HOSTS = frozenset(
    {
        "github",
        "com",
        "org",
        "net",
        "io",
        "golang",
        "gitlab",
        "www",
        "src",
        "lib",
        "pkg",
        "main",
        "self",
        "this",
        "cls",
    }
)
#: hexadecimal numbers (a Go frame's argument words and program counter offset)
_HEX = re.compile(r"\+?\b0x[0-9a-fA-F]+\b")
#: a plain word that, alone, is taken for a name (three characters at least)
_BARE = re.compile(r"[A-Za-z_$][\w$]{2,}")
#: what a word of the query may hold for the whole query to be one name
_ONE_NAME = re.compile(r"^[\w$.:/#()*<>-]+$")


@dataclass(frozen=True)
class NamedQuery:
    """The definitions a query names."""

    #: what a symbol field holds bare (``Client``, ``Next``, ``dialConn``)
    names: tuple[str, ...] = ()
    #: members as the index names them (``Context.Next``)
    qualified: tuple[str, ...] = ()
    #: qualifier parts to find in the path (lowercase: ``httpx``, ``binding``)
    in_path: tuple[str, ...] = ()
    #: the whole query is one name (its absence from the index is then the answer)
    only_name: bool = False
    #: where the query's stack frames point (esqlog.agent.frames)
    places: tuple[Place, ...] = ()


def named(text: str) -> NamedQuery:
    """The names ``text`` spells: a qualified name's last part (whatever it is: ``Client``
    is a name here, not a word), its owner with it, its other parts for the path; and the
    code-shaped words (``dialConn``: queries.named_symbols)."""
    normal = _RECEIVER.sub(r"\1", text)
    names: list[str] = []
    qualified: list[str] = []
    in_path: list[str] = []
    for frame in PY_FRAME.finditer(normal):  # the function, and its file for the path
        if frame.group("name") not in names:
            names.append(frame.group("name"))
        _add_path_parts(frame.group("path"), in_path)
    normal = PY_FRAME.sub(" ", normal)
    for source in SOURCE_FILE.finditer(normal):  # Java's (MethodSpec.java:531)
        _add_path_parts(source.group("path"), in_path)
    normal = _HEX.sub(" ", SOURCE_FILE.sub(" ", normal))  # Go's +0x1d names nothing
    for match in _QUALIFIED.finditer(normal):
        parts = [p for p in _SPLIT.split(match.group()) if p]
        if len(parts) < 2 or ("/" in match.group() and re.fullmatch(r"[a-z0-9]{1,4}", parts[-1])):
            continue  # a file's path (pkg/auth.go): no definition is named by it
        # a nested class as the JVM names it (TypeSpec$Builder): the index names the member
        # by its own class (Builder.build)
        last, owner = parts[-1], parts[-2].split("$")[-1]
        if re.fullmatch(r"[A-Za-z_$][\w$]*", last) and last not in names:
            names.append(last)
        if re.fullmatch(r"[A-Za-z_$][\w$]*", owner):
            full = f"{owner}.{last}"
            if full not in qualified:
                qualified.append(full)
        for part in parts[:-1]:
            for piece in re.split(r"[-.$]", part.lower()):
                if len(piece) > 1 and piece not in _HOSTS and piece not in in_path:
                    in_path.append(piece)
    for word in named_symbols(normal):
        if word not in names:
            names.append(word)
    words = text.split()
    if len(words) == 1 and _BARE.fullmatch(words[0]) and words[0] not in names:
        names.append(words[0])  # a word alone is a name (Stream, head): agents grep names
    where = places(text) if names else ()
    only = bool(names) and (
        (len(words) == 1 and bool(_ONE_NAME.match(words[0])))
        or (len(where) == 1 and _one_frame(normal))
    )
    if not names and not qualified:  # a path alone (src/pkg/auth.go) names no definition
        in_path = []
    return NamedQuery(tuple(names), tuple(qualified), tuple(in_path), only, where)


def _one_frame(rest: str) -> bool:
    """Whether a frame's text, its Python frame and source files taken out, holds nothing
    but its qualified name and a frame's punctuation (Java's ``at``, Go's ``(...)`` and
    ``+0x1d``): a name query in disguise, answered as a name is."""
    return not FRAME_REST.sub(" ", _QUALIFIED.sub(" ", rest)).strip()


def _add_path_parts(path: str, in_path: list[str]) -> None:
    """A source file's folders and stem, lowercased, as parts to find in the path
    (``httpx/_client.py``: ``httpx``, ``_client``)."""
    pieces = [p for p in re.split(r"[/\\]", path) if p and p not in (".", "..")]
    if not pieces:
        return
    pieces[-1] = pieces[-1].rsplit(".", 1)[0]
    for piece in pieces[-3:]:
        piece = piece.lower()
        if len(piece) > 1 and piece not in _HOSTS and piece not in in_path:
            in_path.append(piece)


def definition_clauses(query: NamedQuery) -> list[dict[str, Any]]:
    """The optional clauses that lift definitions above mentions (constant scores: the
    match set stays the match's). Names carry no wildcard character (they are words)."""
    symbol = SYMBOL_FIELDS[0]
    clauses: list[dict[str, Any]] = []
    if query.names:
        clauses.append(constant({"terms": {symbol: list(query.names)}}, SYMBOL_BOOST, "symbol"))
        clauses.append(
            constant(
                {
                    "bool": {
                        "should": [
                            {"wildcard": {symbol: {"value": f"*.{name}"}}} for name in query.names
                        ]
                    }
                },
                MEMBER_BOOST,
                "member",
            )
        )
    if query.qualified:
        clauses.append(
            constant({"terms": {symbol: list(query.qualified)}}, QUALIFIED_BOOST, "qualified")
        )
    if query.in_path and (query.names or query.qualified):
        clauses.append(
            constant(
                {
                    "bool": {
                        "should": [
                            {
                                "wildcard": {
                                    PATH_FIELD: {"value": f"*{part}*", "case_insensitive": True}
                                }
                            }
                            for part in query.in_path
                        ]
                    }
                },
                PATH_BOOST,
                "path",
            )
        )
    if query.places and query.names:
        clauses.append(
            constant(
                {
                    "bool": {
                        "should": [
                            {
                                "bool": {
                                    "filter": [
                                        _named(query),
                                        path_clause(place, PATH_FIELD),
                                        *spans(place, START_FIELD, END_FIELD),
                                    ]
                                }
                            }
                            for place in query.places
                        ]
                    }
                },
                PLACE_BOOST,
                "place",
            )
        )
    return clauses


def _named(query: NamedQuery) -> dict[str, Any]:
    """Documents defining one of the names (bare, a member, or the qualified member)."""
    symbol = SYMBOL_FIELDS[0]
    should: list[dict[str, Any]] = [{"terms": {symbol: [*query.names, *query.qualified]}}]
    should += [{"wildcard": {symbol: {"value": f"*.{name}"}}} for name in query.names]
    return {"bool": {"should": should, "minimum_should_match": 1}}


def is_definition(symbol: str | None, query: NamedQuery) -> bool:
    """Whether a hit's symbol is one the query names (bare or ``Owner.name``)."""
    if not symbol:
        return False
    return any(symbol == name or symbol.endswith("." + name) for name in query.names)


def closest_clause(query: NamedQuery) -> dict[str, Any]:
    """Symbols spelled like the names (one or two edits, or sharing a prefix): what the
    answer offers when nothing defines them."""
    symbol = SYMBOL_FIELDS[0]
    should: list[dict[str, Any]] = []
    for name in query.names:
        should.append({"fuzzy": {symbol: {"value": name, "fuzziness": "AUTO", "boost": 3}}})
        should.append({"prefix": {symbol: {"value": name[: max(3, len(name) // 2)], "boost": 2}}})
        humps = re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", name)
        for hump in humps:  # a word of the name inside another (Transport in HTTPTransport)
            if len(hump) >= 4:
                should.append(
                    {"wildcard": {symbol: {"value": f"*{hump.lower()}*", "case_insensitive": True}}}
                )
    return {"bool": {"should": should}}


#: the ``_name`` of a lifting clause: its prefix, then the constant it adds
LIFT_PREFIX = "esqlog-lift:"
#: lifts at least this large mark a definition (the path lift alone does not)
DEFINITION_LIFT = MEMBER_BOOST


def constant(query: dict[str, Any], boost: float, tag: str) -> dict[str, Any]:
    """A clause adding ``boost`` to the documents ``query`` matches, named so that a hit's
    ``matched_queries`` say how much of its score is a lift and not the match's
    (:func:`lifted`). ``tag`` keeps the names of one query's clauses apart: the engine
    keeps one clause per name, so two lifts named alike would report only one."""
    return {
        "constant_score": {
            "filter": query,
            "boost": boost,
            "_name": f"{LIFT_PREFIX}{tag}:{boost:g}",
        }
    }


def lifted(matched: object) -> float:
    """The constants a hit's ``matched_queries`` added to its score (the engine lists a
    named clause once per hit, so each lift counts once)."""
    total = 0.0
    for name in matched if isinstance(matched, list) else ():
        if isinstance(name, str) and name.startswith(LIFT_PREFIX):
            try:
                total += float(name.rsplit(":", 1)[-1])
            except ValueError:
                continue
    return total
