"""The bounded memory TermIds and WordFacts keep (esqlog.statistics.recent): it holds at
most its limit, starts afresh when full with what it held as the previous generation, and
answers a key with what was stored under it."""

from __future__ import annotations

from esqlog.statistics.recent import MISSING, RecentMemory


def test_a_memory_holds_its_limit_then_starts_afresh() -> None:
    memory: RecentMemory[str, int | None] = RecentMemory(3)
    for n, key in enumerate("abc"):
        memory.remember(key, n)
    assert memory == {"a": 0, "b": 1, "c": 2}  # full, not yet emptied
    memory.remember("d", None)
    assert memory == {"d": None}  # emptied, then stored: None is an answer
    assert memory.get("d", MISSING) is None and memory.get("a", MISSING) is MISSING


def test_a_store_into_a_full_memory_empties_it_first_even_for_a_known_key() -> None:
    memory: RecentMemory[str, int] = RecentMemory(2)
    memory.remember("a", 1)
    memory.remember("b", 2)
    memory.remember("a", 3)  # as TermIds and WordFacts always did
    assert memory == {"a": 3} and memory.limit == 2


def test_many_stored_at_once_fit_the_limit_or_start_afresh() -> None:
    """remember_all (a plan's compounds, ~250 a search): stored beside what is held while
    they fit, else after emptying; of more than the limit, the last ones."""
    memory: RecentMemory[str, int] = RecentMemory(4)
    memory.remember("a", 0)
    memory.remember_all(["b", "c"], [1, 2])
    assert memory == {"a": 0, "b": 1, "c": 2}
    memory.remember_all(["d", "e"], [3, 4])  # 5 would not fit
    assert memory == {"d": 3, "e": 4}
    memory.remember_all(list("vwxyz"), [5, 6, 7, 8, 9])
    assert memory == {"w": 6, "x": 7, "y": 8, "z": 9}


def test_a_full_memory_keeps_what_it_held_as_the_previous_generation() -> None:
    memory: RecentMemory[str, int | None] = RecentMemory(3)
    for n, key in enumerate("abc"):
        memory.remember(key, n)
    memory.remember("d", 3)
    assert memory.previous == {"a": 0, "b": 1, "c": 2}
    assert memory.get("b", MISSING) is MISSING  # readers' one dictionary read misses...
    assert memory.recall("b") == 1  # ...and the miss takes it back
    assert memory == {"d": 3, "b": 1}  # remembered again: it survives the next turn
    assert memory.recall("z") is MISSING and "z" not in memory


def test_a_recalled_answer_may_be_none() -> None:
    memory: RecentMemory[str, int | None] = RecentMemory(1)
    memory.remember("absent", None)  # TermIds remembers a term the index lacks as None
    memory.remember("x", 1)
    assert memory.recall("absent") is None and memory.get("absent", MISSING) is None


def test_two_generations_hold_at_most_twice_the_limit() -> None:
    memory: RecentMemory[int, int] = RecentMemory(4)
    for key in range(100):
        memory.remember(key, key)
        assert len(memory) <= 4 and len(memory.previous) <= 4
    assert set(memory.previous) == {92, 93, 94, 95} and set(memory) == {96, 97, 98, 99}
    memory.remember_all([100, 101, 102], [0, 1, 2])  # would not fit: a turn
    assert set(memory.previous) == {96, 97, 98, 99} and set(memory) == {100, 101, 102}
