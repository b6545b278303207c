"""esqlog eval: native BM25 vs q-log on a query set with known answers, through the engine."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, get_args

import click

from esqlog.atomic import output_target
from esqlog.cli.shared_options import connection_options, open_engine, progress_factory
from esqlog.engine.connection import ConnectionSettings
from esqlog.errors import UsageError
from esqlog.evaluation.trec import Qrels, Run
from esqlog.extras import EVAL_MODULES, require_extra
from esqlog.scoring.rewrite import RewriteMode

if TYPE_CHECKING:
    from esqlog.cli.eval_inputs import EvalInputs
    from esqlog.engine.client import Engine
    from esqlog.evaluation.sweeps import Evaluation

SWEEP = (1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.0)


def parse_qs(text: str | None, sweep: bool, predicted: float | None) -> list[float]:
    """The q values to run: --q list, the full --sweep, or the calibration's q."""
    from esqlog.scoring.qlog import validate_q

    if sweep:
        values = list(SWEEP)
    elif text:
        try:
            values = [validate_q(float(v)) for v in text.split(",") if v.strip()]
        except ValueError as exc:
            raise UsageError(f"bad --q value ({exc})", "pass e.g. --q 1,0.8,0.7") from None
    elif predicted is not None:
        values = [predicted]
    else:
        raise UsageError("no q to evaluate", "pass --q, --sweep or --calibration")
    if predicted is not None and all(abs(v - predicted) > 1e-9 for v in values):
        values.append(predicted)
    return sorted(set(values), reverse=True)


def _check_arguments(
    resamples: int, limit: int | None, plot: Path | None, trec_dir: Path | None
) -> None:
    """Every input checked before the first query is sent: a run that can only fail at its
    end (an unwritable --plot, say) fails at its start instead."""
    if resamples < 1:
        raise UsageError(
            f"--resamples must be at least 1, got {resamples}", "pass e.g. --resamples 10000"
        )
    if limit is not None and limit < 1:
        raise UsageError(f"--limit must be at least 1, got {limit}", "pass e.g. --limit 100")
    if plot is not None:
        output_target(plot, "plot file")
    if trec_dir is not None:
        try:
            trec_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(
                f"cannot create --trec-dir {str(trec_dir)!r} ({exc.strerror})",
                "pass a folder you can write to",
            ) from None


