"""The memory setting of ``calibrate --vocabulary --identifiers`` (``--memory-limit``).

Why a setting: the identifiers statistics need every document's list of term ids once
more after the scan (the split-stream df of a sub-word counts the documents holding any
term whose split contains it, and the splits are final only when the scan is over).
Kept in memory, that list and the arrays built over it grew with the documents times
their distinct terms: 209 MiB at 10K documents of the mix, 1 GiB at 100K, out of reach
at 1M (docs/benchmarks/calibrate-speed.md). Now the list goes to a file as the scan
reads it (esqlog.identifiers.postings) and is read back in chunks, so what it costs in
memory is this setting, not the corpus.

What it bounds: the buffer of term ids before it is written out (per scanning process)
and the chunk of documents the build reads back at once, with the build's temporary
arrays over that chunk. What it does not bound: the tables with one entry per term. While
a shard is scanned its terms are a dictionary (term -> id) in the scanning process; after
the scan they are arrays (esqlog.statistics.term_table, esqlog.identifiers.shard_tables),
a few tens of bytes a term, in the workers and in the parent that merges them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from esqlog.errors import UsageError

#: the default: the build's chunk at 256 MiB reads ~2.1M postings at once, which keeps
#: its per-chunk cost (an O(words) bincount) small against the chunk's own work
DEFAULT_MEMORY_LIMIT = 256 << 20
MIN_MEMORY_LIMIT = 1 << 10  # small enough for the tests to spill at every page
#: bytes the build's temporary arrays take per posting read back (int64 copies of the
#: ids, their documents, the sub-words they expand to and the sort keys, measured with
#: tracemalloc on Go 100K: 113 bytes; rounded up)
BUILD_BYTES_PER_POSTING = 128
_SIZE = re.compile(r"\s*(\d+)\s*([kmg]?)i?b?\s*", re.IGNORECASE)
_UNITS = {"": 1 << 20, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


@dataclass(frozen=True)
class MemoryLimit:
    """How many bytes the document-sized buffers of one calibration may take."""

    limit: int = DEFAULT_MEMORY_LIMIT

    def __post_init__(self) -> None:
        if self.limit < MIN_MEMORY_LIMIT:
            raise UsageError(
                f"--memory-limit must be at least {MIN_MEMORY_LIMIT} bytes",
                "pass a size such as 256M or 1G",
            )

    def buffer_bytes(self, processes: int = 1) -> int:
        """Term ids a scanning process keeps before writing them out: an eighth of the
        limit, shared by the processes scanning at once."""
        return max(self.limit // (8 * max(processes, 1)), 256)

    @property
    def chunk_postings(self) -> int:
        """Postings (document, term) the build reads back and works on at once."""
        return max(self.limit // BUILD_BYTES_PER_POSTING, 1)

    @property
    def tried_casings(self) -> int:
        """Cased words remembered as already split (a cache: emptied when full, the
        statistics do not change): 1/8 of the limit at ~100 bytes a word."""
        return max(self.limit // 800, 16)


def parse_memory_limit(text: str) -> MemoryLimit:
    """``256M``, ``1G``, ``65536K`` or a number of MiB -> a MemoryLimit (UsageError if not)."""
    found = _SIZE.fullmatch(text)
    if not found:
        raise UsageError(f"--memory-limit {text!r} is not a size", "pass e.g. 256M or 1G")
    return MemoryLimit(int(found.group(1)) * _UNITS[found.group(2).lower()])
