"""esqlog's copy of the ``standard`` analyzer (esqlog.statistics.analysis), without an engine:
its examples, and its one regular expression against the readable UAX#29 rules it must
reproduce. tests/engine/test_analysis.py compares it with the engines' own analysis.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from esqlog.statistics.analysis import segments_by_rules, standard_terms


def test_examples() -> None:
    assert standard_terms("handleWebSocketUpgrade read_file") == [
        "handlewebsocketupgrade",
        "read_file",
    ]
    assert standard_terms("os.ReadFile(name) returns []byte, err") == [
        "os.readfile",
        "name",
        "returns",
        "byte",
        "err",
    ]
    assert standard_terms("1,000.5 v2 __init__ _ a:b it's") == [
        "1,000.5",
        "v2",
        "__init__",
        "a:b",
        "it's",
    ]
    assert standard_terms("café") is None  # non-ASCII: the engine decides
    assert standard_terms("x" * 300) is None


# Letters and digits around every character the word-break rules treat specially ("_" joins
# runs, ":" only between letters, "," ";" only between digits, "." "'" between either), with
# whitespace, a few other separators, and long runs that cross the 255-character limit.
RULE_ALPHABET = "aAbZz0159_:,;.'_:,;.' \t\n-/("


rule_text = st.one_of(
    st.text(alphabet=RULE_ALPHABET, max_size=60),
    st.lists(
        st.sampled_from([*RULE_ALPHABET, "ab", "12", "a.b", "1,2", "x" * 200, "9" * 120]),
        max_size=12,
    ).map("".join),
    st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=127), max_size=60),
)


def test_regex_examples_equal_the_rules() -> None:
    """Cases where the regex could plausibly part ways with rules WB6/WB7 and WB11/WB12."""
    for text in (
        "a_:b",
        "a:_b",
        "a.1",
        "1.a",
        "a1.2",
        "1.2a",
        "a.b.1",
        "1,,2",
        "a::b",
        "'a'",
        "_a_",
        "__",
        "a'b'c",
        "x" * 255,
        "x" * 256,
        "1" * 300 + " a",
    ):
        assert standard_terms(text) == segments_by_rules(text), repr(text)
    assert standard_terms("x" * 256) is None and standard_terms("x" * 255) == ["x" * 255]


@settings(max_examples=2000, deadline=None)
@given(text=rule_text)
def test_regex_segmentation_equals_the_rule_by_rule_reference(text: str) -> None:
    """standard_terms runs one regular expression for speed; the readable UAX#29 rules in
    segments_by_rules are what it must reproduce on any ASCII text, None cases included."""
    assert standard_terms(text) == segments_by_rules(text), repr(text)
