"""search_code's arguments as an agent's client shows them: each one's type and the line that
says what it takes.

Why a module of its own: these lines are what an agent reads before it calls the tool (the
MCP client puts them in the tool's JSON schema), so they are the tool's documentation, edited
as such, apart from the wiring in esqlog.agent.server; the defaults they name are the ones
esqlog.agent.code_search uses. Only esqlog.agent.server imports this module (the ``mcp``
extra brings pydantic).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from esqlog.agent.code_search import (
    DEFAULT_BUDGET,
    DEFAULT_LIMIT,
    MAX_BUDGET,
    MAX_LIMIT,
    MIN_BUDGET,
)
from esqlog.agent.scope import Presence, TestsPresence

QueryArg = Annotated[
    str,
    Field(
        description=(
            "Identifiers and distinctive words from the code you look for (function, type "
            "or field names, error text, rare terms); a few words beat a sentence."
        )
    ),
]
MaxTokensArg = Annotated[
    int,
    Field(
        description=(
            f"Budget of the whole answer in tokens, {MIN_BUDGET}-{MAX_BUDGET}. The default "
            f"lists up to {DEFAULT_LIMIT} hits within {DEFAULT_BUDGET}; raise it with "
            "detail='code'."
        )
    ),
]
LimitArg = Annotated[
    int,
    Field(
        description=(
            f"How many hits to rank, 1-{MAX_LIMIT}; those that do not fit the budget are "
            "left out and counted on the last line."
        )
    ),
]
DetailArg = Annotated[
    str,
    Field(
        description=(
            "'list' (default): each hit's location and the line that holds the query's "
            "words or quoted text (signature and doc line when none does), a few dozen "
            "tokens a hit. 'code': whole chunks, best first, until max_tokens is spent."
        )
    ),
]
PathArg = Annotated[
    str | None,
    Field(description=("Only files matching this glob: 'src/**/*.go', '*.py', 'internal/auth/'.")),
]
LanguageArg = Annotated[
    str | None,
    Field(description=("Only this language: go, python, java, typescript, rust, ...")),
]
KindArg = Annotated[
    str | None,
    Field(description=("Only this kind of symbol: function, method, class, type, module.")),
]
TestsArg = Annotated[
    TestsPresence,
    Field(
        description=(
            "Test and example files: 'after' (default: listed after the implementation), "
            "'include' (ranked with it), 'exclude' or 'only'."
        )
    ),
]
ProseArg = Annotated[
    Presence,
    Field(
        description=(
            "Docs, changelogs and other text files: 'exclude' (default: code only), "
            "'include' or 'only'."
        )
    ),
]
OffsetArg = Annotated[
    int,
    Field(
        description=(
            "Skip this many ranked hits and list the rest without the score cut (the last "
            "line names the offset when hits were cut)."
        )
    ),
]
