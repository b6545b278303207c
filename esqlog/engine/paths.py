"""Every URL path esqlog sends: index names checked against the engines' rules, all quoted.

Why one place: an index name comes from the user (``--index``), and pasted into a URL as it
is, ``victim/_doc/1#`` turns a search into a write to another index. Every request path
with a variable part is built here, and a test (``tests/unit/test_paths.py``) fails on any
``Request`` whose path is built elsewhere.

* :func:`index_path` ``/<index>/<part>...``: the index checked, then every part quoted as
  one path segment (``/`` inside a document id cannot add a segment, ``#`` or ``?`` cannot
  end the path).
* :func:`api_path` ``/<part>...`` for endpoints that name no index (``/_scripts/<id>``).

``patterns=True`` is for reads only: it also allows what the engines read as several
indices (``logs-*``, ``a,b``, ``remote:index``). A path that writes or deletes is built with
the default, so it names exactly one index or alias.
"""

from __future__ import annotations

import re
from urllib.parse import quote

from esqlog.errors import UsageError

#: characters no index or alias name may hold (both engines), besides upper case
_FORBIDDEN = re.compile(r'[\\/?"<>| #\x00-\x1f]')
_PATTERN_ONLY = re.compile(r"[*,:]")
MAX_NAME_BYTES = 255


def check_index_name(name: str, *, patterns: bool = False) -> str:
    """``name`` if both engines accept it as an index or alias name, else a UsageError.

    The rules are the engines' own (lower case; none of ``\\ / * ? " < > | , # :`` or a
    space; not ``-``, ``_`` or ``+`` first; not ``.`` or ``..``; at most 255 bytes), checked
    before any request so that a name is refused in one line, never sent.
    """
    parts = name.split(",") if patterns else [name]
    for part in parts:
        bare = part.split(":", 1)[-1] if patterns else part
        problem = _name_problem(bare, patterns)
        if problem:
            raise UsageError(
                f"{name!r} is not a usable index name: {problem}",
                "pass a lowercase name such as code-myrepo (letters, digits, "
                "- and _ ; not starting with - _ or +)",
            )
    return name


def _name_problem(name: str, patterns: bool) -> str | None:
    if not name:
        return "it is empty"
    if name in (".", ".."):
        return "it is . or .."
    if name[0] in "-_+":
        return f"it starts with {name[0]!r}"
    if name != name.lower():
        return "it has upper-case letters"
    bad = _FORBIDDEN.search(name) or (None if patterns else _PATTERN_ONLY.search(name))
    if bad:
        return f"it holds {bad.group()!r}"
    if len(name.encode("utf-8")) > MAX_NAME_BYTES:
        return f"it is longer than {MAX_NAME_BYTES} bytes"
    return None


def segment(part: str) -> str:
    """One path segment, percent-encoded (``/``, ``#``, ``?`` and ``%`` included); a comma
    stays, as the engines read it in lists of fields or metrics (``_stats/docs,store``)."""
    return quote(part, safe=",")


def index_path(index: str, *parts: str, patterns: bool = False) -> str:
    """``/<index>/<part>/...``: ``index`` checked (see :func:`check_index_name`), all quoted."""
    check_index_name(index, patterns=patterns)
    head = quote(index, safe=",*:") if patterns else quote(index, safe="")
    return "/" + "/".join([head, *(segment(p) for p in parts)])


def api_path(*parts: str) -> str:
    """``/<part>/...`` for an endpoint that names no index, every part quoted."""
    return "/" + "/".join(segment(p) for p in parts)
