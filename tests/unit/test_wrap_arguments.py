"""``wrap()``'s stats and rerank arguments and the calibration's snapshot file are checked when the
client is wrapped, with a one-line usage error, not at the first search. The clients point at
a closed port: nothing here reaches a node.
"""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path
from typing import Any

import pytest

from esqlog.calibration.files import save_calibration
from esqlog.calibration.record import SCHEMA_VERSION, Calibration
from esqlog.errors import UsageError
from esqlog.statistics.vocabulary import VocabularyScan, save_vocabulary, vocabulary_from_scan
from esqlog.wrapper import wrap


def _client(flavor: str) -> Any:
    """A client object that is never connected (nothing listens on port 9)."""
    if flavor == "opensearch":
        import opensearchpy

        return opensearchpy.OpenSearch(hosts=["http://127.0.0.1:9"])
    import elasticsearch

    return elasticsearch.Elasticsearch("http://127.0.0.1:9")


FLAVORS = pytest.mark.parametrize("flavor", ["opensearch", "elasticsearch"])


RECORD = dict(
    index="code",
    index_uuid="u1",
    field="body",
    q=0.8,
    h_tok=0.3,
    h_tok_low=0.29,
    h_tok_high=0.31,
    h_tok_method="exact",
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
    standard_analysis=True,
    schema=SCHEMA_VERSION,
)


def _linked(tmp_path: Path, index_uuid: str = "u1", field: str = "body") -> Calibration:
    """A calibration whose vocabulary snapshot (of ``index_uuid``/``field``) is on disk."""
    scan = VocabularyScan({"read": 3, "file": 40}, {"read": 5, "file": 70}, 1000)
    vocab = vocabulary_from_scan(
        scan,
        index="code",
        index_uuid=index_uuid,
        field=field,
        doc_count=1000,
        sum_ttf=50_000,
        live_docs=1000,
        created_at="2025-01-01T00:00:00+00:00",
    )
    path, digest = save_vocabulary(vocab, tmp_path / f"{index_uuid}-{field}.vocab.npz")
    return dataclasses.replace(
        Calibration.from_json(RECORD),
        vocabulary=str(path.resolve()),
        vocabulary_sha256=digest,
        vocabulary_terms=len(vocab),
    )


@FLAVORS
def test_stats_and_rerank_in_arguments_are_checked(flavor: str) -> None:
    """A wrong argument fails at wrap(), with a one-line usage error, not at search time."""
    client = _client(flavor)
    bare = Calibration.from_json(RECORD)
    with pytest.raises(UsageError, match="no vocabulary snapshot"):
        wrap(client, bare, stats="snapshot")
    with pytest.raises(UsageError, match="unknown stats source"):
        wrap(client, bare, stats="fresh")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="unknown rerank_in"):
        wrap(client, bare, mode="rerank", rerank_in="server")  # type: ignore[arg-type]
    for fraction in (-0.5, 1.01):
        with pytest.raises(UsageError, match="script_df_fraction"):
            wrap(client, bare, mode="script", script_df_fraction=fraction)
    for stats in ("auto", "live"):  # no snapshot needed for these
        assert wrap(client, bare, stats=stats).esqlog_core.snapshots.in_use == {}


@FLAVORS
def test_snapshot_files_are_checked_and_live_ignores_them(flavor: str, tmp_path: Path) -> None:
    """Only the snapshot taken of this index and field, byte for byte, is ever used; with
    stats='live' a calibration's snapshot is not even read."""
    client = _client(flavor)
    cal = _linked(tmp_path)
    for stats in ("auto", "snapshot"):
        core = wrap(client, cal, stats=stats).esqlog_core
        vocab = core.snapshot_for("code", "body")
        assert vocab is not None and vocab.df_of(["read", "file", "nope"]) == {
            "read": 3,
            "file": 40,
            "nope": 0,
        }
    assert wrap(client, cal, stats="live").esqlog_core.snapshots.in_use == {}
    # a snapshot of another index or field, a missing file, a file changed since
    for wrong in (_linked(tmp_path, index_uuid="u2"), _linked(tmp_path, field="title")):
        relinked = dataclasses.replace(
            cal, vocabulary=wrong.vocabulary, vocabulary_sha256=wrong.vocabulary_sha256
        )
        with pytest.raises(UsageError, match="belongs to another index or field"):
            wrap(client, relinked)
    missing = dataclasses.replace(cal, vocabulary=str(tmp_path / "gone.vocab.npz"))
    with pytest.raises(UsageError, match="does not exist"):
        wrap(client, missing)
    assert wrap(client, missing, stats="live").esqlog_core.snapshots.in_use == {}
    path = Path(str(cal.vocabulary))
    path.write_bytes(path.read_bytes() + b"\0")
    assert hashlib.sha256(path.read_bytes()).hexdigest() != cal.vocabulary_sha256
    with pytest.raises(UsageError, match="checksum differs"):
        wrap(client, cal, stats="snapshot")
    # a calibration file names its snapshot relative to itself
    fresh = _linked(tmp_path)  # the same snapshot written again
    relative = dataclasses.replace(fresh, vocabulary=Path(str(fresh.vocabulary)).name)
    saved = save_calibration(relative, tmp_path / "cal.json")
    vocab = wrap(client, str(saved), stats="snapshot").esqlog_core.snapshot_for("code", "body")
    assert vocab is not None and vocab.df_of(["file"]) == {"file": 40}
