"""The compound candidates of a query (``read file`` -> ``readfile``, ``read_file``): adjacent
terms only, never a query term itself, kept only where the index has them.
tests/engine/test_joins.py runs the joins on real engines.
"""

from __future__ import annotations

from esqlog.scoring.joins import confirmed_joins, join_candidates, proposed_candidates


def test_candidates_are_adjacent_compounds() -> None:
    assert join_candidates(["read", "file"]) == ["readfile", "read_file"]
    three = join_candidates(["web", "socket", "upgrade"])
    assert {
        "websocket",
        "web_socket",
        "socketupgrade",
        "websocketupgrade",
        "web_socket_upgrade",
    } <= set(three)
    assert "read" not in join_candidates(["read", "read"])  # never a query term itself
    assert proposed_candidates("Read the FILE") == join_candidates(["read", "the", "file"])
    assert confirmed_joins(["read", "file"], {"read_file": 3, "readfile": 0}) == (("read_file", 3),)
