"""Shared by several test modules (from tests/test_eval_formats.py):
no test module imports another."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

BEIR = Path(__file__).resolve().parents[1] / "data" / "beir-java"


QUERIES = BEIR / "queries.jsonl"


def beir_docs() -> list[dict[str, Any]]:
    with gzip.open(BEIR / "corpus.jsonl.gz", "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]
