"""An independent split-stream BM25 for the identifiers-mode oracle test.

Written without esqlog's identifiers code: per-document term frequencies and lengths come
from the engine's term vectors, shard membership from per-shard searches, and the split
stream's statistics are recomputed here from those and the term -> sub-words map (the map
is the one definition shared with esqlog: which casing of a term splits it). Scores follow
tests/support/lucene_bm25 (Lucene's one-byte length norm, the standard field's length).
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence

from esqlog.engine.client import Engine
from tests.support.engines import call
from tests.support.lucene_bm25 import lucene_idf, lucene_norm_length


def engine_vectors(
    engine: Engine, index: str, ids: Sequence[str], shards: int
) -> tuple[dict[str, dict[str, int]], dict[str, int]]:
    """A ``body`` field as the engine holds it: each document's term frequencies (its term
    vectors) and its shard (per-shard searches)."""
    vectors: dict[str, dict[str, int]] = {}
    for start in range(0, len(ids), 500):
        body = call(
            engine,
            "POST",
            f"/{index}/_mtermvectors",
            {
                "docs": [
                    {
                        "_id": i,
                        "fields": ["body"],
                        "positions": False,
                        "offsets": False,
                        "term_statistics": False,
                        "field_statistics": False,
                    }
                    for i in ids[start : start + 500]
                ]
            },
        )
        for doc in body["docs"]:
            terms = doc["term_vectors"]["body"]["terms"]
            vectors[doc["_id"]] = {t: int(v["term_freq"]) for t, v in terms.items()}
    shard_of: dict[str, int] = {}
    for shard in range(shards):
        hits = call(
            engine,
            "POST",
            f"/{index}/_search",
            {"size": len(ids), "_source": False},
            preference=f"_shards:{shard}",
        )["hits"]["hits"]
        shard_of.update({h["_id"]: shard for h in hits})
    return vectors, shard_of


def oracle_from_engine(
    engine: Engine,
    index: str,
    ids: Sequence[str],
    shards: int,
    parts_of: Callable[[str], Sequence[str]],
) -> SplitStreamBM25:
    """The oracle of a ``body`` field: term frequencies from the engine's term vectors,
    each document's shard from per-shard searches, splits from ``parts_of``."""
    vectors, shard_of = engine_vectors(engine, index, ids, shards)
    parts = {t: tuple(parts_of(t)) for tfs in vectors.values() for t in tfs}
    return SplitStreamBM25(vectors, shard_of, {t: p for t, p in parts.items() if p})


