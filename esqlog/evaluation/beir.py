"""BEIR folders (corpus.jsonl, queries.jsonl, qrels/<split>.tsv) and the scratch index a
benchmark indexes them into.

The scratch index is the only thing ``esqlog bench-beir`` writes to a cluster. It carries a
marker in its mapping's ``_meta``; an existing index without that marker is never touched
(esqlog refuses, so a mistyped ``--index`` cannot overwrite a real index), and one with it
is esqlog's own from an earlier run, replaced.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from esqlog.engine.client import Engine
from esqlog.engine.failures import error_reason, error_status
from esqlog.engine.scratch import create_scratch, delete_scratch
from esqlog.errors import UsageError
from esqlog.evaluation.corpus import CODE_ANALYSIS
from esqlog.evaluation.judgments import Notes, json_records

FIELD = "body"
FOLDER_FIX = "pass a BEIR folder: corpus.jsonl, queries.jsonl and qrels/test.tsv"


@dataclass(frozen=True)
class BeirFolder:
    """The three files of one BEIR dataset split."""

    corpus: Path
    queries: Path
    qrels: Path


def locate(folder: Path, split: str = "test") -> BeirFolder:
    """The folder's files (``.jsonl`` or ``.jsonl.gz``), or one line naming what is missing."""
    if not folder.is_dir():
        raise UsageError(f"{str(folder)!r} is not a folder", FOLDER_FIX)

    def first(*names: str) -> Path:
        for name in names:
            if (folder / name).is_file():
                return folder / name
        raise UsageError(f"{str(folder)!r} has no {names[0]}", FOLDER_FIX)

    qrels = folder / "qrels" / f"{split}.tsv"
    if not qrels.is_file():
        splits = sorted(p.stem for p in (folder / "qrels").glob("*.tsv"))
        raise UsageError(
            f"{str(folder)!r} has no qrels/{split}.tsv",
            f"pass --split {splits[0]}" if splits else FOLDER_FIX,
        )
    return BeirFolder(
        first("corpus.jsonl", "corpus.jsonl.gz"), first("queries.jsonl", "queries.jsonl.gz"), qrels
    )


def read_corpus(path: Path, notes: Notes) -> Iterator[dict[str, str]]:
    """Documents as ``{id, text, name}``: text is the title and the text, as BEIR's BM25
    baselines index them; a line without ``_id`` and text is counted and skipped."""
    opener: Any = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as handle:
            for lineno, record in json_records(handle, notes, "corpus"):
                doc = _document(record)
                if doc is None:
                    notes.add("corpus records without _id and text skipped", f"line {lineno}")
                    continue
                yield doc
    except (OSError, UnicodeDecodeError, EOFError) as exc:
        raise UsageError(f"cannot read corpus {str(path)!r} ({exc})", FOLDER_FIX) from None


def _document(record: Any) -> dict[str, str] | None:
    if not isinstance(record, dict):
        return None
    doc_id, title, text = record.get("_id"), record.get("title") or "", record.get("text")
    if (
        not isinstance(doc_id, str | int)
        or isinstance(doc_id, bool)
        or str(doc_id) == ""
        or not isinstance(text, str)
        or not isinstance(title, str)
    ):
        return None
    body = f"{title}\n{text}" if title.strip() else text
    return {"id": str(doc_id), "text": body, "name": title[:200]}


def scratch_name(folder: Path) -> str:
    """``esqlog-bench-<folder name>``, lower-cased to what index names allow."""
    name = re.sub(r"[^a-z0-9_-]+", "-", folder.resolve().name.lower()).strip("-_")
    return f"esqlog-bench-{name or 'beir'}"[:200]


def create_scratch_index(engine: Engine, index: str, analyzer: str, shards: int = 1) -> bool:
    """Create the scratch index (one text field ``body``); True if it replaced esqlog's own.

    ``analyzer``: ``standard``, ``code`` (identifier-splitting, needs analysis-common) or any
    analyzer the cluster has built in (``english``, ``whitespace``, ...).
    """
    settings: dict[str, Any] = {
        "number_of_shards": shards,
        "number_of_replicas": 0,
        "refresh_interval": "-1",
    }
    if analyzer == "code":
        settings["analysis"] = CODE_ANALYSIS
    properties = {
        FIELD: {"type": "text", "analyzer": analyzer},
        "name": {"type": "keyword", "ignore_above": 256},
    }
    try:
        return create_scratch(engine, index, "bench-beir", settings, properties, replace=True)
    except Exception as exc:
        if error_status(exc) == 400:
            raise UsageError(
                f"cannot create scratch index {index!r} with analyzer "
                f"{analyzer!r} ({error_reason(exc)})",
                "pass --analyzer standard, or an analyzer this cluster has",
            ) from None
        raise


def drop_scratch_index(engine: Engine, index: str) -> None:
    """Delete the scratch index, only if it carries esqlog's marker."""
    delete_scratch(engine, index)
