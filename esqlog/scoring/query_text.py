"""Query text esqlog will search for: checked once, before any request, by every entry point.

Why below the CLI: ``esqlog search``, ``esqlog explain`` and the agent's ``search_code`` all
take text from a person or a model; the same bad text must get the same one-line answer
whichever door it came through.
"""

from __future__ import annotations

import unicodedata

from esqlog.errors import UsageError

MAX_QUERY_BYTES = 100 * 1024
_ALLOWED_CONTROLS = frozenset("\t\n")


def check_query_text(text: str) -> str:
    """Reject query text that cannot be a sensible search, before any request is sent.

    Order matters: bytes that are not UTF-8 cannot even be measured or shown safely, so
    they are named first.
    """
    bad = next((i for i, ch in enumerate(text) if "\ud800" <= ch <= "\udfff"), None)
    if bad is not None:
        raw = text[bad].encode("utf-8", "surrogateescape")
        raise UsageError(
            f"query text is not valid UTF-8 (byte 0x{raw.hex()} at character {bad})",
            "pass the query as UTF-8 text (check the terminal's or file's encoding)",
        )
    size = len(text.encode("utf-8"))
    if size > MAX_QUERY_BYTES:
        raise UsageError(
            f"query text is {size:,} bytes, more than the {MAX_QUERY_BYTES:,} esqlog accepts",
            "search for fewer words",
        )
    control = next(
        (
            i
            for i, ch in enumerate(text)
            if ch not in _ALLOWED_CONTROLS and unicodedata.category(ch) == "Cc"
        ),
        None,
    )
    if control is not None:
        raise UsageError(
            f"query text contains a control character (U+{ord(text[control]):04X} at "
            f"character {control})",
            "remove it; only tab and newline are allowed",
        )
    if not text.strip():
        raise UsageError("query text is empty", "pass the words to search for")
    return text
