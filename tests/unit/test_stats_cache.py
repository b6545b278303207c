"""The statistics kept between searches (esqlog.statistics.stats_cache): fresh for a TTL,
bounded in terms, oldest out first."""

from __future__ import annotations

from esqlog.statistics.stats_cache import StatsCache
from esqlog.statistics.terms import FieldStats


def test_terms_are_kept_for_the_ttl_and_the_oldest_leave_past_the_bound() -> None:
    cache = StatsCache(ttl=10.0, max_terms=2)
    fields = FieldStats(doc_count=5, sum_ttf=50, sum_doc_freq=20)
    cache.store("i", "f", fields, {"a": 1, "b": 2}, now=0.0)
    cache.store("i", "f", fields, {"c": 3}, now=1.0)
    assert len(cache) == 2
    got, df, missing = cache.lookup("i", "f", ["a", "b", "c", "c"], now=5.0)
    assert got == fields and df == {"b": 2, "c": 3} and missing == ["a"]
    stale, df, missing = cache.lookup("i", "f", ["c"], now=11.0)  # c's 10 s are over
    assert stale is None and df == {} and missing == ["c"]
    assert cache.lookup("i", "other", ["c"], now=5.0)[1:] == ({}, ["c"])
