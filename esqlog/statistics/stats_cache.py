"""Term statistics kept between searches: global df per term and field statistics, a while.

Why a module of its own: esqlog.statistics.terms asks the cluster; this decides when it need
not. A search's text is new every time but its terms repeat, so the wrapper (esqlog.wrapper)
answers them from here and asks only for the terms it misses; what is kept, for how long
and how much of it, is a policy of its own, tested without a cluster.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping

from esqlog.statistics.terms import FieldStats


class StatsCache:
    """Bounded, thread-safe cache of global df per term and field statistics, with a TTL.

    Query texts are new every time, but their terms repeat: with the client-side standard
    analysis, a search whose terms are all cached needs no statistics request at all. The
    TTL bounds how stale a df may be (documents added or deleted since); ``max_terms``
    bounds memory (about 150 bytes an entry).
    """

    def __init__(self, ttl: float = 60.0, max_terms: int = 50_000) -> None:
        self.ttl = ttl
        self.max_terms = max_terms
        self._df: OrderedDict[tuple[str, str, str], tuple[float, int]] = OrderedDict()
        self._fields: dict[tuple[str, str], tuple[float, FieldStats]] = {}
        self._lock = threading.Lock()

    def lookup(
        self, index: str, field_name: str, terms: Iterable[str], now: float
    ) -> tuple[FieldStats | None, dict[str, int], list[str]]:
        """(field stats if fresh, cached df, missing terms)."""
        found: dict[str, int] = {}
        missing: list[str] = []
        with self._lock:
            entry = self._fields.get((index, field_name))
            fstats = entry[1] if entry and now - entry[0] < self.ttl else None
            for term in dict.fromkeys(terms):
                hit = self._df.get((index, field_name, term))
                if hit is not None and now - hit[0] < self.ttl:
                    found[term] = hit[1]
                else:
                    missing.append(term)
        return fstats, found, missing

    def store(
        self, index: str, field_name: str, fstats: FieldStats, df: Mapping[str, int], now: float
    ) -> None:
        with self._lock:
            self._fields[(index, field_name)] = (now, fstats)
            for term, value in df.items():
                key = (index, field_name, term)
                self._df[key] = (now, int(value))
                self._df.move_to_end(key)
            while len(self._df) > self.max_terms:
                self._df.popitem(last=False)

    def __len__(self) -> int:
        return len(self._df)
