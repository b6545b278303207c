"""The identifiers mode's part of calibrate's vocabulary scan: every document's terms and
the original casings in its text (esqlog.identifier_stats builds the statistics from them).

Why a worker thread: this hook runs for every document of the index, and its work (term
ids, a regular expression over the text, the new casings) is pure Python. Done inline, it
adds to the scan's wall clock; handed over a page at a time to one worker thread, it runs
while the main thread waits for the engine's next page and term vectors (the GIL is
released during network waits), so most of it disappears from calibrate's time. Pages are
processed strictly in scan order, so the statistics are the same as inline processing.
"""

from __future__ import annotations

import operator
import queue
import threading
from array import array
from collections.abc import Mapping
from typing import Any

import numpy as np

from esqlog.subwords import CASED_TOKEN, split_identifier

MAX_SHARDS = 64  # presence masks are uint64
#: documents handed to the worker at once (the scan's page size)
BATCH = 500
_TERM_FREQ = operator.itemgetter("term_freq")
_DOC_FREQ = operator.itemgetter("doc_freq")
_WORDS = CASED_TOKEN.findall
_Doc = tuple[int, Any, Mapping[str, Any]]


class SplitCollector:
    """Per-document hook of the vocabulary scan (esqlog.vocabulary.DocHook).

    Read ``terms``, ``term_id``, ``splits`` and the ``doc_*`` arrays only after
    :meth:`finish` (build_identifier_stats calls it). ``background=False`` processes each
    document inline (what the worker does, without the thread).
    """

    def __init__(self, field_name: str, background: bool = True) -> None:
        self.field = field_name
        self.background = background
        self._worker: threading.Thread | None = None
        self._queue: queue.Queue[list[_Doc] | None] = queue.Queue(maxsize=4)
        self._failure: BaseException | None = None
        self.restart()

    def restart(self) -> None:
        """Forget everything: the scan is being retried from the start."""
        self.close()
        self._failure = None
        self._pending: list[_Doc] = []
        self.term_id: dict[str, int] = {}
        self.terms: list[str] = []
        self.splits: dict[int, tuple[str, ...]] = {}
        self.tried: set[str] = set()  # cased forms already split (most repeat)
        self.doc_terms = array("i")
        self.doc_tf = array("i")
        self.doc_df = array("i")  # each term's shard df as its term vector reported it
        self.global_df: np.ndarray | None = None  # set by term_statistics()
        self.doc_ptr = array("q", [0])
        self.doc_shard = array("b")

    def __call__(self, shard: int, hit: Mapping[str, Any], terms: Mapping[str, Any]) -> None:
        """Queue the document (its shard, the field's source, its term vector)."""
        if shard >= MAX_SHARDS:
            raise ValueError(f"the identifiers mode supports up to {MAX_SHARDS} shards")
        self._pending.append((shard, (hit.get("_source") or {}).get(self.field), terms))
        if len(self._pending) >= BATCH:
            self._hand_over()

    def finish(self) -> None:
        """Wait until every queued document is processed; re-raise the worker's failure."""
        self._hand_over()
        self.close()
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure

    def close(self) -> None:
        """Stop the worker after the documents already queued (idempotent)."""
        worker, self._worker = self._worker, None
        if worker is not None:
            self._queue.put(None)
            worker.join()

    def _hand_over(self) -> None:
        batch, self._pending = self._pending, []
        if not batch:
            return
        if not self.background:
            self._process(batch)
            return
        if self._failure is not None:
            self.finish()  # raises it
        if self._worker is None:
            self._worker = threading.Thread(target=self._run, name="esqlog-split-collector",
                                            daemon=True)
            self._worker.start()
        self._queue.put(batch)

    def _run(self) -> None:
        while True:
            batch = self._queue.get()
            if batch is None:
                return
            if self._failure is None:  # after a failure, drain so the scan never blocks
                try:
                    self._process(batch)
                except BaseException as exc:  # re-raised by finish(), in the scan's thread
                    self._failure = exc

    def _process(self, batch: list[_Doc]) -> None:
        """Record each document's terms; learn splits from the casings in its text.

        Hot: one dictionary lookup per term and per token, one split per distinct original
        casing (the first casing seen that splits wins). A set-difference variant that
        visits only new tokens measured no faster in CPU seconds (the regular expression
        over the text is most of the cost), so the plain loop stays.
        """
        ids, names, splits, tried = self.term_id, self.terms, self.splits, self.tried
        get = ids.get
        doc_terms, doc_tf, doc_df, doc_ptr, doc_shard = (
            self.doc_terms, self.doc_tf, self.doc_df, self.doc_ptr, self.doc_shard)
        for shard, source, terms in batch:
            found = list(map(get, terms))
            if None in found:
                for k, term in enumerate(terms):
                    if found[k] is None:
                        found[k] = ids[term] = len(names)
                        names.append(term)
            doc_terms.extend(found)  # type: ignore[arg-type]  # no None left
            values = terms.values()
            try:  # C-level extraction; a document missing a statistic takes the slow path
                tf, dfs = array("i", map(_TERM_FREQ, values)), array("i", map(_DOC_FREQ, values))
            except (KeyError, TypeError):  # a missing or null statistic: as the scan reads it
                if not all(isinstance(v, Mapping) for v in values):
                    raise  # not a term vector at all
                tf = array("i", (int(v.get("term_freq", 0)) for v in values))
                dfs = array("i", (int(v.get("doc_freq") or 0) for v in values))
            doc_tf.extend(tf)
            doc_df.extend(dfs)
            doc_ptr.append(len(doc_terms))
            doc_shard.append(shard)
            texts = [source] if isinstance(source, str) else (
                [t for t in source if isinstance(t, str)] if isinstance(source, list) else [])
            for text in texts:
                for token in _WORDS(text):  # cased_tokens without its checks: see below
                    if token in tried:
                        continue
                    tried.add(token)
                    low = token.lower()
                    i = get(low)
                    if i is None or i in splits or low not in terms:
                        continue
                    parts = split_identifier(token)
                    if parts:
                        splits[i] = parts

    #: esqlog.vocabulary's scan leaves its per-term df and ttf counting to this hook
    #: (term_statistics): the hook maps every term to an id anyway, and counting over those
    #: ids with numpy replaces the scan's own per-term dictionary loop, the largest Python
    #: cost of calibrate. Same numbers, same term order (first seen in scan order).
    keeps_term_stats = True

    def term_statistics(self) -> tuple[dict[str, int], dict[str, int]]:
        """(global df, ttf) of every term seen, as esqlog.vocabulary's scan counts them: per
        shard the largest df a term vector reported, summed over shards; tf summed."""
        self.finish()
        n = len(self.terms)
        ids = np.frombuffer(self.doc_terms, dtype=np.int32)
        dfs = np.frombuffer(self.doc_df, dtype=np.int32).astype(np.int64)
        ptr = np.frombuffer(self.doc_ptr, dtype=np.int64)
        shard_of = np.repeat(np.frombuffer(self.doc_shard, dtype=np.int8), np.diff(ptr))
        df = np.zeros(n, dtype=np.int64)
        shards = np.unique(shard_of)
        for shard in shards.tolist():
            sel = ids if shards.size == 1 else ids[shard_of == shard]
            best = np.zeros(n, dtype=np.int64)
            np.maximum.at(best, sel, dfs if shards.size == 1 else dfs[shard_of == shard])
            df += best
        ttf = np.bincount(ids, weights=np.frombuffer(self.doc_tf, dtype=np.int32),
                          minlength=n).astype(np.int64)
        self.global_df = df
        return dict(zip(self.terms, df.tolist(), strict=True)), dict(
            zip(self.terms, ttf.tolist(), strict=True))