class SplitStreamBM25:
    """Split-and-keep BM25 over a frozen standard field, as the identifiers mode defines it.

    A document holds sub-word s when it holds s or a term whose split contains s; each
    occurrence of such a term counts once for s. ``groups`` of a word (the terms listed for
    it, partitioned by the set of shards whose documents hold them) each saturate on
    their own and the word scores the best of them (``shard_groups="max"``) or their sum
    (``"sum"``); with one group this is plain split-stream BM25.
    """

    def __init__(
        self,
        vectors: Mapping[str, Mapping[str, int]],
        shard_of: Mapping[str, int],
        parts: dict[str, tuple[str, ...]],
    ) -> None:
        self.vectors = vectors
        self.shard_of = shard_of
        self.parts = parts
        self.n_docs = len(vectors)
        self.dl = {d: sum(tf.values()) for d, tf in vectors.items()}
        self.avgdl = sum(self.dl.values()) / self.n_docs
        #: each shard's own average length: what a search without dfs normalises with
        self.shard_avgdl: dict[int, float] = {}
        for shard in set(shard_of.values()):
            lengths = [self.dl[d] for d in vectors if shard_of[d] == shard]
            self.shard_avgdl[shard] = sum(lengths) / len(lengths)
        self.df: dict[str, int] = {}
        self.split_df: dict[str, int] = {}
        self.shards_of: dict[str, set[int]] = {}
        for doc, tfs in vectors.items():
            stream: set[str] = set()
            for term in tfs:
                self.df[term] = self.df.get(term, 0) + 1
                self.shards_of.setdefault(term, set()).add(shard_of[doc])
                stream.add(term)
                stream.update(parts.get(term, ()))
            for word in stream:
                self.split_df[word] = self.split_df.get(word, 0) + 1

    @functools.cached_property
    def words_per_df(self) -> Counter[int]:
        universe = set(self.parts) | {w for p in self.parts.values() for w in p}
        return Counter(self.split_df[w] for w in universe)

    def family_excess(self, df: int) -> float:
        """The identifiers mode's mark of a generated family, counted here from scratch:
        words (terms that split, and sub-words) of split df exactly ``df``, against the
        mean count of the df values within 1.25x either side; 0 under 10 words, for df 1,
        and where a Poisson count around that mean reaches it more often than 1e-6."""
        per_df = self.words_per_df
        if df < 2 or per_df[df] < 10:
            return 0.0
        lo, hi = max(1, int(df / 1.25)), int(df * 1.25) + 1
        around = [per_df[d] for d in range(lo, hi + 1) if d != df]
        mean = max(sum(around) / len(around), 1.0)
        below, pmf = 0.0, math.exp(-mean)
        for k in range(per_df[df]):  # P(X < count), term by term
            below, pmf = below + pmf, pmf * mean / (k + 1)
        if 1.0 - below > 1e-6:  # a spike chance would give: no family
            return 0.0
        return per_df[df] / mean

    def weight(self, word: str, count: int, q: float) -> float:
        return lucene_idf(self.split_df[word], self.n_docs, q) * count

    def score(
        self,
        doc: str,
        words: Sequence[tuple[str, int, Sequence[str]]],
        q: float,
        grouped: bool,
        alone: Collection[str] = (),
        shard_groups: str = "max",
        exact: Collection[str] = (),
        local: bool = False,
    ) -> float:
        """Score of ``doc`` for (word, count in the query, listed terms) triples; a word in
        ``alone`` saturates its own term apart from its compounds (a common sub-word), and
        adds that to the best (or the sum) of its compounds' shard-set groups; a word in
        ``exact`` has one group (one saturation) even when ``grouped``. ``local``: the length
        norm of the document's own shard (each shard searched on its own, no dfs)."""
        tfs = self.vectors[doc]
        avgdl = self.shard_avgdl[self.shard_of[doc]] if local else self.avgdl
        norm = 1.2 * (1 - 0.75 + 0.75 * lucene_norm_length(self.dl[doc]) / avgdl)
        total = 0.0
        for word, count, listed in words:
            w = self.weight(word, count, q)
            groups: dict[frozenset[int], int] = {}
            for term in listed:
                key = (
                    frozenset(self.shards_of.get(term, ()))
                    if grouped and word not in exact
                    else frozenset()
                )
                if word in alone and term == word:
                    key = frozenset({-1})  # no shard set: a group of its own
                groups[key] = groups.get(key, 0) + tfs.get(term, 0)
            head = groups.pop(frozenset({-1}), 0)
            scores = [w * tf / (tf + norm) for tf in groups.values() if tf]
            total += (w * head / (head + norm) if head else 0.0) + (
                sum(scores) if shard_groups == "sum" else max(scores, default=0.0)
            )
        return total

    def exact_words(
        self,
        words: Sequence[tuple[str, int, Sequence[str]]],
        shards: int,
        share: float,
        clauses: int,
        alone: Collection[str] = (),
    ) -> set[str]:
        """The words ``shard_groups="auto"`` scores in one saturation on every shard: those
        whose listed terms held by every shard have summed df at most ``share`` of N, and
        whose spans per shard (per part: the own term apart, the compounds) hold at most
        ``clauses`` more terms than the listed ones (the shard-set groups)."""
        everywhere = set(range(shards))
        out = set()
        for word, _, listed in words:
            parts = (
                [[word], [t for t in listed if t != word]]
                if word in alone and word in listed
                else [list(listed)]
            )
            spans = {
                (k, frozenset(t for t in part if shard in self.shards_of.get(t, ())))
                for k, part in enumerate(parts)
                for shard in everywhere
            }
            extra = sum(len(terms) for _, terms in spans) - len(listed)
            shared = sum(
                self.df.get(t, 0) for t in listed if self.shards_of.get(t, set()) == everywhere
            )
            if shared <= share * self.n_docs and extra <= clauses:
                out.add(word)
        return out

    def matching(self, words: Sequence[tuple[str, int, Sequence[str]]]) -> set[str]:
        """Documents holding any listed term."""
        listed = {t for _, _, terms in words for t in terms}
        return {d for d, tfs in self.vectors.items() if listed & tfs.keys()}
