"""esqlog.identifiers.learned: learned splits as arrays, read as the mapping they replace."""

from __future__ import annotations

from esqlog.identifiers.learned import LearnedSplits


def test_learned_splits_read_as_a_dict_of_tuples() -> None:
    splits = LearnedSplits()
    splits.add(5, ("read", "file"))
    splits.add(2, ("web", "socket"))
    splits.setdefault(5, ("other", "split"))  # the first one stays
    splits.add(9, ("read", "deadline"))
    want = {5: ("read", "file"), 2: ("web", "socket"), 9: ("read", "deadline")}
    assert dict(splits) == want and splits == want and list(splits) == [5, 2, 9]
    assert 5 in splits and 3 not in splits and 100 not in splits and "5" not in splits
    assert splits.get(3) is None and splits[9] == ("read", "deadline")
    assert splits.subwords == ["read", "file", "web", "socket", "deadline"]  # each once
    splits.add(3, ("a", "b"))  # an add after a read: the index is rebuilt
    assert splits[3] == ("a", "b") and len(splits) == 4
