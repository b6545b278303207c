"""Shared by several test modules (from tests/test_adversarial_inputs.py):
no test module imports another."""

from __future__ import annotations

import socket
from typing import Any

from esqlog.calibration.record import SCHEMA_VERSION
from esqlog.statistics.vocabulary import VocabularyScan, vocabulary_from_scan

RECORD: dict[str, Any] = dict(
    index="code",
    index_uuid="u1",
    field="body",
    q=0.8,
    h_tok=0.3,
    h_tok_low=0.29,
    h_tok_high=0.31,
    h_tok_method="sample",
    doc_count=1000,
    live_docs=1000,
    sum_ttf=50_000,
    avgdl=50.0,
    shards=1,
    analyzer="standard",
    splits_identifiers=False,
    predictor="paper-linear",
    predictor_version="1",
    engine="opensearch",
    engine_version="3.6.0",
    created_at="2025-01-01T00:00:00+00:00",
    schema=SCHEMA_VERSION,
)


def unused_url() -> str:
    """A URL nothing listens on: a run that connects fails with exit 3, not 2."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


def make_vocab(df: dict[str, int]) -> Any:
    return vocabulary_from_scan(
        VocabularyScan(df, df, len(df)),
        index="code",
        index_uuid="u1",
        field="body",
        doc_count=9,
        sum_ttf=99,
        live_docs=9,
        created_at="2025-01-01T00:00:00+00:00",
    )


#: A sentinel password given in URLs: it must never show up in any output.
PASSWORD = "Pw-SENTINEL-93817"
