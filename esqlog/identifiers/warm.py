"""Warming the nodes' whole-word groups before traffic: ``esqlog plugin warm``.

Why: under select "all" (the default where every data node runs esqlog-terms 1.11.1 or
later) a node reads a query word's whole group once per segment (~0.5 ms a segment) and
keeps it (WordPostings, 5% of the heap by default). A node that has not seen a word pays
that read in the search, so a node's first few hundred searches after a start cost more
than those of the budget's plan ("cover"; docs/benchmarks/identifiers.md). Only the words
with a list of compounds have a group (26,005 of Go 153K's 338,342 words), and past the
first thousands those groups are small: all 26,005 take 54 MB on one shard, the first
5,000 of them 47 MB. So every such word is read, the most documents first (the words
queries name most, and the costliest reads), by searches that return nothing (``size:
0``), sent to every node holding a copy of a shard (``preference=_shards:..|_only_nodes:..``):
a node's cache serves only the copies it holds. Where the cache has room for them all, a
search after the warm reads no group.

Bounded twice: at most ``most`` words (all by default), and on each node until its
whole-word cache has filled ``share`` of the room it had left (``GET /_esqlog/terms/stats``,
read after each search); a cache left full would refuse the traffic's own words their first
sight (its doorkeeper), and a heap too small for every group keeps the most frequent.

Read only: searches, never a write; the bodies are the wrapper's own (node_plan), so the
groups read are those a search of the same words reads.
"""

from __future__ import annotations

import re
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from esqlog.calibration.plugin import whole_words_for
from esqlog.calibration.record import Calibration
from esqlog.engine.client import Engine
from esqlog.engine.failures import error_status
from esqlog.engine.paths import index_path
from esqlog.engine.plugin_stats import cache_stats_plan
from esqlog.engine.steps import Plan, Request
from esqlog.errors import ClusterError
from esqlog.identifiers.node_plan import node_clause
from esqlog.identifiers.query import weigh_words
from esqlog.identifiers.settings import IdentifierSettings
from esqlog.identifiers.split_stats import IdentifierStats
from esqlog.progress import ProgressFactory
from esqlog.statistics.vocabulary import Vocabulary

#: words per search: two clauses each, far inside both engines' clause limits
BATCH = 64
#: the words a query's split stream can hold that the standard analyzer cuts as ASCII
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class Warmed:
    """What a warm did: the words read on each node (by node id), the searches sent, the
    bytes the nodes' whole-word caches grew by, and the seconds it took."""

    words: Mapping[str, int]
    searches: int
    grown_bytes: int
    seconds: float


def candidates(stats: IdentifierStats) -> list[tuple[str, int]]:
    """(word, documents) of every word whose group a select-all search reads (its list of
    compounds is not empty), the most documents first: the words queries name most
    (91% of the query words with the first 3,000 on Go 153K), and the costliest reads."""
    sizes = np.diff(stats.comp_ptr)
    ids = np.flatnonzero(sizes[: len(stats.words)] > 0)
    docs = stats.df_split[ids].astype(np.int64)
    order = ids[np.argsort(-docs, kind="stable")]
    out = []
    for i in order.tolist():
        word = str(stats.words[i])
        if _WORD.fullmatch(word):
            out.append((word, int(stats.df_split[i])))
    return out


def holders_of(body: Any) -> dict[str, list[int]]:
    """node id -> the shards it holds a started copy of, from a ``_search_shards`` answer."""
    out: dict[str, set[int]] = {}
    for copies in body.get("shards", []) if isinstance(body, Mapping) else []:
        for copy in copies if isinstance(copies, list) else []:
            if isinstance(copy, Mapping) and copy.get("state") == "STARTED":
                out.setdefault(str(copy.get("node")), set()).add(int(copy.get("shard", 0)))
    return {node: sorted(shards) for node, shards in out.items()}


