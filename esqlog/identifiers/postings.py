"""Each scanned document's term ids, written to disk as the scan goes, read back in chunks.

Why: the split statistics are built after the scan (a term's split is final only when
every document has been seen), and that build reads each document's term ids once more.
Held in memory they grew with documents x terms per document (esqlog.identifiers.memory);
here they are appended to a file once the buffer passes its budget and read back in
chunks of whole documents, so memory stays within the setting whatever the corpus.

Format: two raw little-endian files per segment, ``terms.i32`` (the ids of every
document's terms, in scan order) and ``lengths.i32`` (how many terms each document has).
A segment is what one collector wrote (one process, one or several shards); a merged
collector (esqlog.identifiers.scan.absorb) holds several, each with the mapping from its
collector's term ids to the merged ones. Nothing here is a file esqlog leaves behind:
the segments live in a temporary directory and are deleted after the build (or when the
scan is retried or fails), so they are not written atomically.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

_TERMS, _LENGTHS = "terms.i32", "lengths.i32"


@dataclass(frozen=True)
class Segment:
    """One collector's postings on disk; ``mapping`` turns its term ids into the
    owner's (None: the same ids)."""

    directory: Path
    mapping: np.ndarray | None = None

    def mapped(self, mapping: np.ndarray) -> Segment:
        """This segment seen through one more mapping (a merge into another collector)."""
        return Segment(self.directory, mapping if self.mapping is None else mapping[self.mapping])

    def remove(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)


class PostingLog:
    """Append-only store of per-document term ids, spilled to disk past ``buffer_bytes``.

    ``spill_dir``: where the temporary segment directory goes (None: the system's
    temporary directory). Documents are read back in their order of arrival.
    """

    def __init__(self, buffer_bytes: int, spill_dir: str | Path | None = None) -> None:
        self.buffer_bytes = buffer_bytes
        self.spill_dir = spill_dir
        self.segments: list[Segment] = []  # on disk, in order; then the buffer
        self._own: Segment | None = None  # the segment this log appends to
        self._terms: list[np.ndarray] = []
        self._lengths: list[np.ndarray] = []
        self._buffered = 0
        self.docs = 0
        self.postings = 0

    def append(self, terms: np.ndarray, lengths: np.ndarray) -> None:
        """The term ids (int32) of some documents, and how many belong to each."""
        self._terms.append(terms.astype(np.int32, copy=False))
        self._lengths.append(lengths.astype(np.int32, copy=False))
        self._buffered += terms.nbytes + lengths.nbytes
        self.docs += lengths.size
        self.postings += terms.size
        if self._buffered >= self.buffer_bytes:
            self.flush()

    def flush(self) -> None:
        """Write the buffer to this log's own segment (created on first use)."""
        if not self._terms:
            return
        if self._own is None:
            self._own = Segment(
                Path(tempfile.mkdtemp(prefix="esqlog-postings-", dir=self.spill_dir))
            )
            self.segments.append(self._own)
        for name, parts in ((_TERMS, self._terms), (_LENGTHS, self._lengths)):
            with (self._own.directory / name).open("ab") as out:
                for part in parts:
                    out.write(part.astype("<i4", copy=False).tobytes())
        self._terms, self._lengths, self._buffered = [], [], 0

    def absorb(self, other: PostingLog, mapping: np.ndarray) -> None:
        """Take over ``other``'s postings (written out first), read through ``mapping``
        (other's term id -> this log's); this log appends to a new segment after them."""
        self.flush()
        other.flush()
        self.segments.extend(s.mapped(mapping) for s in other.segments)
        other.segments = []
        self._own = None
        self.docs += other.docs
        self.postings += other.postings

    def export(self) -> tuple[np.ndarray, np.ndarray]:
        """Every document's term ids and lengths (int32, in order), in memory: what a scan
        on another machine sends back, since its disk is not the caller's. Only a log that
        holds its own ids (nothing absorbed) is exported."""
        self.flush()
        if any(s.mapping is not None for s in self.segments):
            raise ValueError("a merged posting log is not exported")
        terms, lengths = [np.zeros(0, np.int32)], [np.zeros(0, np.int32)]
        for segment in self.segments:
            for name, out in ((_TERMS, terms), (_LENGTHS, lengths)):
                path = segment.directory / name
                if path.is_file():
                    out.append(np.fromfile(path, dtype="<i4").astype(np.int32, copy=False))
        return np.concatenate(terms), np.concatenate(lengths)

    def adopt(self, terms: np.ndarray, lengths: np.ndarray) -> None:
        """Append an exported log's postings and write them out at once (to this log's
        spill directory): a finished shard's ids wait for their merge on disk, not in
        memory."""
        self.append(terms, lengths)
        self.flush()

    def discard(self) -> None:
        """Delete every segment and forget the buffer (idempotent)."""
        for segment in self.segments:
            segment.remove()
        self.segments, self._own = [], None
        self._terms, self._lengths, self._buffered = [], [], 0
        self.docs = self.postings = 0

    def chunks(self, max_postings: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(term ids as int64, document lengths) of whole documents, in order, about
        ``max_postings`` ids at a time (one document longer than that comes alone)."""
        for segment in self.segments:
            yield from _segment_chunks(segment, max_postings)
        if self._terms:
            yield (
                np.concatenate(self._terms).astype(np.int64),
                np.concatenate(self._lengths).astype(np.int64),
            )


def _segment_chunks(segment: Segment, max_postings: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    terms_path, lengths_path = segment.directory / _TERMS, segment.directory / _LENGTHS
    if not lengths_path.is_file() or lengths_path.stat().st_size == 0:
        return
    lengths_all = np.memmap(lengths_path, dtype="<i4", mode="r")
    terms_all = (
        np.memmap(terms_path, dtype="<i4", mode="r")
        if terms_path.stat().st_size
        else np.zeros(0, "<i4")
    )
    mapping = segment.mapping
    doc = start = 0
    step = max(max_postings // 4, 1024)  # documents whose lengths are looked at at once
    while doc < lengths_all.size:
        window = np.asarray(lengths_all[doc : doc + step], dtype=np.int64)
        ends = np.cumsum(window)
        take = max(int(np.searchsorted(ends, max_postings, side="right")), 1)
        lengths = window[:take]
        stop = start + int(ends[take - 1])
        ids = np.asarray(terms_all[start:stop], dtype=np.int64)
        yield (ids if mapping is None else mapping[ids].astype(np.int64)), lengths
        doc, start = doc + take, stop
    del lengths_all, terms_all
