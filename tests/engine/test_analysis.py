"""The client-side standard analyzer must agree with the engines' own _analyze exactly."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from esqlog.engine.client import Engine
from esqlog.statistics.analysis import standard_terms
from tests.support.engines import call
from tests.support.oracle import load_query_texts


def engine_terms(engine: Engine, texts: list[str]) -> list[list[str]]:
    out = []
    for text in texts:
        tokens = call(engine, "POST", "/_analyze", {"analyzer": "standard", "text": text})
        out.append([t["token"] for t in tokens["tokens"]])
    return out


@pytest.mark.engine
def test_agrees_with_engine_on_real_queries(engine: Engine) -> None:
    texts = [t for t in load_query_texts()[:600] if t.isascii()]
    assert len(texts) > 300
    for text, expected in zip(texts, engine_terms(engine, texts), strict=True):
        assert standard_terms(text) == expected, text


PIECES = [*"aZ09_.:,;'-/ ()[]{}\"$#@!?+=*&%\t\n", "ab", "Cd", "12", "x.y", "1.2", "a_b"]
ascii_text = st.lists(st.sampled_from(PIECES), max_size=20).map("".join)


@pytest.mark.engine
@settings(max_examples=150, deadline=None)
@given(texts=st.lists(ascii_text, min_size=1, max_size=5))
def test_agrees_with_engine_on_random_ascii(opensearch: Engine, texts: list[str]) -> None:
    for text, expected in zip(texts, engine_terms(opensearch, texts), strict=True):
        assert standard_terms(text) == expected, repr(text)
