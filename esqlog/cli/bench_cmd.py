"""esqlog bench-beir: a BEIR folder in, native vs every esqlog mode out, in one command."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from esqlog.cli.eval_inputs import EvalInputs
from esqlog.cli.shared_options import connection_options, open_engine, progress_factory
from esqlog.engine.client import Engine
from esqlog.engine.connection import ConnectionSettings
from esqlog.engine.paths import check_index_name
from esqlog.errors import UsageError


@click.command("bench-beir")
@connection_options
@click.argument("folder", type=click.Path(path_type=Path))
@click.option("--split", default="test", show_default=True, help="Which qrels/<split>.tsv.")
@click.option("--index", help="Scratch index to create (default: esqlog-bench-<folder name>).")
@click.option(
    "--analyzer",
    default="standard",
    show_default=True,
    help="Analyzer of the scratch index: standard, code (splits identifiers; needs "
    "analysis-common) or any analyzer the cluster has built in.",
)
@click.option("--shards", type=click.IntRange(1, 64), default=1, show_default=True)
@click.option(
    "--metric",
    "metric_names",
    multiple=True,
    help="Metric in ir-measures syntax (repeatable). Default: nDCG@10, RR@100, R@10, R@100.",
)
@click.option(
    "--limit", type=click.IntRange(min=1), default=None, help="Only the first N judged queries."
)
@click.option(
    "--resamples",
    type=click.IntRange(min=1),
    default=10_000,
    show_default=True,
    help="Paired-bootstrap resamples for the intervals.",
)
@click.option(
    "--out-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where the calibration, TREC runs, results.json and plot go (default: ./<index>).",
)
@click.option(
    "--keep-index/--drop-index",
    default=False,
    show_default=True,
    help="Keep the scratch index afterwards (to search it, or re-run eval).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def bench_command(
    connection: ConnectionSettings,
    folder: Path,
    split: str,
    index: str | None,
    analyzer: str,
    shards: int,
    metric_names: tuple[str, ...],
    limit: int | None,
    resamples: int,
    out_dir: Path | None,
    keep_index: bool,
    as_json: bool,
) -> None:
    """Benchmark native BM25 against every esqlog mode on a BEIR folder.

    Indexes FOLDER's corpus.jsonl (title and text in one field) into a scratch index that
    esqlog creates and names (the only index it writes to; dropped afterwards unless
    --keep-index), calibrates it (--vocabulary --identifiers), runs every judged query of
    qrels/<split>.tsv through native BM25 and the boost, boost+joins, script (when the
    cluster has Painless and esqlog's stored script), rerank and identifiers modes, one
    search at a time through the wrapper, and reports each metric with a 95%
    paired-bootstrap interval of the gain over native, the median latency, TREC runs and
    a plot.
    """
    from esqlog.cli.eval_inputs import load_inputs, parse_metrics, show_notes
    from esqlog.evaluation.beir import (
        create_scratch_index,
        drop_scratch_index,
        locate,
        scratch_name,
    )
    from esqlog.evaluation.metrics import TOKEN_METRIC

    beir = locate(folder, split)
    measures = parse_metrics(metric_names) or parse_metrics(_default_metrics())
    assert measures is not None
    if TOKEN_METRIC in measures.values():
        raise UsageError(
            f"{TOKEN_METRIC} is not available in bench-beir",
            "use it with esqlog eval, or pick ir-measures metrics",
        )
    index = index or scratch_name(folder)
    check_index_name(index)  # before the folder named after it is created
    out = out_dir or Path(index)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(
            f"cannot create --out-dir {str(out)!r} ({exc.strerror})",
            "pass a folder you can write to",
        ) from None
    inputs = load_inputs(beir.queries, beir.qrels, limit)
    parse_metrics(metric_names, inputs)  # each metric tried on the user's own ids
    engine = open_engine(connection)

    def say(text: str) -> None:  # with --json, stdout carries the JSON alone
        click.echo(text, err=as_json)

    say(
        f"esqlog writes only to its scratch index {index!r} ({engine.label}); "
        + ("it is kept afterwards" if keep_index else "it is dropped at the end")
    )
    created = False
    try:
        replaced = create_scratch_index(engine, index, analyzer, shards)
        created = True
        if replaced:
            say(f"replaced esqlog's own scratch index {index!r} from an earlier run")
        report = _run(engine, index, beir.corpus, inputs, measures, resamples, out, say)
    finally:
        if created and not keep_index:
            drop_scratch_index(engine, index)
    show_notes(inputs.notes)
    if as_json:
        click.echo(json.dumps(report, default=_finite))


def _default_metrics() -> tuple[str, ...]:
    from esqlog.evaluation.bench import DEFAULT_METRICS

    return DEFAULT_METRICS


def _run(
    engine: Engine,
    index: str,
    corpus: Path,
    inputs: EvalInputs,
    measures: dict[str, str],
    resamples: int,
    out: Path,
    say: Callable[[str], None],
) -> dict[str, Any]:
    """Index, calibrate, benchmark, write files; returns the JSON report."""
    from esqlog.calibration.cluster_store import script_mode_problem_plan
    from esqlog.cli.eval_inputs import check_documents
    from esqlog.evaluation.beir import FIELD, read_corpus
    from esqlog.evaluation.bench import benchmark
    from esqlog.evaluation.corpus import bulk_index_docs
    from esqlog.evaluation.judgments import Notes
    from esqlog.evaluation.plots import plot_systems
    from esqlog.evaluation.reports import format_table
    from esqlog.evaluation.systems import SYSTEMS, Target
    from esqlog.evaluation.trec import write_trec_qrels, write_trec_run
    from esqlog.identifiers.calibrate import calibrate_identifiers, identifier_report

    bars = progress_factory(sys.stderr.isatty())
    corpus_notes = Notes()
    try:
        count = bulk_index_docs(engine, index, read_corpus(corpus, corpus_notes), FIELD)
    except RuntimeError as exc:  # a document the engine refused
        raise UsageError(
            f"indexing {str(corpus)!r} failed: {exc}",
            "check the corpus, or pass another --analyzer",
        ) from None
    inputs.notes.extend(corpus_notes)
    say(f"indexed {count:,} documents of {corpus.name} into {index!r}")
    check_documents(engine, index, inputs, None)
    found = calibrate_identifiers(engine, index, FIELD, progress_factory=bars)
    record, _note = identifier_report(found, out / "calibration.json")
    say(
        f"calibrated: h_tok {record.h_tok:.4f}, q {record.q:.3f} "
        f"(identifiers: q {found.stats.q:.3f}, {found.stats.split_share:.0%} of tokens split)"
    )
    problem = engine.run(script_mode_problem_plan())
    systems = [s for s in SYSTEMS if s != "script" or problem is None]
    target = Target(engine, index, FIELD, out / "calibration.json", size=100, shards=record.shards)
    queries = inputs.queries
    progress = (lambda name: bars(name, len(queries.ids))) if bars else None
    result = benchmark(target, queries, measures, systems, resamples, progress)
    if problem is not None:
        result.skipped["script"] = problem.problem
        say(f"script mode skipped: {problem.problem}")
    metrics = list(measures)
    write_trec_qrels(queries.qrels, out / "qrels.txt")
    for name, run in result.runs.items():
        tag = name.replace("+", "-")
        write_trec_run(run.run, out / f"{tag}.run", tag)
    plot = plot_systems(
        result.plot_points(metrics),
        out / "bench.png",
        f"{corpus.parent.name}: {len(queries.ids):,} queries, {count:,} documents ({engine.label})",
    )
    report = {
        "index": index,
        "documents": count,
        "queries": len(queries.ids),
        "q": record.q,
        "h_tok": record.h_tok,
        "metrics": metrics,
        "notes": inputs.notes.lines(),
        **result.to_json(),
        "out_dir": str(out),
    }
    (out / "results.json").write_text(json.dumps(report, indent=2, default=_finite))
    say(
        format_table(
            result.rows(metrics), ["system", *metrics, f"d{metrics[0]} [95% CI]", "median ms"]
        )
    )
    say(f"wrote {out / 'results.json'}, {plot}, TREC runs and qrels.txt in {out}")
    return report


def _finite(value: object) -> object:
    return None if isinstance(value, float) and math.isnan(value) else str(value)
