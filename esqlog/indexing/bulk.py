"""Incremental indexing: what the index holds, what changed, and the bulk stream.

Every document of a file carries ``file_hash``: a hash of the file's bytes and of the
chunking rules. A file is unchanged (and costs no write) when all its documents carry its
current hash and their ``chunk`` numbers are exactly 0..chunks-1; otherwise it is cut
again, its documents are indexed over the old ones (ids are ``hash(path)-chunk``) and
left-over ids are deleted. Files gone from the folder lose all their documents. So an
interrupted run is finished by the next one, whatever state it left.

Writes go through the client's own ``helpers.streaming_bulk`` (retries of 429
rejections with backoff); the files are read and cut in a thread ahead of it, so the
cutting overlaps the engine's indexing.
"""

from __future__ import annotations

import hashlib
import queue
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from esqlog.engine.client import Engine
from esqlog.engine.paths import index_path
from esqlog.engine.steps import Request
from esqlog.indexing.chunk import ChunkLimits, chunk_text
from esqlog.indexing.languages import language_of
from esqlog.indexing.walk import SourceFile

SCAN_PAGE = 5000
AGG_PAGE = 5000  # composite buckets (paths) a page
BULK_DOCS = 500
BULK_BYTES = 8 << 20


@dataclass
class Stored:
    """What the index holds for one path."""

    ids: list[str] = field(default_factory=list)
    chunks: set[int] = field(default_factory=set)
    hashes: set[str] = field(default_factory=set)
    declared: set[int] = field(default_factory=set)  # the "chunks" values seen


@dataclass
class IndexCounts:
    """What one run did (printed at the end)."""

    files_indexed: int = 0
    files_unchanged: int = 0
    files_empty: int = 0  # no letter or digit in them: nothing to index
    files_deleted: int = 0
    chunks_indexed: int = 0
    chunks_deleted: int = 0
    failures: int = 0
    first_failure: str = ""


def doc_id(path: str, chunk: int) -> str:
    """Stable per (path, chunk number): a changed file's documents replace its old ones."""
    return f"{hashlib.blake2b(path.encode('utf-8'), digest_size=10).hexdigest()}-{chunk}"


def file_hash(source: SourceFile, limits: ChunkLimits) -> str:
    return hashlib.blake2b(
        f"{source.digest}:{limits.signature()}".encode(), digest_size=16
    ).hexdigest()


def stored_files(engine: Engine, index: str) -> dict[str, Stored]:
    """path -> its documents, from one composite aggregation over the documents esqlog wrote.

    Why not read every document: on 164K documents (7,488 files) reading them all back with
    search_after took 5 s, most of an unchanged rerun; buckets of (path, file_hash, chunks)
    with each bucket's lowest and highest chunk number took 1.2 s. Documents of a path have
    ids ``doc_id(path, chunk)`` (so one per chunk number): a bucket of n documents whose
    chunk numbers span exactly n values holds exactly those chunks, and their ids follow.
    The few paths whose buckets do not say so (an interrupted run, a document without
    ``chunk``) are read document by document.
    """
    out: dict[str, Stored] = {}
    unclear: set[str] = set()
    after: dict[str, Any] | None = None
    while True:
        composite: dict[str, Any] = {
            "size": AGG_PAGE,
            "sources": [
                {"path": {"terms": {"field": "path"}}},
                {"hash": {"terms": {"field": "file_hash"}}},
                {"chunks": {"terms": {"field": "chunks", "missing_bucket": True}}},
            ],
        }
        if after is not None:
            composite["after"] = after
        body = {
            "size": 0,
            "query": {"exists": {"field": "file_hash"}},
            "aggs": {
                "files": {
                    "composite": composite,
                    "aggs": {"lo": {"min": {"field": "chunk"}}, "hi": {"max": {"field": "chunk"}}},
                }
            },
        }
        found = engine.perform(Request("POST", index_path(index, "_search"), body=body))[
            "aggregations"
        ]["files"]
        for bucket in found["buckets"]:
            _absorb(out, unclear, bucket)
        if len(found["buckets"]) < AGG_PAGE or not found.get("after_key"):
            break
        after = found["after_key"]
    if unclear:
        out.update(_read_documents(engine, index, sorted(unclear)))
    return out


def _absorb(out: dict[str, Stored], unclear: set[str], bucket: dict[str, Any]) -> None:
    key = bucket["key"]
    path = str(key["path"])
    stored = out.setdefault(path, Stored())
    stored.hashes.add(str(key["hash"]))
    if isinstance(key.get("chunks"), int | float):
        stored.declared.add(int(key["chunks"]))
    low, high = bucket["lo"].get("value"), bucket["hi"].get("value")
    if low is None or high is None or int(high) - int(low) + 1 != bucket["doc_count"]:
        unclear.add(path)
        return
    numbers = range(int(low), int(high) + 1)
    if stored.chunks.intersection(numbers):
        unclear.add(path)
    stored.chunks.update(numbers)
    stored.ids.extend(doc_id(path, k) for k in numbers)