def warm_plan(
    index: str,
    field: str,
    lists: str,
    stats: IdentifierStats,
    vocab: Vocabulary,
    settings: IdentifierSettings,
    share: float = 0.5,
    most: int | None = None,
    progress: ProgressFactory = None,
    nodes: Collection[str] | None = None,
) -> Plan[Warmed]:
    """Read the groups of ``index``'s words, the most frequent first, on every node
    holding a copy of its shards (the module docstring), or on those of ``nodes`` that do,
    with the wrapper's bodies for those words; ``progress``: a bar per node."""
    started = time.monotonic()
    sizes = yield from _cache_sizes()
    holders = holders_of((yield Request("GET", index_path(index, "_search_shards"))))
    if nodes is not None:
        holders = {node: shards for node, shards in holders.items() if node in nodes}
    # the wrapper's bodies for these words, as one text's: every word whole, whatever a
    # family or a rare-word rule would make of a text of them all (a word's group, the
    # cache's key, is the same in any query)
    every = replace(settings, select="all", family_excess=None, rare_word_df=None)
    budget = every.budget_for(stats.shards, True)
    words = [w for w, _ in candidates(stats)[:most]]
    read: dict[str, int] = {}
    searches = added = 0
    for node, shards in holders.items():
        size, limit = sizes.get(node, (0, 0))
        target = size + int(max(limit - size, 0) * share)
        preference = f"_shards:{','.join(map(str, shards))}|_only_nodes:{node}"
        read[node] = 0
        bar = progress(f"warm {index} on node {node}", len(words)) if progress else None
        while read[node] < len(words) and size < target:
            batch = words[read[node] : read[node] + BATCH]
            weighed = weigh_words(" ".join(batch), stats, vocab.df_of, every)
            body = {"query": node_clause(weighed, field, lists, budget), "size": 0}
            params = {"preference": preference, "request_cache": "false"}
            yield Request("POST", index_path(index, "_search"), params, body)
            searches += 1
            read[node] += len(batch)
            size = (yield from _cache_sizes()).get(node, (size, limit))[0]
            if bar is not None:
                bar(len(batch))
        if bar is not None and read[node] < len(words):  # stopped at its share
            bar(0, total=read[node])
        # a node's searches go to it alone: the size read after its last one is its final
        added += size - sizes.get(node, (0, 0))[0]
    return Warmed(read, searches, max(added, 0), time.monotonic() - started)


def _cache_sizes() -> Plan[dict[str, tuple[int, int]]]:
    """node id -> (bytes, limit) of its whole-word cache; one clear error where no node
    keeps whole words."""
    caches = yield from cache_stats_plan()
    if not any("word_postings" in n.sections for n in caches.nodes):
        raise ClusterError(
            "no node keeps whole words (esqlog-terms before 1.11.0)",
            "install esqlog-terms 1.11.0 or later on every node (esqlog plugin build)",
        )
    return {
        n.node_id: (
            n.counter("word_postings", "size_in_bytes"),
            n.counter("word_postings", "limit_in_bytes"),
        )
        for n in caches.nodes
    }


def warm_line(
    engine: Engine,
    record: Calibration,
    stats: IdentifierStats,
    vocab: Vocabulary,
    progress: ProgressFactory = None,
) -> str | None:
    """calibrate's warm, right after it wrote the word lists: the report's line, or None
    where the nodes keep no whole words (select "auto" is then "cover": nothing to read).
    A failure is said and calibrate goes on: a cold cache costs time, never a result."""
    if not (record.word_lists and whole_words_for([record])):
        return None
    try:
        done = engine.run(
            warm_plan(
                record.index,
                record.field,
                record.word_lists,
                stats,
                vocab,
                IdentifierSettings(),
                progress=progress,
            )
        )
    except ClusterError as exc:
        return f"warm         not done ({exc.problem}); esqlog plugin warm reads them later"
    except Exception as exc:  # the client's own error: a refused privilege, a failed search
        status = error_status(exc)
        if status is None:
            raise  # not an answer (the cluster is unreachable): calibrate fails as it would
        return (
            f"warm         not done (the cluster answered HTTP {status}); "
            "esqlog plugin warm reads them later"
        )
    read = max(done.words.values(), default=0)
    return (
        f"warm         {read:,} words' whole groups read, the most frequent first, on "
        f"{len(done.words)} node{'s' if len(done.words) != 1 else ''} "
        f"({done.grown_bytes / 1e6:.1f} MB, {done.seconds:.1f} s); after a node restarts, "
        "esqlog plugin warm reads them again"
    )
