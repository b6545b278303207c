"""Small vocabulary snapshots built in memory, and their comparison: for the file-format tests
(tests/unit) and the scans of real engines (tests/engine) alike."""

from __future__ import annotations

from typing import Any

import numpy as np

from esqlog.statistics.vocabulary import Vocabulary, VocabularyScan, vocabulary_from_scan


def make_vocabulary(df: dict[str, int], **meta: Any) -> Vocabulary:
    """A snapshot holding exactly ``df`` (term -> df), with metadata any test may override."""
    scan = VocabularyScan(dict(df), dict(df), len(df))
    fields: dict[str, Any] = {
        "index": "idx",
        "index_uuid": "uuid-1",
        "field": "body",
        # N >= every df, as in any one Lucene reader
        "doc_count": max([10, *df.values()]),
        "sum_ttf": 99,
        "live_docs": 9,
        "created_at": "2024-01-01T00:00:00+00:00",
        **meta,
    }
    return vocabulary_from_scan(scan, **fields)


def assert_same_vocabulary(a: Vocabulary, b: Vocabulary) -> None:
    """Equal metadata, and the same terms with the same df in the same dtypes."""
    assert (a.index, a.index_uuid, a.field, a.doc_count, a.sum_ttf, a.live_docs, a.created_at) == (
        b.index,
        b.index_uuid,
        b.field,
        b.doc_count,
        b.sum_ttf,
        b.live_docs,
        b.created_at,
    )
    assert a.hashes.dtype == b.hashes.dtype == np.uint64
    assert a.df.dtype == b.df.dtype == np.uint32
    assert np.array_equal(a.hashes, b.hashes) and np.array_equal(a.df, b.df)
