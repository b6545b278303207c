"""Benchmark corpora (JSONL documents and queries) and indexing them into a scratch index.

Used by the demo, the evaluation harness and the benchmarks, never on a user's index: the
index written here is one esqlog creates for itself (the name is the caller's choice).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from esqlog.engine.client import Engine
from esqlog.engine.paths import index_path
from esqlog.engine.scratch import create_scratch
from esqlog.engine.steps import Request

#: An identifier-aware analyzer for the tokenizer ablation: splits camelCase, snake_case and
#: letter/digit boundaries, keeps the original token too (OpenSearch analysis-common).
CODE_ANALYSIS: dict[str, Any] = {
    "filter": {
        "code_split": {
            "type": "word_delimiter_graph",
            "split_on_case_change": True,
            "split_on_numerics": True,
            "preserve_original": True,
            "generate_word_parts": True,
            "generate_number_parts": True,
        },
        "flat": {"type": "flatten_graph"},
    },
    "analyzer": {
        "code": {
            "type": "custom",
            "tokenizer": "standard",
            "filter": ["code_split", "lowercase", "flat"],
        },
    },
}


@dataclass(frozen=True)
class Query:
    qid: str
    text: str
    gold: str


def _open(path: Path) -> Any:
    return (
        gzip.open(path, "rt", encoding="utf-8")
        if path.suffix == ".gz"
        else path.open(encoding="utf-8")
    )


def read_jsonl(path: str | Path) -> Iterator[dict[str, Any]]:
    """Records of a .jsonl or .jsonl.gz file."""
    with _open(Path(path)) as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def load_queries(path: str | Path) -> list[Query]:
    """Queries with their one gold document id."""
    return [Query(str(r["qid"]), str(r["text"]), str(r["gold"])) for r in read_jsonl(path)]


def create_corpus_index(
    engine: Engine,
    index: str,
    analyzer: str = "standard",
    shards: int = 1,
    field_name: str = "body",
    replace: bool = False,
    command: str = "bench",
) -> None:
    """Create the scratch index with one text field analyzed by ``standard`` or ``code``.

    Marked as ``esqlog <command>``'s scratch index; ``replace`` replaces only an index that
    carries that marker (esqlog.engine.scratch), and any other existing index is refused.
    """
    settings: dict[str, Any] = {
        "number_of_shards": shards,
        "number_of_replicas": 0,
        "refresh_interval": "-1",
    }
    if analyzer == "code":
        settings["analysis"] = CODE_ANALYSIS
    elif analyzer != "standard":
        raise ValueError(f"unknown analyzer {analyzer!r}: use standard or code")
    create_scratch(
        engine,
        index,
        command,
        settings,
        {field_name: {"type": "text", "analyzer": analyzer}, "name": {"type": "keyword"}},
        replace=replace,
    )


def bulk_index_docs(
    engine: Engine,
    index: str,
    docs: Iterable[dict[str, Any]],
    field_name: str = "body",
    chunk: int = 1000,
    progress: Callable[[int], None] | None = None,
    extra_fields: Sequence[str] = (),
) -> int:
    """Bulk-index corpus records ({id, text, name}); returns how many were indexed.

    ``extra_fields``: record keys copied as they are (e.g. ``path``, which an agent is shown
    with each hit, so a token-budget evaluation pays for it as esqlog mcp's answers do).
    """
    count = 0
    lines: list[str] = []

    def flush() -> None:
        if not lines:
            return
        result = engine.perform(
            Request("POST", index_path(index, "_bulk"), body="\n".join(lines) + "\n")
        )
        if result.get("errors"):
            first = next(i for i in result["items"] if i["index"].get("error"))
            raise RuntimeError(f"bulk indexing failed: {first['index']['error']}")
        if progress is not None:
            progress(len(lines) // 2)
        lines.clear()

    for doc in docs:
        lines.append(json.dumps({"index": {"_id": doc["id"]}}))
        source = {field_name: doc["text"], "name": doc.get("name", "")}
        source.update({key: doc[key] for key in extra_fields if key in doc})
        lines.append(json.dumps(source))
        count += 1
        if len(lines) >= 2 * chunk:
            flush()
    flush()
    engine.perform(
        Request("PUT", index_path(index, "_settings"), body={"index": {"refresh_interval": "1s"}})
    )
    engine.perform(Request("POST", index_path(index, "_refresh")))
    return count
