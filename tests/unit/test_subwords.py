"""Identifier splitting (esqlog.scoring.subwords): the documented rule, by examples and
properties."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from esqlog.scoring.subwords import cased_tokens, split_identifier, split_stream
from esqlog.statistics.analysis import standard_terms

ASCII_WORDS = st.text(alphabet="abcXYZ09_", min_size=1, max_size=24)
ASCII_TEXT = st.text(alphabet="aBcDxY09_ .:,;'()-\n", max_size=60)


def test_examples() -> None:
    assert split_identifier("handleWebSocketUpgrade") == ("handle", "web", "socket", "upgrade")
    assert split_identifier("HTTPServer") == ("http", "server")
    assert split_identifier("read_file") == ("read", "file")
    assert split_identifier("utf8Decode") == ("utf", "8", "decode")
    assert split_identifier("__init__") == ()  # one part: nothing to split
    assert split_identifier("read") == ()
    assert split_identifier("READ") == ()
    assert split_stream("os.ReadFile(name)") == ["os.readfile", "os", "read", "file", "name"]


@given(ASCII_WORDS)
def test_parts_are_the_token_without_separators(token: str) -> None:
    """Parts cover every letter and digit of an ASCII token, in order, and nothing else."""
    parts = split_identifier(token)
    if parts:
        assert "".join(parts) == re.sub(r"[^A-Za-z0-9]", "", token).lower()
        assert len(parts) >= 2


@given(ASCII_WORDS)
def test_parts_do_not_split_again(token: str) -> None:
    """Splitting is idempotent on lower-cased parts: a part is one sub-word."""
    for part in split_identifier(token):
        assert split_identifier(part) in ((), tuple(re.findall(r"[a-z]+|\d+", part)))
        assert not re.search(r"[a-z]\d|\d[a-z]|_", part)


@given(ASCII_TEXT)
def test_cased_tokens_lower_to_the_standard_terms(text: str) -> None:
    """The cased tokenizer is the standard analyzer before lower-casing (ASCII text)."""
    assert [t.lower() for t in cased_tokens(text)] == standard_terms(text)


@given(ASCII_TEXT)
def test_stream_keeps_originals_in_order(text: str) -> None:
    """The standard terms are a subsequence of the split stream (originals kept, in order),
    and the stream adds exactly the sub-words of the tokens that split."""
    stream = split_stream(text)
    terms = standard_terms(text) or []
    rest = iter(stream)
    assert all(any(t == s for s in rest) for t in terms)
    assert len(stream) == len(terms) + sum(len(split_identifier(t)) for t in cased_tokens(text))
