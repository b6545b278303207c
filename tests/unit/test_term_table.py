"""esqlog.statistics.term_table: terms as arrays, read and looked up as the strings they are."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from esqlog.statistics.term_keys import build_bloom, term_hash
from esqlog.statistics.term_table import LazyIndex, TermTable, concat, same_terms

terms_strategy = st.lists(st.text(min_size=1, max_size=12), unique=True, max_size=40)


@settings(max_examples=60, deadline=None)
@given(terms=terms_strategy, other=terms_strategy)
def test_a_table_reads_and_finds_its_terms(terms: list[str], other: list[str]) -> None:
    table, theirs = TermTable.of(terms), TermTable.of(other)
    assert len(table) == len(terms) and list(table) == terms and table == terms
    assert [table[k] for k in range(len(terms))] == terms
    assert table.keys.tolist() == [term_hash(t) for t in terms]
    assert bytes(table.joined()) == "\n".join(terms).encode("utf-8")
    want = [terms.index(t) if t in terms else -1 for t in other]
    assert table.index_of(theirs).tolist() == want
    rows = np.asarray([k for k in range(len(terms)) if k % 2 == 0][::-1], np.int64)
    picked = table.take(rows)
    assert list(picked) == [terms[k] for k in rows.tolist()]
    assert picked.keys.tolist() == [term_hash(terms[k]) for k in rows.tolist()]
    both = concat(table, theirs)
    assert list(both) == terms + other and both.crc is not None
    assert np.array_equal(build_bloom(table), build_bloom(list(terms)))


def test_a_hash_is_only_a_candidate() -> None:
    """A term whose hash is another's is told apart by its bytes; a table whose own
    hashes collide is looked up through its decoded terms, with the same answers."""
    table = TermTable.of(["read", "file", "ünïcode"])
    forged = TermTable.of(["reax", "file"])
    forged.keys[0] = table.keys[0]  # "reax" claims the hash of "read"
    assert table.index_of(forged).tolist() == [-1, 1]
    collided = TermTable(table.blob, table.offsets, np.zeros(3, np.uint64))
    asked = TermTable.of(["ünïcode", "nope", "read"])
    assert collided.index_of(asked).tolist() == [2, -1, 0]
    assert same_terms(table, np.asarray([0, 1, 2]), asked, np.asarray([2, 1, 0])).tolist() == [
        True,
        False,
        True,
    ]


def test_an_empty_table() -> None:
    empty = TermTable.of([])
    assert len(empty) == 0 and list(empty) == [] and bytes(empty.joined()) == b""
    assert empty.index_of(TermTable.of(["a"])).tolist() == [-1]
    assert TermTable.of(["a"]).index_of(empty).tolist() == []


def test_the_lazy_index_is_a_mapping_of_positions() -> None:
    index = LazyIndex(TermTable.of(["b", "a"]))
    assert len(index) == 2 and index.get("a") == 1 and index.get("z", -1) == -1
    assert "b" in index and "z" not in index and dict(index) == {"b": 0, "a": 1}
