"""Text quoted from the code (esqlog.agent.quoted) and how it decides an answer from the top
(code_search._listed): the hits holding the query's words in order are the answer."""

from __future__ import annotations

import pytest

from esqlog.agent.chunks import Chunk
from esqlog.agent.code_search import _listed
from esqlog.agent.hits import Hit
from esqlog.agent.names import SYMBOL_BOOST, NamedQuery, named
from esqlog.agent.quoted import MAX_WORDS, quotation, quoting


def _hit(text: str, position: int, score: float = 1.0, lift: float = 0.0) -> Hit:
    chunk = Chunk(
        id=str(position),
        text=text,
        path=f"f{position}.go",
        symbol=f"F{position}",
        start_line=1,
        lines_known=True,
    )
    return Hit(chunk, score, position, lift)


@pytest.mark.parametrize(
    ("text", "holds"),
    [
        ('return nil, errors.New("cannot read nil body")', True),
        ("raise RuntimeError(\n    'Cannot read '\n    'nil body')", True),  # joined literals
        ("// Cannot read\n// nil body, so it returns", True),  # a comment over two lines
        ('errors.New("cannot read nil bodyguard")', False),  # a word inside a longer one
        ('errors.New("cannot read the nil body")', False),  # another word between
        ('errors.New("nil body: cannot read")', False),  # another order
    ],
)
def test_a_quotation_is_the_words_in_order_with_only_punctuation_between(
    text: str, holds: bool
) -> None:
    pattern = quotation("cannot read nil body")
    assert pattern is not None and bool(pattern.search(text)) is holds


def test_too_few_or_too_many_words_are_no_quotation() -> None:
    assert quotation("nil body") is None
    assert quotation(" ".join(f"w{k}" for k in range(MAX_WORDS + 1))) is None
    assert quotation(" ".join(f"w{k}" for k in range(MAX_WORDS))) is not None
    assert quotation("a.b(c)") is not None  # three words


def test_the_hits_holding_the_text_are_split_from_the_others_in_order() -> None:
    hits = [
        _hit("nil body read", 0),
        _hit("x := cannot_read_nil_body()", 1),
        _hit("cannot read nil body", 2),
        _hit("nothing", 3),
    ]
    held, rest = quoting(hits, "cannot read nil body") or ([], [])
    assert [h.position for h in held] == [1, 2] and [h.position for h in rest] == [0, 3]
    assert quoting(hits, "read body nil") is None
    assert quoting(hits, "nil body") is None


def test_a_quotation_answers_from_the_top_before_the_score_cut() -> None:
    hits = [
        _hit("the best score, other words: cannot read", 0, score=9.0),
        _hit('errors.New("cannot read nil body")', 1, score=1.0),
        _hit("read nil", 2, score=8.0),
    ]
    listed, more = _listed(hits, "cannot read nil body", 0.2, named("cannot read nil body"))
    assert [h.position for h in listed] == [1]
    assert (
        more == "2 more do not hold the query's text: offset=0 lists the ranking from there, uncut"
    )
    # without it, the score cut: the low-scoring hit is left out
    listed, more = _listed(hits, "read the body of nil", 0.2, named("read the body of nil"))
    assert [h.position for h in listed] == [0, 2] and more.startswith("1 more scored below 20%")


def test_a_name_alone_is_answered_by_its_definition_not_as_a_quotation() -> None:
    hits = [
        _hit("calls a_b_c()", 0, score=5.0),
        _hit("func a_b_c() {}", 1, score=1.0, lift=SYMBOL_BOOST),
    ]
    listed, more = _listed(hits, "a_b_c", 0.2, NamedQuery(("a_b_c",), only_name=True))
    assert [h.position for h in listed] == [1]
    assert more.startswith("1 more are not the named definition: offset=0")
