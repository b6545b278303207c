"""Language-neutral text rules: comment markers, first sentences, name deletion.

These are the rules that decide what a query is, so they live in one small
module with no I/O and are unit-tested on real snippets (tests/unit/test_corpora.py).
"""

from __future__ import annotations

import html
import re
import textwrap

MIN_QUERY_WORDS = 3
"""Queries with fewer words carry almost no signal ("Close.", "Returns x.")."""

_WORD = re.compile(r"[^\W_]+|_+[^\W_]\w*", re.UNICODE)
_TOKEN = re.compile(r"[A-Za-z0-9_]+")
_ABBREVIATIONS = frozenset(
    {
        "e.g.",
        "i.e.",
        "etc.",
        "vs.",
        "cf.",
        "approx.",
        "resp.",
        "incl.",
        "no.",
        "viz.",
        "mr.",
        "dr.",
        "et.",
        "al.",
        "ca.",
        "fig.",
        "eq.",
        "sec.",
        "ch.",
        "vol.",
        "esp.",
    }
)


def word_count(text: str) -> int:
    """Count words, ignoring punctuation, so "Close()." is one word, not two."""
    return len(_WORD.findall(text))


def token_count(text: str) -> int:
    """Count identifier-like tokens; the summary's 'mean doc length' uses this."""
    return len(_TOKEN.findall(text))


def strip_comment_markers(raw: str) -> str:
    """Turn a raw comment block (//, /* */, /** */, #) into its plain lines.

    One marker and at most one following space are removed per line, so code
    examples indented inside a comment keep their relative indentation.
    """
    text = raw.strip()
    if text.startswith("/*"):
        text = re.sub(r"^/\*+", "", text)
        text = re.sub(r"\*+/$", "", text)
        lines = [re.sub(r"^\s*\*(?!/) ?", "", line).rstrip() for line in text.split("\n")]
        return "\n".join(lines).strip("\n")
    out = []
    for line in text.split("\n"):
        line = line.strip()
        m = re.match(r"^(//+|#+)", line)
        if m:
            line = line[m.end() :]
            if line.startswith(" "):
                line = line[1:]
        out.append(line.rstrip())
    return textwrap.dedent("\n".join(out)).strip("\n")


def first_paragraph(text: str) -> str:
    """Return the first non-empty paragraph, joined into one line."""
    for para in re.split(r"\n\s*\n", text.strip()):
        joined = " ".join(line.strip() for line in para.split("\n") if line.strip())
        if joined:
            return joined
    return ""


def _is_abbreviation(text: str, end: int) -> bool:
    """True when the period ending at `end` closes an abbreviation or an initial.

    Follows go/doc's synopsis rule (a period after exactly one uppercase letter
    does not end a sentence: "U.S.") and adds the usual Latin abbreviations.
    """
    start = end
    while start > 0 and not text[start - 1].isspace() and text[start - 1] not in "(\"'":
        start -= 1
    word = text[start : end + 1].lower()
    if word in _ABBREVIATIONS:
        return True
    return end >= 1 and text[end - 1].isupper() and (end == 1 or not text[end - 2].isalpha())


def first_sentence(text: str) -> str:
    """Return the first sentence of the first paragraph of a doc comment.

    A sentence ends at '.', '!' or '?' followed by whitespace or the end of the
    paragraph (so "os.Open" or "3.14" never end one), like javadoc's and
    go/doc's summary rules.
    """
    para = first_paragraph(text)
    for m in re.finditer(r"[.!?](?=\s|$)", para):
        if m.group() == "." and _is_abbreviation(para, m.start()):
            continue
        return para[: m.end()].strip()
    return para.strip()


def normalize_space(text: str) -> str:
    """Collapse runs of whitespace into single spaces."""
    return re.sub(r"\s+", " ", text).strip()


def delete_name(query: str, names: tuple[str, ...] | list[str]) -> str:
    """Remove each identifier as a case-insensitive whole word from the query.

    This is the "no-name" query set: a query that spells out the function's
    name is trivially answered by lexical match on the signature, and removing
    it measures retrieval on the description alone. Punctuation left hanging at
    the start ("ReadFile: reads" -> "reads") is trimmed.
    """
    out = query
    for name in sorted({n for n in names if n}, key=len, reverse=True):
        pattern = rf"(?<![\w$]){re.escape(name)}(?![\w$])"
        out = re.sub(pattern, " ", out, flags=re.IGNORECASE)
    out = re.sub(r"\(\s*\)", " ", out)
    out = normalize_space(out)
    out = re.sub(r"\s+([,.;:!?])", r"\1", out)
    return out.lstrip(" ,.;:-").strip()


def usable_query(query: str) -> bool:
    """Whether a cleaned query has enough words to be a retrieval query."""
    return word_count(query) >= MIN_QUERY_WORDS


def strip_html(text: str) -> str:
    """Drop HTML tags and decode entities (Javadoc and some RDoc use HTML)."""
    return html.unescape(re.sub(r"<[^>]{0,200}>", "", text))


def dedent_code(first_line_prefix: str, code: str) -> str:
    """Dedent code whose first line was cut at its node's start column.

    `first_line_prefix` is the whitespace that preceded the node on its first
    line; adding it back makes textwrap.dedent see consistent indentation.
    """
    if first_line_prefix.strip():
        first_line_prefix = " " * len(first_line_prefix)
    return textwrap.dedent(first_line_prefix + code).rstrip()
