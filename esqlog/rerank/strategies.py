"""The four ways a rerank runs, one strategy each, and the one function that chooses.

=================  =====================================================================
``EngineRescore``  one round trip: the engine's rescore phase replaces each shard's native
                   top-N scores by q-log BM25; only the page is fetched (``rerank_in=engine``)
``NamedScores``    one round trip: the native query with every term clause named returns
                   the global top-N and each term's own score per hit (ES >= 8.8, OS >= 2.13)
``TermScores``     the native top-N, then one search of named term clauses over those ids
                   (identifier joins have no clause in the native query)
``TermVectors``    the native top-N, then the hits' term vectors (older engines)
=================  =====================================================================

Every strategy has the same ``plan(job)``; :func:`choose_plan` picks one (it may need the
engine's version, asked once per wrapper).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from esqlog.engine.client import Flavor, bm25_scale
from esqlog.engine.steps import Plan, SearchPlan
from esqlog.rerank.requests import hit_vectors_plan, supports_named_scores, term_scores_plan
from esqlog.rerank.responses import body_of, rerank_response, response_like, without_names
from esqlog.rerank.scoring import (
    ScoredText,
    named_score_corrections,
    reorder_hits,
    score_corrections,
    term_names,
)

if TYPE_CHECKING:
    from esqlog.engine.search_call import SearchCall

TermNames = Mapping[tuple[str, str], str]


@dataclass(frozen=True)
class RerankJob:
    """Everything a strategy needs: the call, the page asked for, the scored texts, and the
    two rewrites of the caller's query it may send (built only when used)."""

    call: SearchCall
    index: str
    texts: Sequence[ScoredText]
    start: int
    size: int
    top_n: int
    flavor: Flavor
    version: tuple[int, ...] | None
    qlog_query: Callable[[], dict[str, Any]]  # the boost rewrite (q-log weights)
    named_query: Callable[[TermNames], dict[str, Any]]  # native weights, term clauses named

    def fetch_top_n(self) -> None:
        """Client-side strategies fetch the global top-N from the first hit."""
        self.call.set("from", 0)
        self.call.set("size", max(self.top_n, self.start + self.size))

    def reranked(self, native: Any, hits: list[dict[str, Any]], corrections: Any) -> Any:
        page = rerank_response(
            body_of(native), reorder_hits(hits, corrections), self.start, self.size
        )
        return response_like(native, page)


class RerankStrategy(Protocol):
    def plan(self, job: RerankJob) -> SearchPlan: ...


class EngineRescore:
    """Rerank inside the engine: the untouched query picks each shard's native top-N, then
    a query rescorer replaces their scores by q-log BM25 (the boost rewrite, query_weight 0).

    One round trip, and only the page asked for is fetched: a client-side rerank must fetch
    all N hits, which costs the engine more than the search itself. A rescore the caller
    already asked for runs after esqlog's, on the q-log scores.
    """

    def plan(self, job: RerankJob) -> SearchPlan:
        ours = {
            "window_size": max(job.top_n, job.start + job.size),
            "query": {
                "rescore_query": job.qlog_query(),
                "query_weight": 0.0,
                "rescore_query_weight": 1.0,
                "score_mode": "total",
            },
        }
        theirs = job.call.get("rescore")
        chain = [ours, *(theirs if isinstance(theirs, list) else [theirs] if theirs else [])]
        job.call.set("rescore", chain if len(chain) > 1 else ours)
        return (yield job.call.search())


class NamedScores:
    """Rerank in one round trip: the native-scored query with every term clause named.

    The engine returns the native top-N and, per hit, each term's own BM25 score
    (include_named_queries_score); the q-log score is then a weighted sum computed here.
    esqlog's names are taken out of the hits again, so the response is what the client
    would have returned for its own query.
    """

    def plan(self, job: RerankJob) -> SearchPlan:
        job.fetch_top_n()
        asked = job.call.get("include_named_queries_score")
        job.call.set("query", job.named_query(term_names(job.texts)))
        job.call.set("include_named_queries_score", True)
        native = yield job.call.search()
        hits = list(body_of(native).get("hits", {}).get("hits", []))
        scores = {(h["_index"], h["_id"]): dict(h.get("matched_queries") or {}) for h in hits}
        corrections = named_score_corrections(hits, scores, job.texts)
        keep = asked is True or asked == "true"
        return job.reranked(native, [without_names(h, keep) for h in hits], corrections)


class TermScores:
    """The native top-N, then each hit's score of every query and join term in one search."""

    def plan(self, job: RerankJob) -> SearchPlan:
        job.fetch_top_n()
        native = yield job.call.search()
        hits = list(body_of(native).get("hits", {}).get("hits", []))
        scores = yield from term_scores_plan(
            job.index, hits, job.texts, job.call.get("search_type")
        )
        return job.reranked(native, hits, named_score_corrections(hits, scores, job.texts))


class TermVectors:
    """The native top-N, then the hits' term vectors, generated on the fly (exact lengths)."""

    def plan(self, job: RerankJob) -> SearchPlan:
        job.fetch_top_n()
        native = yield job.call.search()
        hits = list(body_of(native).get("hits", {}).get("hits", []))
        vectors = yield from hit_vectors_plan(hits, sorted({t.field for t in job.texts}))
        scale = bm25_scale(job.flavor, job.version or (0,))
        return job.reranked(native, hits, score_corrections(hits, vectors, job.texts, scale))


ENGINE_RESCORE, NAMED_SCORES, TERM_SCORES, TERM_VECTORS = (
    EngineRescore(),
    NamedScores(),
    TermScores(),
    TermVectors(),
)


def choose_plan(
    where: str,
    call: SearchCall,
    texts: Sequence[ScoredText],
    flavor: Flavor,
    version_plan: Callable[[], Plan[tuple[int, ...]]],
) -> Plan[tuple[RerankStrategy, tuple[int, ...] | None]]:
    """The strategy for this search, and the engine version when it had to be asked.

    collapse and rescore do not mix in the engines, so a collapsed search reranks on the
    client whatever ``where`` says.
    """
    if where == "engine" and call.get("collapse") is None:
        return ENGINE_RESCORE, None
    version = yield from version_plan()
    if not supports_named_scores(flavor, version):
        return TERM_VECTORS, version
    if any(t.joins for t in texts):
        return TERM_SCORES, version
    return NAMED_SCORES, version
