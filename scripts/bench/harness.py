"""What the benchmark scripts share: the common arguments, clients, corpora, percentiles, output.

Why one module: each script used to define its own ``--url``, build its own client and
append its own JSON lines, and six of them imported each other through ``sys.path``
edits. Here each of these is defined once; the scripts are modules of the ``scripts.bench``
package and run from the checkout's root as ``python -m scripts.bench.NAME``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import uuid
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from esqlog.calibration.record import Calibration
from esqlog.engine.client import Engine
from esqlog.engine.connection import ConnectionSettings, connect
from esqlog.engine.paths import index_path
from esqlog.engine.steps import Request
from esqlog.errors import redact
from esqlog.evaluation.corpus import load_queries, read_jsonl
from esqlog.identifiers.split_stats import IdentifierStats
from esqlog.statistics.vocabulary import Vocabulary

#: the shared OpenSearch node the benchmarks run against unless told otherwise
DEFAULT_URL = "http://127.0.0.1:19200"

#: where scripts/corpora/build.py writes the corpora (one folder per corpus)
CORPORA = Path("data/corpora")


def add_url(
    parser: argparse.ArgumentParser,
    default: str | None = DEFAULT_URL,
    *,
    required: bool = False,
    help: str | None = None,
) -> None:
    """``--url``: the cluster; credentials may be in it (printed only through :func:`shown`)."""
    if required:
        parser.add_argument("--url", required=True, help=help)
    else:
        parser.add_argument("--url", default=default, help=help)


def add_corpus_args(
    parser: argparse.ArgumentParser,
    *,
    index: str | None = None,
    calibration: bool = True,
    queries: bool = True,
) -> None:
    """``--index``, ``--calibration`` and ``--queries`` as the query-time benchmarks take them."""
    if index is None:
        parser.add_argument("--index", required=True)
    else:
        parser.add_argument("--index", default=index)
    if calibration:
        parser.add_argument("--calibration", type=Path, required=True)
    if queries:
        parser.add_argument("--queries", type=Path, required=True)


def add_rounds_args(parser: argparse.ArgumentParser, n: int = 300) -> None:
    """``--n`` texts, ``--rounds`` passes over them (the first untimed) and the ``--seed`` of
    their order, as the scripts that interleave bodies over one connection take them."""
    parser.add_argument("--n", type=int, default=n)
    parser.add_argument("--rounds", type=int, default=4, help="timed passes + 1 untimed")
    parser.add_argument("--seed", type=int, default=1)


def add_out(
    parser: argparse.ArgumentParser, default: str | Path | None, *, help: str | None = None
) -> None:
    """``--out``: the JSONL file each run appends its result lines to."""
    parser.add_argument(
        "--out", type=Path, default=None if default is None else Path(default), help=help
    )


def shown(url: str) -> str:
    """The URL as it may be printed: any ``user:password@`` replaced by ``***@``."""
    return redact(url)


def engine_at(url: str, timeout: float = 30.0) -> Engine:
    """esqlog's own client of the cluster at ``url`` (the engine detected)."""
    return connect(ConnectionSettings(url, timeout=timeout))


def raw_client(url: str, engine: str = "opensearch", timeout: float = 60.0) -> Any:
    """The engine's own Python client (OpenSearch unless ``engine`` is elasticsearch)."""
    if engine == "elasticsearch":
        from elasticsearch import Elasticsearch

        return Elasticsearch(url, request_timeout=timeout)
    from opensearchpy import OpenSearch

    return OpenSearch(hosts=[url], timeout=timeout)


def corpus_docs(folder: str | Path) -> Iterable[dict[str, Any]]:
    """The documents of a corpus folder built by scripts/corpora/build.py (docs.jsonl)."""
    return read_jsonl(Path(folder) / "docs.jsonl")


def corpus_queries(folder: str | Path, name: str = "queries.jsonl") -> list[Any]:
    """The queries of a corpus folder (queries.jsonl, or e.g. queries_noname.jsonl)."""
    return load_queries(Path(folder) / name)


def identifier_inputs(
    calibration: str | Path,
) -> tuple[Calibration, IdentifierStats, Vocabulary, int]:
    """A calibration, its identifier statistics, its vocabulary snapshot, and the clause
    budget of one request (each shard's own query on several shards): what the scripts that
    plan identifiers queries outside the wrapper start from (node_plan_ab, group_parts,
    group_repeats, nodes_ab)."""
    from esqlog.calibration.files import load_calibration
    from esqlog.identifiers.files import load_for_calibration
    from esqlog.identifiers.settings import IdentifierSettings
    from esqlog.wrapper.snapshots import load_snapshots

    cal = load_calibration(calibration)
    if cal.vocabulary_sha256 is None:
        sys.exit(
            f"{calibration}: no vocabulary snapshot; calibrate with --vocabulary --identifiers"
        )
    stats = load_for_calibration(cal.vocabulary_path(), cal.vocabulary_sha256)
    vocab = load_snapshots([cal], "snapshot")[(cal.index, cal.field)]
    return cal, stats, vocab, IdentifierSettings().budget_for(stats.shards, True)


def percentile(values: list[float], pct: float) -> float:
    """The ``pct``-th percentile with linear interpolation between ranks (numpy's default).

    Why not numpy: the figures published so far were computed with this very rule on
    plain lists; one definition keeps every script's p95 the same number.
    """
    ordered = sorted(values)
    k = (len(ordered) - 1) * pct / 100.0
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def append_jsonl(path: str | Path, *rows: Mapping[str, Any]) -> None:
    """Append one JSON line per row to ``path`` (its folder created): results accumulate."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")


def read_rows(*paths: str | Path) -> list[dict[str, Any]]:
    """Every JSON line of the given result files, in order (blank lines skipped)."""
    return [
        json.loads(line)
        for path in paths
        for line in Path(path).read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]


@contextmanager
def indexed_repo(
    engine: Engine, url: str, path: str, prefix: str
) -> Iterator[tuple[str, Calibration, str]]:
    """(index, calibration, field) of ``path`` indexed by ``esqlog index --calibrate`` into a
    throwaway index named ``prefix-<random>``, deleted afterwards; an indexing failure
    prints its output and ends the script with status 1."""
    from click.testing import CliRunner

    from esqlog.cli import main as cli
    from esqlog.cli.query import load_for_field

    index = f"{prefix}-{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory() as tmp:
        calibration = Path(tmp) / "cal.json"
        result = CliRunner().invoke(
            cli, ["index", path, "--index", index, "--url", url, "--calibrate", str(calibration)]
        )
        if result.exit_code != 0:
            print(result.output, file=sys.stderr)
            raise SystemExit(1)
        try:
            cal, field = load_for_field(calibration, None)
            yield index, cal, field
        finally:
            engine.perform(Request("DELETE", index_path(index)))