def _read_documents(engine: Engine, index: str, paths: list[str]) -> dict[str, Stored]:
    """The documents of these paths, one by one (search_after, path and chunk order)."""
    out: dict[str, Stored] = {}
    for start in range(0, len(paths), 1000):
        after: list[Any] | None = None
        while True:
            body: dict[str, Any] = {
                "query": {
                    "bool": {
                        "filter": [
                            {"exists": {"field": "file_hash"}},
                            {"terms": {"path": paths[start : start + 1000]}},
                        ]
                    }
                },
                "size": SCAN_PAGE,
                "sort": [{"path": "asc"}, {"chunk": "asc"}],
                "track_total_hits": False,
                "_source": ["path", "file_hash", "chunk", "chunks"],
            }
            if after is not None:
                body["search_after"] = after
            hits = engine.perform(Request("POST", index_path(index, "_search"), body=body))["hits"][
                "hits"
            ]
            for hit in hits:
                src = hit.get("_source") or {}
                stored = out.setdefault(str(src.get("path")), Stored())
                stored.ids.append(hit["_id"])
                stored.hashes.add(str(src.get("file_hash")))
                if isinstance(src.get("chunk"), int):
                    stored.chunks.add(src["chunk"])
                if isinstance(src.get("chunks"), int):
                    stored.declared.add(src["chunks"])
            if len(hits) < SCAN_PAGE:
                break
            after = hits[-1]["sort"]
    return out


def _unchanged(stored: Stored | None, digest: str) -> bool:
    if stored is None or stored.hashes != {digest} or len(stored.declared) != 1:
        return False
    (count,) = stored.declared
    return stored.chunks == set(range(count)) and len(stored.ids) == count


def actions(
    index: str,
    files: Iterable[SourceFile],
    stored: dict[str, Stored],
    limits: ChunkLimits,
    counts: IndexCounts,
) -> Iterator[dict[str, Any]]:
    """Bulk actions that bring the index to ``files``: changed files, then removed ones."""
    seen: set[str] = set()
    for source in files:
        seen.add(source.path)
        digest = file_hash(source, limits)
        old = stored.get(source.path)
        language = language_of(source.path)
        chunks = [] if _unchanged(old, digest) else chunk_text(source.text, language, limits)
        if _unchanged(old, digest):
            counts.files_unchanged += 1
        elif not chunks and old is None:
            counts.files_empty += 1
        else:
            new_ids = set()
            for number, chunk in enumerate(chunks):
                _id = doc_id(source.path, number)
                new_ids.add(_id)
                doc = {
                    "path": source.path,
                    "language": language,
                    "kind": chunk.kind,
                    "start_line": chunk.start_line,
                    "end_line": chunk.end_line,
                    "chunk": number,
                    "chunks": len(chunks),
                    "file_hash": digest,
                    "content": chunk.content,
                }
                if chunk.symbol:
                    doc["symbol"] = chunk.symbol
                yield {"_op_type": "index", "_index": index, "_id": _id, "_source": doc}
            counts.files_indexed += 1
            counts.chunks_indexed += len(chunks)
            for _id in old.ids if old else []:
                if _id not in new_ids:
                    counts.chunks_deleted += 1
                    yield {"_op_type": "delete", "_index": index, "_id": _id}
    for path in sorted(set(stored) - seen):
        counts.files_deleted += 1
        for _id in stored[path].ids:
            counts.chunks_deleted += 1
            yield {"_op_type": "delete", "_index": index, "_id": _id}


def ahead(items: Iterable[Any], depth: int = 2000) -> Iterator[Any]:
    """``items`` produced by a thread up to ``depth`` ahead of the consumer: the reading and
    cutting of files goes on while the bulk request waits for the engine."""
    box: queue.Queue[Any] = queue.Queue(depth)
    done = object()
    failure: list[BaseException] = []
    stop = threading.Event()

    def produce() -> None:
        try:
            for item in items:
                if stop.is_set():
                    return
                box.put(item)
        except BaseException as exc:  # handed to the consumer, raised there
            failure.append(exc)
        finally:
            box.put(done)

    worker = threading.Thread(target=produce, name="esqlog-index-reader", daemon=True)
    worker.start()
    try:
        while (item := box.get()) is not done:
            yield item
    finally:
        stop.set()
        while worker.is_alive():  # unblock a producer waiting on a full queue
            try:
                box.get_nowait()
            except queue.Empty:
                worker.join(0.05)
    if failure:
        raise failure[0]


def send(engine: Engine, stream: Iterable[dict[str, Any]], counts: IndexCounts) -> None:
    """Everything in ``stream`` through the client's streaming_bulk helper; a delete of a
    document already gone is fine, any other failure is counted (the first one kept)."""
    if engine.flavor == "opensearch":
        from opensearchpy.helpers import streaming_bulk
    else:
        from elasticsearch.helpers import streaming_bulk  # type: ignore[assignment]
    results = streaming_bulk(
        engine.client,
        ahead(stream),
        chunk_size=BULK_DOCS,
        max_chunk_bytes=BULK_BYTES,
        raise_on_error=False,
        max_retries=5,
        initial_backoff=1,
        max_backoff=30,
        yield_ok=False,
    )
    for ok, item in results:
        if ok:
            continue
        ((op, result),) = item.items()
        if op == "delete" and result.get("status") == 404:
            continue
        counts.failures += 1
        if not counts.first_failure:
            error = result.get("error")
            reason = error.get("reason") if isinstance(error, dict) else error
            counts.first_failure = f"{op} {result.get('_id')}: {reason}"


def refresh(engine: Engine, index: str) -> None:
    """Make the run's writes searchable (and visible to --calibrate) before returning."""
    engine.perform(Request("POST", index_path(index, "_refresh")))
