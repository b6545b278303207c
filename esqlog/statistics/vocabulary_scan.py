"""The scan behind a vocabulary snapshot: every live document's term vectors, per shard.

Each shard is read with a scroll pinned to it (``preference=_shards:k``); term vectors report
each term's df on that shard (see esqlog.statistics.vocabulary for why their sum is the global df a
DFS
query scores with). The shards are independent, so :func:`scan_vocabulary` reads several at
once (esqlog.engine.shard_scan) and adds them up: integer sums, equal to the sequential scan's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import repeat
from typing import Any, Protocol

import numpy as np

from esqlog.engine.client import Engine, scroll_plan
from esqlog.engine.shard_scan import locked, run_per_shard
from esqlog.engine.steps import Plan
from esqlog.engine.termvectors import stored_vectors_request
from esqlog.errors import ClusterError
from esqlog.statistics.term_counts import TermCounts
from esqlog.statistics.term_table import TermTable, concat
from esqlog.statistics.vocabulary import VocabularyScan

SCAN_BATCH = 500
Progress = Callable[[int], None]
#: Called for every scanned document: (shard, search hit, the document's term vector terms).
#: The hit carries the field's ``_source`` when the scan was asked for it
#: (esqlog.identifiers.query).
DocHook = Callable[[int, Mapping[str, Any], Mapping[str, Any]], None]


class ScanHook(Protocol):
    """A DocHook that a retried scan can reset (calibrate's ``scan_hook``: the identifiers
    mode's SplitCollector, kept above this layer)."""

    def restart(self) -> None: ...

    def __call__(self, shard: int, hit: Mapping[str, Any], terms: Mapping[str, Any]) -> None: ...


def hook_counts_terms(on_doc: DocHook | None) -> bool:
    """Whether the hook already maps every term (esqlog.identifiers.scan) and counts df and
    ttf itself, vectorised: then the scan skips its own per-term dictionary work, which
    would do the same a second time."""
    return on_doc is not None and bool(getattr(on_doc, "keeps_term_stats", False))


@dataclass
class ShardScan:
    """What the scan of one shard collected (merged into a :class:`VocabularyScan`)."""

    df: dict[str, int]  # the shard's df of every term in a live document of the shard
    ttf: dict[str, int]
    docs: int = 0
    #: the largest (doc_count, sum_ttf) any term-vector answer of this shard reported
    doc_count: int = 0
    sum_ttf: int = 0


def scan_shard_plan(
    index: str,
    field_name: str,
    shard: int,
    batch: int = SCAN_BATCH,
    progress: Progress | None = None,
    on_doc: DocHook | None = None,
) -> Plan[ShardScan]:
    """Every live document's term vectors in one shard (a scroll pinned to it)."""
    out = ShardScan({}, {})
    shard_df, ttf = out.df, out.ttf
    counted_by_hook = hook_counts_terms(on_doc)
    #: a hook that keeps each shard's own N (esqlog.identifiers.scan) is told it too
    note_docs = getattr(on_doc, "field_statistics", None)

    def page(hits: list[dict[str, Any]]) -> Plan[bool]:
        vectors = yield stored_vectors_request(
            hits, [field_name], index=index, term_statistics=True, field_statistics=True
        )
        by_id = {h["_id"]: h for h in hits} if on_doc is not None else {}
        for doc in vectors.get("docs", []):
            found = (doc.get("term_vectors") or {}).get(field_name) or {}
            fstats = found.get("field_statistics") or {}
            n = int(fstats.get("doc_count") or 0)
            if n > out.doc_count:
                out.doc_count, out.sum_ttf = n, int(fstats.get("sum_ttf") or 0)
                if note_docs is not None:
                    note_docs(shard, n)
            terms = found.get("terms") or {}
            if on_doc is not None:
                on_doc(shard, by_id.get(doc.get("_id"), {}), terms)
                if counted_by_hook:
                    continue
            for term, info in terms.items():
                # the largest df seen: each was read with an N <= out.doc_count
                shard_df[term] = max(shard_df.get(term, 0), int(info.get("doc_freq") or 0))
                ttf[term] = ttf.get(term, 0) + int(info.get("term_freq", 0))
        out.docs += len(hits)
        if progress is not None:
            progress(len(hits))
        return True

    source: Any = [field_name] if on_doc is not None else False
    yield from scroll_plan(
        index,
        {
            "size": batch,
            "_source": source,
            "sort": ["_doc"],
            "query": {"exists": {"field": field_name}},
        },
        page,
        params={"preference": f"_shards:{shard}"},
    )
    return out


class ScanMerger:
    """Adds shard scans up into the global :class:`VocabularyScan`, in any order (integer
    sums: the result does not depend on which shard finished first).

    Each shard's dictionaries become arrays as the shard is added (a TermTable and its
    counts: esqlog.statistics.term_table) and are emptied: the global table holds no
    Python object per term, where a global dictionary cost ~100 bytes a term beside the
    shards' own (at a million documents of the mix, 2.95M terms).
    """

    def __init__(self) -> None:
        self.terms: TermTable | None = None
        self.df = np.zeros(0, np.int64)
        self.ttf = np.zeros(0, np.int64)
        self.docs = self.doc_count = self.sum_ttf = 0

    def add(self, part: ShardScan) -> None:
        self.docs += part.docs
        self.doc_count += part.doc_count
        self.sum_ttf += part.sum_ttf
        if not part.df and not part.ttf:
            return
        terms = (
            list(part.df)
            if part.ttf.keys() <= part.df.keys()
            else list({**dict.fromkeys(part.df), **dict.fromkeys(part.ttf)})
        )
        df = np.fromiter(map(part.df.get, terms, repeat(0)), np.int64, len(terms))
        ttf = np.fromiter(map(part.ttf.get, terms, repeat(0)), np.int64, len(terms))
        part.df.clear()  # the shard's strings go once they are encoded
        part.ttf.clear()
        table = TermTable.of(terms)
        del terms
        if self.terms is None:
            self.terms, self.df, self.ttf = table, df, ttf
            return
        at = self.terms.index_of(table)
        new = np.flatnonzero(at < 0)
        at[new] = len(self.terms) + np.arange(new.size)
        self.terms = concat(self.terms, table.take(new))
        grown = np.zeros(new.size, np.int64)
        self.df = np.concatenate((self.df, grown))
        self.ttf = np.concatenate((self.ttf, grown))
        self.df[at] += df  # a term appears once in a shard: no repeated index
        self.ttf[at] += ttf

    def result(self, index: str, field_name: str, on_doc: DocHook | None = None) -> VocabularyScan:
        if hook_counts_terms(on_doc):
            df, ttf = on_doc.term_statistics()  # type: ignore[union-attr]
        else:
            terms = self.terms if self.terms is not None else TermTable.of([])
            df, ttf = TermCounts(terms, self.df), TermCounts(terms, self.ttf)
        scan = VocabularyScan(df, ttf, self.docs, self.doc_count, self.sum_ttf)
        if scan.docs and not scan.df:
            raise ClusterError(
                f"term vectors of {index!r} returned no terms for field "
                f"{field_name!r} ({scan.docs} documents read)",
                "check that the field is an indexed text field",
            )
        return scan


def scan_vocabulary_plan(
    index: str,
    field_name: str,
    shards: int,
    batch: int = SCAN_BATCH,
    progress: Progress | None = None,
    on_doc: DocHook | None = None,
) -> Plan[VocabularyScan]:
    """Every live document's term vectors, shard after shard: global df and ttf of every term.

    ``on_doc`` sees each document too, with its ``_source`` field (the original casing,
    which term vectors lose): the identifier statistics ride on the same pass. (The
    concurrent scan is :func:`scan_vocabulary`.)
    """
    merger = ScanMerger()
    for shard in range(shards):
        merger.add((yield from scan_shard_plan(index, field_name, shard, batch, progress, on_doc)))
    return merger.result(index, field_name, on_doc)


def scan_vocabulary(
    engine: Engine,
    index: str,
    field_name: str,
    shards: int,
    parallel: int,
    progress: Progress | None = None,
    on_doc: DocHook | None = None,
) -> VocabularyScan:
    """:func:`scan_vocabulary_plan` reading up to ``parallel`` shards at once.

    With an ``on_doc`` hook the shards are read one after another: the identifier
    statistics keep the first casing of a word that they see, so they depend on the order
    of the documents, and that order must not depend on thread timing.
    """
    merger = ScanMerger()
    report = locked(progress)
    run_per_shard(
        engine,
        lambda shard: scan_shard_plan(index, field_name, shard, progress=report, on_doc=on_doc),
        shards,
        1 if on_doc is not None else parallel,
        lambda _, part: merger.add(part),
    )
    return merger.result(index, field_name, on_doc)
