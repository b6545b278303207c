"""What a plan remembers of query tokens and words across searches
(esqlog.identifiers.word_facts) must never change a plan: over many generated code-like
documents and queries, each plan built with the statistics' memory (warm, cold, cleared
when full) is the plan built afresh, and the query dicts the same; the memory stays within
its bound; statistics rebuilt or copied for saving never answer from another's memory."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import esqlog.identifiers.word_facts as word_facts
from esqlog.identifiers.files import load_identifier_stats, save_identifier_stats
from esqlog.identifiers.query import plan_identifier_query
from esqlog.identifiers.settings import IdentifierSettings
from esqlog.identifiers.split_stats import IdentifierStats
from esqlog.identifiers.word_facts import WordFacts
from esqlog.indexing.refresh import _for_saving
from esqlog.scoring.subwords import split_identifier
from esqlog.statistics.analysis import standard_terms
from tests.support.split_docs import build

WORDS = [
    "read", "write", "file", "socket", "web", "upgrade", "handle", "error", "name", "path",
    "get", "set", "new", "close", "open", "buffer", "stream", "parse", "json", "http",
    "deadline", "server", "client", "request", "response", "config", "load", "save",
]  # fmt: skip


def _docs(seed: int, n: int = 240) -> list[tuple[int, str]]:
    """Documents of camelCase, snake_case and plain words: common words in many of them."""
    rng = random.Random(seed)
    docs = []
    for k in range(n):
        parts = []
        for _ in range(rng.randint(3, 9)):
            picked = rng.sample(WORDS[: rng.choice([6, 12, len(WORDS)])], rng.randint(1, 3))
            style = rng.random()
            if style < 0.5:
                parts.append(picked[0] + "".join(w.title() for w in picked[1:]))
            elif style < 0.7:
                parts.append("_".join(picked))
            else:
                parts.extend(picked)
        docs.append((k % 3, " ".join(parts)))
    return docs


def _queries(seed: int, n: int = 150) -> list[str]:
    """Query texts sharing words: cased identifiers, the same typed without casing (the
    learned split), plain words and words no document holds."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        words = rng.sample(WORDS, rng.randint(1, 5))
        tokens = []
        for w in words:
            style = rng.random()
            if style < 0.3:
                tokens.append(w + rng.choice(WORDS).title())
            elif style < 0.45:
                tokens.append(w + rng.choice(WORDS))  # no casing: calibrate's split
            elif style < 0.5:
                tokens.append("zz" + w)
            else:
                tokens.append(w)
        out.append(" ".join(tokens))
    return out


SETTINGS = [
    IdentifierSettings(engine_query="plugin"),
    IdentifierSettings(engine_query="span"),
    IdentifierSettings(engine_query="span", cap=3, common="own", budget=20),
    IdentifierSettings(engine_query="plugin", select="mass", rare_first=False, budget=40),
]


def _df(docs: list[tuple[int, str]]) -> dict[str, int]:
    return dict(Counter(t for _, text in docs for t in set(standard_terms(text) or [])))


def _fresh(stats: IdentifierStats) -> IdentifierStats:
    """The same statistics without a memory: every token and word looked up afresh."""
    copy = replace(stats)
    object.__setattr__(copy, "facts", None)
    return copy


@pytest.mark.parametrize("shards", [1, 3])
def test_plans_with_the_remembered_words_are_the_plans_built_afresh(
    shards: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(word_facts, "RECENT", 40)  # cleared again and again on the way
    docs = _docs(shards)
    stats, df = build(shards, docs), _df(docs)
    fresh = _fresh(stats)
    lookup = lambda terms: {t: df.get(t, 0) for t in terms}  # noqa: E731
    texts = _queries(shards)
    for settings in SETTINGS:
        for text in texts + texts[::-1]:  # each word seen first, then remembered
            got = plan_identifier_query(text, stats, lookup, settings)
            want = plan_identifier_query(text, fresh, lookup, settings)
            assert got == want, text
            assert got.query("body", settings) == want.query("body", settings)
    assert stats.facts is not None and 0 < len(stats.facts) <= 2 * 40
    assert len(stats.facts._tokens) <= 40 and len(stats.facts._words) <= 40


def test_a_file_read_in_place_remembers_what_it_decoded(tmp_path: Path) -> None:
    """The memory-mapped words (their splits decoded from the file) answer alike."""
    docs = _docs(7)
    path, _ = save_identifier_stats(build(3, docs), tmp_path / "x.npz", "abc")
    stats, df = load_identifier_stats(path, "abc"), _df(docs)
    fresh = _fresh(stats)
    lookup = lambda terms: {t: df.get(t, 0) for t in terms}  # noqa: E731
    for text in _queries(7) * 2:
        assert plan_identifier_query(text, stats, lookup) == plan_identifier_query(
            text, fresh, lookup
        )


def test_a_token_and_a_word_are_answered_as_the_statistics_answer() -> None:
    stats = build(1, _docs(3))
    facts = WordFacts(stats)
    for token in ("readFile", "readfile", "read", "zzread", "HTTPServer", "web_socket"):
        low = token.lower()
        assert facts.token(token) == (low, split_identifier(token) or stats.parts_of(low))
        assert facts.token(token) is facts.token(token)  # remembered
        ids, split_df = facts.word(low)
        assert ids.tolist() == stats.compound_ids(low).tolist()
        assert split_df == (stats.split_df(low) or 0)
    assert facts.word("file")[1] > 0 and facts.word("zzread") == (facts.word("zzread")[0], 0)


def test_statistics_rebuilt_or_copied_for_saving_never_share_a_memory() -> None:
    docs = _docs(5)
    stats = build(1, docs)
    plan_identifier_query("readFile socket", stats, lambda terms: {t: 1 for t in terms})
    assert stats.facts is not None and len(stats.facts)
    rebuilt = replace(stats)
    assert rebuilt.facts is not None and rebuilt.facts is not stats.facts
    assert len(rebuilt.facts) == 0
    assert _for_saving(stats).facts is None


class _Counting:
    """The statistics' lookups, counted: what WordFacts asks them."""

    def __init__(self, stats: IdentifierStats) -> None:
        self.stats, self.asked = stats, Counter[str]()

    def parts_of(self, term: str) -> tuple[str, ...]:
        self.asked["parts_of"] += 1
        return self.stats.parts_of(term)

    def compound_ids(self, subword: str) -> Any:
        self.asked["compound_ids"] += 1
        return self.stats.compound_ids(subword)

    def split_df(self, word: str) -> int | None:
        self.asked["split_df"] += 1
        return self.stats.split_df(word)


def test_a_memory_that_turned_answers_recent_words_without_asking_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """When the memory fills, the words it held stay answerable (the previous generation):
    a steady stream of searches does not look its common words up again after each turn."""
    monkeypatch.setattr(word_facts, "RECENT", 4)
    counting = _Counting(build(1, _docs(3)))
    facts = WordFacts(counting)
    for word in ("read", "file", "web", "socket"):
        facts.token(word)
        facts.word(word)
    facts.token("readfile")
    facts.word("http")  # both memories full: they turn
    before = counting.asked.copy()
    for word in ("read", "file", "web", "socket"):
        want = split_identifier(word) or counting.stats.parts_of(word)
        assert facts.token(word) == (word, want)
        assert facts.word(word)[0].tolist() == counting.stats.compound_ids(word).tolist()
    assert counting.asked == before  # all four taken back from the previous generation