@click.command("eval")
@connection_options
@click.option("--index", required=True, help="Index holding the documents.")
@click.option("--field", "field_name", required=True, help="Text field to search.")
@click.option(
    "--queries",
    "queries_path",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Queries: BEIR queries.jsonl (_id, text), TREC topics, qid<TAB>text lines, "
    "or esqlog JSONL (qid, text, gold: the relevant document id).",
)
@click.option(
    "--qrels",
    "qrels_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Judgments: BEIR qrels .tsv (query-id, corpus-id, score) or TREC qrels "
    "(qid 0 doc grade); graded, several per query. Default: the queries' gold.",
)
@click.option(
    "--metric",
    "metric_names",
    multiple=True,
    help="A metric in ir-measures syntax (repeatable), e.g. --metric nDCG@10 "
    "--metric R@100; also Recall@8K-tokens. Default: NDCG@10, MRR@100, "
    "Recall@10, Recall@100, Recall@8K-tokens.",
)
@click.option(
    "--id-field",
    help="Field whose value is the document id the judgments use (a keyword field; default: _id).",
)
@click.option(
    "--calibration",
    type=click.Path(path_type=Path),
    help="Calibration file; its q is evaluated and marked on the plot.",
)
@click.option("--q", "q_values", help="Comma-separated q values, e.g. 1,0.8,0.7.")
@click.option("--sweep", is_flag=True, help="q from 1.0 down to 0.0 in steps of 0.1.")
@click.option(
    "--mode",
    type=click.Choice(get_args(RewriteMode)),
    default="boost",
    show_default=True,
    help="How q-log queries are sent (same scores either way; "
    "script needs Painless and the stored script).",
)
@click.option(
    "--joins/--no-joins",
    default=False,
    show_default=True,
    help="Add identifier joins (w from the calibration, else 0.5).",
)
@click.option("--limit", type=int, default=None, help="Use only the first N queries.")
@click.option(
    "--resamples",
    type=int,
    default=10_000,
    show_default=True,
    help="Paired-bootstrap resamples for the intervals.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option(
    "--trec-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write TREC run files (one per system) and qrels here.",
)
@click.option(
    "--plot",
    type=click.Path(path_type=Path),  # checked by esqlog.atomic
    help="Write a PNG of NDCG@10 vs q.",
)
def eval_command(
    connection: ConnectionSettings,
    index: str,
    field_name: str,
    queries_path: Path,
    qrels_path: Path | None,
    metric_names: tuple[str, ...],
    id_field: str | None,
    calibration: Path | None,
    q_values: str | None,
    sweep: bool,
    mode: str,
    joins: bool,
    limit: int | None,
    resamples: int,
    as_json: bool,
    trec_dir: Path | None,
    plot: Path | None,
) -> None:
    """Measure native BM25 vs q-log on queries with judgments (ir-measures metrics).

    Reads BEIR and TREC queries and judgments (graded, several relevant documents per
    query). Differences to native BM25 come with 95% paired-bootstrap intervals. Metrics
    are ir-measures' own on the engine's scores, so the --trec-dir runs give the same
    numbers in ir-measures and trec_eval. Skipped input (malformed qrels lines,
    queries without judgments, judged documents the index lacks) is counted on stderr.
    Recall@8K-tokens counts tokens with esqlog.evaluation.metrics.count_tokens (an approximation of
    a BPE tokenizer on code). The index is only read.
    """
    require_extra("eval", "eval", EVAL_MODULES)
    from esqlog.calibration.files import load_calibration
    from esqlog.cli.eval_inputs import check_documents, load_inputs, parse_metrics, show_notes
    from esqlog.evaluation.metrics import METRICS
    from esqlog.evaluation.reports import format_table
    from esqlog.evaluation.sweeps import evaluate_queries, system_label
    from esqlog.statistics.terms import resolve_index_plan

    _check_arguments(resamples, limit, plot, trec_dir)
    measures = parse_metrics(metric_names)
    metrics = list(measures) if measures else list(METRICS)
    record = load_calibration(calibration) if calibration else None
    predicted = record.q if record else None
    qs = parse_qs(q_values, sweep, predicted)
    inputs = load_inputs(queries_path, qrels_path, limit)
    parse_metrics(metric_names, inputs)  # each metric tried on the user's own ids
    queries = inputs.queries
    engine = open_engine(connection)
    info = engine.run(resolve_index_plan(index))
    check_documents(engine, info.name, inputs, id_field)
    show_notes(inputs.notes)
    if mode == "script":
        _check_script_mode(engine)
    from esqlog.wrapper.options import join_weight_for

    weight = join_weight_for(None, [record.join_weight if record else None]) if joins else None
    # a sweep runs a minute or more: a bar on a terminal's stderr, nothing in a pipe
    bars = progress_factory(sys.stderr.isatty(), unit="queries")
    progress = (
        bars("resolve, then search each system", len(queries.ids) * (2 + len(qs))) if bars else None
    )
    result = evaluate_queries(
        engine,
        info.name,
        field_name,
        queries,
        qs,
        info.shards,
        predicted,
        mode=mode,
        join_weight=weight,
        measures=measures,
        id_field=id_field,
        progress=progress,
    )
    head = metrics[0]
    rows, diffs = _compare_systems(result, qs, predicted, metrics, resamples)
    if trec_dir is not None:
        _write_trec_files(trec_dir, queries.qrels, result.native, result.runs)
    if plot is not None:
        _plot(result, qs, predicted, head, index, len(queries.ids), plot)
    best = max(qs, key=lambda q: result.means[system_label(q)][head])
    if as_json:
        click.echo(_json_summary(info.name, field_name, inputs, metrics, result, diffs, best))
        return
    click.echo(
        f"{len(queries.ids)} queries ({inputs.format}) on {info.name}/{field_name} ({engine.label})"
    )
    click.echo(format_table(rows, ["system", *metrics, f"d{head} [95% CI]"]))
    click.echo(
        f"best q in this run by {head}: {best:g}"
        + (f"; calibrated q: {predicted:g}" if predicted is not None else "")
    )


