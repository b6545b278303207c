"""esqlog: q-log IDF for BM25 code search on Elasticsearch and OpenSearch, without reindexing."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
