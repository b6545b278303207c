"""Client-side twin of the ``standard`` analyzer for ASCII text, to skip a round trip.

Most code indices this tool serves keep Elasticsearch's default ``standard`` analyzer
(Unicode UAX#29 word breaks, then lowercase). For ASCII text those word-break rules are
short enough to reproduce exactly, which lets the wrapper analyze a query locally and, when
the terms' statistics are already cached, send the rewritten search with no extra request.
Anything outside plain ASCII, or a token longer than the tokenizer's 255-character limit,
returns None and the engine analyzes instead. The test suite checks this function against
the engines' own ``_analyze`` on thousands of real query texts and random ASCII strings.
"""

from __future__ import annotations

import re

MAX_TOKEN_LENGTH = 255

_LETTER, _DIGIT, _EXTEND, _MID_LETTER, _MID_NUM, _MID_NUM_LET, _OTHER = range(7)


def _char_class(c: str) -> int:
    if c.isascii() and c.isalpha():
        return _LETTER
    if c.isascii() and c.isdigit():
        return _DIGIT
    if c == "_":
        return _EXTEND  # ExtendNumLet
    if c == ":":
        return _MID_LETTER
    if c in ",;":
        return _MID_NUM
    if c in ".'":
        return _MID_NUM_LET  # MidNumLet and Single_Quote behave alike here
    return _OTHER


def _no_break(classes: list[int], i: int) -> bool:
    """UAX#29 rules WB5-WB13b: no word break between positions i-1 and i."""
    prev, cur = classes[i - 1], classes[i]
    nxt = classes[i + 1] if i + 1 < len(classes) else _OTHER
    before = classes[i - 2] if i >= 2 else _OTHER
    alnum = (_LETTER, _DIGIT)
    if prev in alnum and cur in alnum:  # WB5, WB8, WB9, WB10
        return True
    if prev == _LETTER and cur in (_MID_LETTER, _MID_NUM_LET) and nxt == _LETTER:  # WB6
        return True
    if before == _LETTER and prev in (_MID_LETTER, _MID_NUM_LET) and cur == _LETTER:  # WB7
        return True
    if prev == _DIGIT and cur in (_MID_NUM, _MID_NUM_LET) and nxt == _DIGIT:  # WB12
        return True
    if before == _DIGIT and prev in (_MID_NUM, _MID_NUM_LET) and cur == _DIGIT:  # WB11
        return True
    if prev in (_LETTER, _DIGIT, _EXTEND) and cur == _EXTEND:  # WB13a
        return True
    return prev == _EXTEND and cur in alnum  # WB13b


# The same segmentation as one regular expression (what standard_terms runs): runs of
# letters, digits and "_" (WB5, WB8-WB10, WB13a/b), continued across ":" "." "'" between two
# letters (WB6/WB7) and across "," ";" "." "'" between two digits (WB11/WB12). The rule-by-rule
# version above (segments_by_rules) is kept as the readable reference the tests compare with.
_TOKEN = re.compile(r"[A-Za-z0-9_]+(?:(?:(?<=[A-Za-z])[:.'](?=[A-Za-z])"
                    r"|(?<=[0-9])[,;.'](?=[0-9]))[A-Za-z0-9_]+)*")
_HAS_ALNUM = re.compile(r"[A-Za-z0-9]")


def standard_terms(text: str) -> list[str] | None:
    """The ``standard`` analyzer's terms for ASCII ``text``, or None when unsure."""
    if not text.isascii():
        return None
    terms = [t.lower() for t in _TOKEN.findall(text) if _HAS_ALNUM.search(t)]
    if any(len(t) > MAX_TOKEN_LENGTH for t in terms):
        return None
    return terms


def segments_by_rules(text: str) -> list[str] | None:
    """standard_terms computed rule by rule (UAX#29 WB5-WB13b): the reference for the tests."""
    if not text.isascii():
        return None
    classes = [_char_class(c) for c in text]
    terms: list[str] = []
    start = 0
    for i in range(1, len(text) + 1):
        if i < len(text) and _no_break(classes, i):
            continue
        segment = text[start:i]
        if any(classes[j] in (_LETTER, _DIGIT) for j in range(start, i)):
            if len(segment) > MAX_TOKEN_LENGTH:
                return None
            terms.append(segment.lower())
        start = i
    return terms
