"""Hapax density h_tok of a field, exactly (every document) or from a uniform sample.

h_tok = (tokens whose term has document frequency 1) / (all tokens), over live documents,
with document frequency as Lucene counts it (deleted-but-unmerged documents included, the
same numbers BM25 scores with).

Both ways read term vectors of real documents with per-shard ``doc_freq``. A term can only
be a global hapax if its shard-level df is 1; those candidates are then checked against
the global df (one batched artificial-document request, see :mod:`esqlog.statistics.terms`), so
memory stays bounded by the batch size, not the vocabulary.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from esqlog.engine.client import Engine, scroll_plan
from esqlog.engine.shard_scan import locked, run_per_shard
from esqlog.engine.steps import Plan
from esqlog.engine.termvectors import stored_vectors_request
from esqlog.statistics.terms import term_stats_plan

DEFAULT_BATCH = 500
MAX_SAMPLE = 100_000
DEFAULT_SAMPLE = 20_000
SEARCH_WINDOW = 10_000
CANDIDATE_CHUNK = 2_000

Progress = Callable[[int], None]


@dataclass(frozen=True)
class HapaxEstimate:
    """h_tok with a 95% interval (zero width when exact)."""

    h_tok: float
    low: float
    high: float
    method: str  # "exact" or "sample"
    docs: int
    tokens: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "h_tok": self.h_tok,
            "low": self.low,
            "high": self.high,
            "method": self.method,
            "docs": self.docs,
            "tokens": self.tokens,
        }


def _doc_terms(doc: Mapping[str, Any], field_name: str) -> dict[str, tuple[int, int]]:
    """term -> (term_freq, shard doc_freq) of one term-vectors response document."""
    vectors = (doc.get("term_vectors") or {}).get(field_name) or {}
    return {
        t: (int(v.get("term_freq", 0)), int(v.get("doc_freq") or 0))
        for t, v in (vectors.get("terms") or {}).items()
    }


def _doc_vectors_plan(
    index: str, field_name: str, ids: Sequence[str]
) -> Plan[list[dict[str, tuple[int, int]]]]:
    body = yield stored_vectors_request(
        [{"_id": i} for i in ids], [field_name], index=index, term_statistics=True
    )
    return [_doc_terms(d, field_name) for d in body.get("docs", []) if d.get("found", True)]


def _per_doc_hapax_plan(
    index: str, field_name: str, ids: Sequence[str], routings: Sequence[str]
) -> Plan[tuple[list[int], list[int]]]:
    """For each document: (tokens of globally-hapax terms, all tokens)."""
    docs = yield from _doc_vectors_plan(index, field_name, ids)
    candidates = sorted({t for d in docs for t, (_, df) in d.items() if df == 1})
    if len(routings) > 1 and candidates:
        global_df: dict[str, int] = {}
        for start in range(0, len(candidates), CANDIDATE_CHUNK):
            _, chunk_df = yield from term_stats_plan(
                index, field_name, candidates[start : start + CANDIDATE_CHUNK], routings
            )
            global_df.update(chunk_df)
        hapax = {t for t in candidates if global_df.get(t, 0) == 1}
    else:
        hapax = set(candidates)
    hapax_tokens = [sum(tf for t, (tf, _) in d.items() if t in hapax) for d in docs]
    lengths = [sum(tf for tf, _ in d.values()) for d in docs]
    return hapax_tokens, lengths


def exact_hapax_shard_plan(
    index: str,
    field_name: str,
    routings: Sequence[str],
    shard: int,
    batch: int = DEFAULT_BATCH,
    progress: Progress | None = None,
) -> Plan[tuple[int, int, int]]:
    """(hapax tokens, tokens, documents) of one shard: a scroll pinned to it, its documents'
    term vectors in batches, their shard-hapax candidates checked against the global df."""
    totals = [0, 0, 0]

    def page(hits: list[dict[str, Any]]) -> Plan[bool]:
        ids = [h["_id"] for h in hits]
        hapax, lengths = yield from _per_doc_hapax_plan(index, field_name, ids, routings)
        totals[0] += sum(hapax)
        totals[1] += sum(lengths)
        totals[2] += len(ids)
        if progress is not None:
            progress(len(ids))
        return True

    yield from scroll_plan(
        index,
        {
            "size": batch,
            "_source": False,
            "sort": ["_doc"],
            "query": {"exists": {"field": field_name}},
        },
        page,
        params={"preference": f"_shards:{shard}"},
    )
    return totals[0], totals[1], totals[2]


def exact_hapax_plan(
    index: str,
    field_name: str,
    routings: Sequence[str],
    batch: int = DEFAULT_BATCH,
    progress: Progress | None = None,
) -> Plan[HapaxEstimate]:
    """Every document's term vectors, shard after shard (scroll + _mtermvectors batches).
    The concurrent version is :func:`exact_hapax`."""
    parts = []
    for shard in range(len(routings)):
        parts.append(
            (yield from exact_hapax_shard_plan(index, field_name, routings, shard, batch, progress))
        )
    return _exact(parts)


def exact_hapax(
    engine: Engine,
    index: str,
    field_name: str,
    routings: Sequence[str],
    parallel: int,
    progress: Progress | None = None,
) -> HapaxEstimate:
    """:func:`exact_hapax_plan` reading up to ``parallel`` shards at once
    (esqlog.engine.shard_scan):
    the counts are integer sums, so the result equals the sequential one exactly."""
    parts: list[tuple[int, int, int]] = []
    report = locked(progress)
    run_per_shard(
        engine,
        lambda shard: exact_hapax_shard_plan(index, field_name, routings, shard, progress=report),
        len(routings),
        parallel,
        lambda _, part: parts.append(part),
    )
    return _exact(parts)


def _exact(parts: Sequence[tuple[int, int, int]]) -> HapaxEstimate:
    hapax_total = sum(p[0] for p in parts)
    token_total = sum(p[1] for p in parts)
    h = hapax_total / token_total if token_total else 0.0
    return HapaxEstimate(h, h, h, "exact", sum(p[2] for p in parts), token_total)


def sample_ids_plan(index: str, field_name: str, size: int, seed: int) -> Plan[list[str]]:
    """A uniform random sample of live document ids (random_score over _seq_no, seeded).

    Every document gets a seeded pseudo-random score; the ``size`` highest form a uniform
    sample without replacement. Scrolling in score order lifts the 10,000-hit window.
    """
    ids: list[str] = []

    def page(hits: list[dict[str, Any]]) -> Plan[bool]:
        yield from ()  # a plan that needs no request of its own
        ids.extend(h["_id"] for h in hits)
        return len(ids) < size

    yield from scroll_plan(
        index,
        {
            "size": min(size, SEARCH_WINDOW),
            "_source": False,
            "query": {
                "function_score": {
                    "query": {"exists": {"field": field_name}},
                    "random_score": {"seed": seed, "field": "_seq_no"},
                    "boost_mode": "replace",
                }
            },
        },
        page,
        keep_alive="2m",
    )
    return ids[:size]


def sampled_hapax_plan(
    index: str,
    field_name: str,
    routings: Sequence[str],
    sample: int,
    population: int,
    seed: int = 42,
    batch: int = DEFAULT_BATCH,
    progress: Progress | None = None,
) -> Plan[HapaxEstimate]:
    """h_tok from a uniform sample of documents, with a 95% ratio-estimator interval."""
    if not 1 <= sample <= MAX_SAMPLE:
        raise ValueError(f"sample size must be between 1 and {MAX_SAMPLE}")
    ids = yield from sample_ids_plan(index, field_name, sample, seed)
    hapax: list[int] = []
    lengths: list[int] = []
    for start in range(0, len(ids), batch):
        chunk = ids[start : start + batch]
        h, n = yield from _per_doc_hapax_plan(index, field_name, chunk, routings)
        hapax.extend(h)
        lengths.extend(n)
        if progress is not None:
            progress(len(chunk))
    return ratio_estimate(hapax, lengths, population)


def ratio_estimate(hapax: Sequence[int], lengths: Sequence[int], population: int) -> HapaxEstimate:
    """Ratio estimator sum(y)/sum(x) with its delta-method 95% interval.

    Documents are the sampling units (tokens within a document are not independent), and
    the finite-population correction shrinks the interval to 0 when every document is seen.
    """
    y = np.asarray(hapax, dtype=np.float64)
    x = np.asarray(lengths, dtype=np.float64)
    n = len(x)
    if n == 0 or x.sum() <= 0:
        return HapaxEstimate(0.0, 0.0, 0.0, "sample", n, 0)
    r = float(y.sum() / x.sum())
    if n < 2:
        return HapaxEstimate(r, 0.0, 1.0, "sample", n, int(x.sum()))
    residual = y - r * x
    fpc = max(0.0, 1.0 - n / population) if population > 0 else 1.0
    se = math.sqrt(fpc * residual.var(ddof=1) / n) / x.mean()
    return HapaxEstimate(
        r, max(0.0, r - 1.96 * se), min(1.0, r + 1.96 * se), "sample", n, int(x.sum())
    )
