"""Identifier splitting: ``handleWebSocketUpgrade`` -> handle, web, socket, upgrade.

Why: under the ``standard`` analyzer an identifier is one token, so a query word never
matches inside it. The ``identifiers`` mode (esqlog.identifiers.query) scores a query word s
against every vocabulary term whose split contains s; this module defines that split, on
the index side (calibrate, from the original casing in ``_source``) and on the query side
alike, so both see the same sub-words.

The rule is the one the offline pre-study measured (``_IDENT_RE`` of its ``qlog_eval.py``,
also the usual ``word_delimiter`` behaviour): runs of capitals before a capitalised word
(``HTTPServer`` -> http, server), a capital followed by lower-case letters, capital runs,
digit runs, and runs of other letters; ``_`` and everything else only separates. Cased
letters are ASCII ones, so a non-ASCII letter run becomes its own part (``naïve`` -> na,
ïve), as in the pre-study; code identifiers are nearly all ASCII. Parts are lower-cased
with ``str.lower``.
"""

from __future__ import annotations

import re

from esqlog.statistics.analysis import MAX_TOKEN_LENGTH

# Same alternation, same order as the pre-study (the order decides overlapping matches).
_IDENT = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_]+")

# The standard tokenizer's word runs, keeping the case (esqlog.statistics.analysis lower-cases
# them).
CASED_TOKEN = re.compile(
    r"[A-Za-z0-9_]+(?:(?:(?<=[A-Za-z])[:.'](?=[A-Za-z])"
    r"|(?<=[0-9])[,;.'](?=[0-9]))[A-Za-z0-9_]+)*"
)
_HAS_ALNUM = re.compile(r"[A-Za-z0-9]")


def split_identifier(token: str) -> tuple[str, ...]:
    """The lower-cased sub-words of one original-cased token; () when it does not split.

    A token that yields a single part (``read``, ``Read``, ``READ``) does not split: its
    only sub-word is the token itself, which the query already holds.
    """
    parts = _IDENT.findall(token)
    if len(parts) < 2:
        return ()
    return tuple(p.lower() for p in parts)


def cased_tokens(text: str) -> list[str]:
    """The ``standard`` analyzer's tokens of ``text`` before lower-casing.

    Exact for ASCII text (the same expression as esqlog.statistics.analysis, which the tests check
    against both engines' ``_analyze``). On other text it may cut words differently; the
    callers only use a token whose lower-cased form the engine itself reports, so a wrong
    cut can only leave a term without a known casing, never invent a term.
    """
    return [
        t for t in CASED_TOKEN.findall(text) if _HAS_ALNUM.search(t) and len(t) <= MAX_TOKEN_LENGTH
    ]


def split_stream(text: str) -> list[str]:
    """Split-and-keep stream of text: each token, then its sub-words when it splits.

    What an index with a ``word_delimiter``-style analyzer that keeps originals would hold
    (the pre-study's ``tok_ident_keep``, for ASCII text); the query side of the mode.
    """
    out: list[str] = []
    for token in cased_tokens(text):
        out.append(token.lower())
        out.extend(split_identifier(token))
    return out
