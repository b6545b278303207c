"""What an agent's query text becomes before it is searched: the parts of names that the
``standard`` analyzer would keep whole, without the tokens no code holds.

Why: agents paste what they read. The ``standard`` tokenizer keeps ``_termui_impl.open_url``
and ``pkg/auth/token.go`` as one token that no document holds, while ``open_url`` is indexed;
and a commit hash or an issue number in a task description matches nothing but costs a
clause (in the identifiers mode, a hash is even split into letter-and-digit sub-words). So a
dotted, slashed or ``::`` name also contributes its parts (the whole token is kept: in Go
code ``os.ReadFile`` is itself one indexed token), and hashes, issue references and URLs
are dropped. Pure: the same text always gives the same query.
"""

from __future__ import annotations

import re

#: a name joined by dots, slashes or ``::`` (``a.b``, ``pkg/x.go``, ``Mod::Class``)
_JOINED = re.compile(r"[A-Za-z_][\w$]*(?:(?:\.|/|::)[A-Za-z_][\w$]*)+")
#: tokens no code holds: commit hashes (hex with digits and letters), ``#123``, ``GH-123``, URLs
_NOISE = re.compile(
    r"https?://[^\s)\]>]+|(?<![\w#])#\d+\b|\bGH-\d+\b|"
    r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b"
)
#: file extensions a path-like name ends with: not a word of the code's
_EXTENSIONS = frozenset(
    {
        "go",
        "py",
        "pyi",
        "java",
        "rb",
        "rs",
        "js",
        "ts",
        "tsx",
        "jsx",
        "c",
        "h",
        "cc",
        "cpp",
        "hpp",
        "md",
        "txt",
        "json",
        "yaml",
        "yml",
        "toml",
    }
)


def agent_query(text: str) -> str:
    """``text`` without noise tokens, with the parts of joined names added after it."""
    cleaned = " ".join(_NOISE.sub(" ", text).split())
    extra = _parts(cleaned)
    return f"{cleaned} {' '.join(extra)}" if extra else cleaned


def as_written(query: str) -> str:
    """An :func:`agent_query` answer without the parts it added after the text (its noise
    stays out): the words in the order the agent wrote them, as a quotation needs them.
    The parts a text adds are the same with them added (a part joins nothing), so they are
    known from the answer itself."""
    extra = _parts(query)
    return query.removesuffix(" " + " ".join(extra)) if extra else query


def _parts(text: str) -> list[str]:
    """The parts of the joined names in ``text``, each once, in order (a path's file
    extension is no part)."""
    extra: list[str] = []
    for match in _JOINED.finditer(text):
        parts = re.split(r"\.|/|::", match.group())
        if "/" in match.group() and parts[-1].lower() in _EXTENSIONS:
            parts = parts[:-1]
        extra.extend(p for p in parts if len(p) > 1 and p not in extra)
    return extra


#: a word the way code spells a name: two humps (``dialConn``, ``JsonPrimitive``,
#: ``HTTPServer``), a snake (``open_url``), letters with digits (``utf8Decode``)
_NAMED = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]|[A-Za-z0-9]_[A-Za-z0-9]|[A-Za-z]\d|\d[A-Za-z]")
_WORD = re.compile(r"[A-Za-z_$][\w$]*")
#: a word quoted in backticks (`` `decode` ``) or called (``decode(``)
_CALLED = re.compile(r"`([A-Za-z_$][\w$]*)(?:\(\))?`|\b([A-Za-z_$][\w$]*)\(")


def named_symbols(text: str) -> list[str]:
    """The names ``text`` spells as code does, in order, each once: what a definition's
    symbol field holds exactly (a joined name contributes its parts: ``os.ReadFile`` names
    ``ReadFile``). Plain words (``decode``, ``Close``) are prose until the text calls them
    (``decode()``) or quotes them in backticks."""
    kept = _NOISE.sub(" ", text)
    quoted = {m.group(1) or m.group(2) for m in _CALLED.finditer(kept)}
    names: list[str] = []
    for word in _WORD.findall(kept):
        if len(word) > 2 and (word in quoted or _NAMED.search(word)) and word not in names:
            names.append(word)
    return names
