"""The one builder of ``_mtermvectors`` requests for stored documents.

Three scans read stored documents' term vectors (the vocabulary snapshot, the hapax sample,
the client-side rerank). They all use the ``docs`` form: it is the only form that carries each
document's custom routing, and in it the options must go in every document (a top-level
``parameters`` block is ignored there).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from esqlog.engine.paths import index_path
from esqlog.engine.steps import Request


def stored_vectors_request(
    hits: Sequence[Mapping[str, Any]],
    fields: Sequence[str],
    *,
    index: str | None = None,
    term_statistics: bool = False,
    field_statistics: bool = False,
) -> Request:
    """Term vectors of the hits' ``fields`` in one request; each hit gives ``_id`` and, when
    ``index`` is None, its own ``_index`` (and ``_routing`` when it has one)."""
    options = {
        "fields": list(fields),
        "term_statistics": term_statistics,
        "field_statistics": field_statistics,
        "positions": False,
        "offsets": False,
        "payloads": False,
    }
    docs = []
    for hit in hits:
        doc: dict[str, Any] = {"_id": hit["_id"], **options}
        if index is None:
            doc["_index"] = hit["_index"]
        if hit.get("_routing") is not None:
            doc["routing"] = hit["_routing"]
        docs.append(doc)
    path = index_path(index, "_mtermvectors", patterns=True) if index else "/_mtermvectors"
    return Request("POST", path, body={"docs": docs})
