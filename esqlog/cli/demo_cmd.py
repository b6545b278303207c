"""esqlog demo: index the bundled Go sample, calibrate, and show what q-log IDF and the
identifiers mode change."""

from __future__ import annotations

import tempfile
import time
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import click

from esqlog.cli.shared_options import connection_options, open_engine
from esqlog.engine.connection import ConnectionSettings
from esqlog.extras import EVAL_MODULES, require_extra

if TYPE_CHECKING:
    from esqlog.engine.client import Engine
    from esqlog.evaluation.metrics import PerQuery
    from esqlog.evaluation.sweeps import QuerySet

DEMO_INDEX = "esqlog-demo-go"


def sample_path(name: str) -> Path:
    """A file of the bundled sample (real Go standard-library functions)."""
    return Path(str(resources.files("esqlog") / "data" / name))


@click.command("demo")
@connection_options
@click.option(
    "--index",
    default=DEMO_INDEX,
    show_default=True,
    help="Scratch index the demo creates (replaced when an earlier demo made it; any "
    "other existing index is refused).",
)
@click.option(
    "--examples",
    type=int,
    default=3,
    show_default=True,
    help="Example queries to show whose answer moved into the top 3.",
)
def demo_command(connection: ConnectionSettings, index: str, examples: int) -> None:
    """Index 5,000 real Go functions into a scratch index, calibrate, compare with BM25.

    Creates only the scratch index named by --index, and replaces it only when an earlier
    esqlog run created it (its mapping carries esqlog's marker); any other index is
    refused. Needs the eval extra (pip install 'esqlog[eval]'); says so in one line
    without it.
    """
    require_extra("demo", "eval", EVAL_MODULES)
    from esqlog.calibration.calibrate import calibrate
    from esqlog.cli.report import format_report
    from esqlog.evaluation.corpus import (
        bulk_index_docs,
        create_corpus_index,
        load_queries,
        read_jsonl,
    )
    from esqlog.evaluation.metrics import METRICS, compare, mean_metrics
    from esqlog.evaluation.reports import format_table
    from esqlog.evaluation.sweeps import QuerySet, evaluate_queries, system_label

    started = time.perf_counter()
    engine = open_engine(connection)
    click.echo(f"engine: {engine.label}")
    docs = list(read_jsonl(sample_path("sample_go_docs.jsonl.gz")))
    texts = {d["id"]: d for d in docs}
    create_corpus_index(engine, index, replace=True, command="demo")
    bulk_index_docs(engine, index, docs)
    click.echo(f"indexed {len(docs):,} Go functions into {index} (standard analyzer)\n")
    record = calibrate(engine, index, "body")
    click.echo(format_report(record) + "\n")
    loaded = load_queries(sample_path("sample_go_queries.jsonl"))
    queries = QuerySet([q.qid for q in loaded], [q.text for q in loaded], [q.gold for q in loaded])
    result = evaluate_queries(engine, index, "body", queries, [record.q], predicted_q=record.q)
    label = system_label(record.q)
    diff = compare(result.per_query["native"], result.per_query[label])["NDCG@10"]
    rows = [
        {"system": "native BM25", **result.means["native"]},
        {"system": f"q-log (q={record.q:g})", **result.means[label]},
    ]
    identifiers = _identifiers_mode(engine, index, queries, {d["id"]: d["text"] for d in docs})
    rows.append({"system": "identifiers mode", **mean_metrics(identifiers)})
    click.echo(f"{len(loaded):,} queries (first sentence of each function's doc comment):")
    click.echo(format_table(rows, ["system", *METRICS]))
    click.echo(
        f"NDCG@10 change {diff.mean_diff:+.4f} "
        f"(95% CI {diff.low:+.4f} to {diff.high:+.4f}) with q-log"
    )
    words = compare(result.per_query["native"], identifiers)["NDCG@10"]
    click.echo(
        f"NDCG@10 change {words.mean_diff:+.4f} "
        f"(95% CI {words.low:+.4f} to {words.high:+.4f}) with the identifiers mode "
        "(query words also match inside identifiers)\n"
    )
    shown = 0
    for qid, text, gold in zip(queries.ids, queries.texts, [q.gold for q in loaded], strict=True):
        before = _rank(result.native[qid], gold)
        after = _rank(result.runs[record.q][qid], gold)
        if after is not None and after <= 3 and (before is None or before > 3):
            shown += 1
            name = texts[gold].get("name", gold)
            click.echo(f"  query: {text[:90]}")
            click.echo(
                f"    answer {name}: rank {before or '>100'} with BM25 -> rank {after} with q-log"
            )
            if shown >= examples:
                break
    click.echo(f"\ndone in {time.perf_counter() - started:.0f} s")


def _identifiers_mode(
    engine: Engine, index: str, queries: QuerySet, texts: dict[str, str]
) -> PerQuery:
    """The identifiers mode's per-query metrics, from a calibration with its statistics
    (``calibrate --vocabulary --identifiers``) kept in a temporary folder of the demo's."""
    from esqlog.evaluation.metrics import doc_token_counts, per_query_metrics
    from esqlog.evaluation.systems import Target, run_system, searcher
    from esqlog.identifiers.calibrate import calibrate_identifiers, save_identifier_calibration

    with tempfile.TemporaryDirectory(prefix="esqlog-demo-") as folder:
        found = calibrate_identifiers(engine, index, "body")
        save_identifier_calibration(found, Path(folder) / "demo.qlog.json")
        target = Target(engine, index, "body", Path(folder) / "demo.qlog.json")
        run = run_system("identifiers", searcher(target, "identifiers"), queries.ids, queries.texts)
    return per_query_metrics(run.run, queries.qrels, doc_token_counts(texts))


def _rank(hits: list[tuple[str, float]], gold: str) -> int | None:
    for i, (doc_id, _) in enumerate(hits, start=1):
        if doc_id == gold:
            return i
    return None