def _compare_systems(
    result: Evaluation,
    qs: list[float],
    predicted: float | None,
    metrics: list[str],
    resamples: int,
) -> tuple[list[dict[str, object]], dict[str, dict[str, object]]]:
    """Each q-log run against native, paired by query, in one pass: the table's rows (means,
    and the first metric's difference with its 95% bootstrap interval) and, for the JSON,
    the differences in every metric."""
    from esqlog.evaluation.metrics import compare
    from esqlog.evaluation.sweeps import system_label

    native = result.per_query["native"]
    head = metrics[0]
    rows: list[dict[str, object]] = [{"system": "native", **result.means["native"]}]
    diffs: dict[str, dict[str, object]] = {}
    for q in qs:
        label = system_label(q)
        comparison = compare(native, result.per_query[label], metrics, n_resamples=resamples)
        diffs[label] = {m: r.__dict__ for m, r in comparison.items()}
        first = comparison[head]
        rows.append(
            {
                "system": label + (" (calibrated)" if q == predicted else ""),
                **result.means[label],
                f"d{head} [95% CI]": f"{first.mean_diff:+.4f} [{first.low:+.4f}, "
                f"{first.high:+.4f}]",
            }
        )
    return rows, diffs


def _plot(
    result: Evaluation,
    qs: list[float],
    predicted: float | None,
    head: str,
    index: str,
    n_queries: int,
    plot: Path,
) -> None:
    """The q sweep's curve of the first metric, the calibrated q marked on it."""
    from esqlog.evaluation.plots import plot_q_sweep
    from esqlog.evaluation.sweeps import system_label

    curve = [(q, result.means[system_label(q)][head]) for q in qs]
    label = f"{n_queries:,} queries"
    marks = {label: predicted} if predicted is not None else {}
    plot_q_sweep({index: {label: curve}}, {index: marks}, plot, metric=head)


def _check_script_mode(engine: Engine) -> None:
    """--mode script needs esqlog's stored script and a cluster that runs it: said before the
    first query, not as a failure of every search."""
    from esqlog.calibration.cluster_store import script_mode_problem_plan

    problem = engine.run(script_mode_problem_plan())
    if problem is not None:
        raise problem


def _json_summary(
    index: str,
    field_name: str,
    inputs: EvalInputs,
    metrics: list[str],
    result: Evaluation,
    diffs: dict[str, dict[str, object]],
    best: float,
) -> str:
    """The --json output: one object with the means, the differences to native in every
    metric, the best q of this run and the calibrated one (a NaN metric is null)."""
    return json.dumps(
        {
            "index": index,
            "field": field_name,
            "queries": len(inputs.queries.ids),
            "format": inputs.format,
            "metrics": metrics,
            "notes": inputs.notes.lines(),
            "means": result.means,
            "diffs": diffs,
            "best_q": best,
            "predicted_q": result.predicted_q,
        },
        default=_json_default,
    )


def _write_trec_files(folder: Path, qrels: Qrels, native: Run, runs: Mapping[float, Run]) -> None:
    """qrels.txt and one run per system; an id TREC files cannot hold is one line."""
    from esqlog.evaluation.trec import write_trec_qrels, write_trec_run

    try:
        write_trec_qrels(qrels, folder / "qrels.txt")
        write_trec_run(native, folder / "native.run", "native")
        for q, run in runs.items():
            write_trec_run(run, folder / f"qlog-q{q:g}.run", f"qlog-q{q:g}")
    except ValueError as exc:
        raise UsageError(f"cannot write TREC files: {exc}", "drop --trec-dir") from None
    except OSError as exc:
        raise UsageError(
            f"cannot write TREC files in {str(folder)!r} ({exc.strerror})",
            "pass a --trec-dir you can write to",
        ) from None


def _json_default(value: object) -> object:
    if isinstance(value, float) and math.isnan(value):
        return None
    return str(value)
