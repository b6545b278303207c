"""esqlog eval: native BM25 vs q-log on a query set with known answers, through the engine."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import get_args

import click

from esqlog.atomic import output_target
from esqlog.cli.options import connection_options, open_engine
from esqlog.cli.query import shown
from esqlog.connection import ConnectionSettings
from esqlog.errors import UsageError
from esqlog.extras import EVAL_MODULES, require_extra
from esqlog.rewrite import RewriteMode

SWEEP = (1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.0)


def parse_qs(text: str | None, sweep: bool, predicted: float | None) -> list[float]:
    """The q values to run: --q list, the full --sweep, or the calibration's q."""
    from esqlog.qlog import validate_q

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


@click.command("eval")
@connection_options
@click.option("--index", required=True, help="Index holding the documents.")
@click.option("--field", "field_name", required=True, help="Text field to search.")
@click.option("--queries", "queries_path", required=True,
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="JSONL with qid, text, gold (the id of the one relevant document).")
@click.option("--calibration", type=click.Path(path_type=Path),
              help="Calibration file; its q is evaluated and marked on the plot.")
@click.option("--q", "q_values", help="Comma-separated q values, e.g. 1,0.8,0.7.")
@click.option("--sweep", is_flag=True, help="q from 1.0 down to 0.0 in steps of 0.1.")
@click.option("--mode", type=click.Choice(get_args(RewriteMode)), default="boost",
              show_default=True, help="How q-log queries are sent (same scores either way; "
              "script needs Painless and the stored script).")
@click.option("--joins/--no-joins", default=False, show_default=True,
              help="Add identifier joins (w from the calibration, else 0.5).")
@click.option("--limit", type=int, default=None, help="Use only the first N queries.")
@click.option("--resamples", type=int, default=10_000, show_default=True,
              help="Paired-bootstrap resamples for the intervals.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--trec-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Write TREC run files (one per system) and qrels here.")
@click.option("--plot", type=click.Path(path_type=Path),  # checked by esqlog.atomic
              help="Write a PNG of NDCG@10 vs q.")
def eval_command(
    connection: ConnectionSettings, index: str, field_name: str, queries_path: Path,
    calibration: Path | None, q_values: str | None, sweep: bool, mode: str, joins: bool,
    limit: int | None,
    resamples: int, as_json: bool, trec_dir: Path | None, plot: Path | None,
) -> None:
    """Measure NDCG@10, MRR@100, Recall@10/100 and Recall@8K-tokens, native vs q-log.

    Differences to native BM25 come with 95% paired-bootstrap intervals. Tokens for
    Recall@8K-tokens are counted by esqlog.evaluate.count_tokens (letters runs, digit runs
    and punctuation characters; an approximation of a BPE tokenizer on code).
    """
    require_extra("eval", "eval", EVAL_MODULES)
    from esqlog.calibrate import load_calibration
    from esqlog.corpus import load_queries
    from esqlog.evaluate import (
        METRICS,
        compare,
        format_table,
        write_trec_qrels,
        write_trec_run,
    )
    from esqlog.experiment import QuerySet, evaluate_queries, system_label
    from esqlog.plots import plot_q_sweep
    from esqlog.stats import resolve_index_plan

    # Every input checked before the first query is sent: a run that can only fail at its
    # end (an unwritable --plot, say) fails at its start instead.
    if resamples < 1:
        raise UsageError(f"--resamples must be at least 1, got {resamples}",
                         "pass e.g. --resamples 10000")
    if limit is not None and limit < 1:
        raise UsageError(f"--limit must be at least 1, got {limit}", "pass e.g. --limit 100")
    if plot is not None:
        output_target(plot, "plot file")
    if trec_dir is not None:
        try:
            trec_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"cannot create --trec-dir {str(trec_dir)!r} ({exc.strerror})",
                             "pass a folder you can write to") from None
    record = load_calibration(calibration) if calibration else None
    predicted = record.q if record else None
    qs = parse_qs(q_values, sweep, predicted)
    try:
        loaded = load_queries(queries_path)
    except (KeyError, ValueError, TypeError, AttributeError, RecursionError, OSError) as exc:
        raise UsageError(f"{queries_path} is not a JSONL of qid/text/gold records "
                         f"({type(exc).__name__}: {shown(str(exc))})",
                         "one JSON object per line with qid, text and gold") from None
    if limit is not None:
        loaded = loaded[:limit]
    if not loaded:
        raise UsageError(f"{queries_path} holds no queries", "pass a non-empty JSONL file")
    queries = QuerySet([q.qid for q in loaded], [q.text for q in loaded],
                       [q.gold for q in loaded])
    engine = open_engine(connection)
    info = engine.run(resolve_index_plan(index))
    if mode == "script":
        from esqlog.calibrate import script_mode_problem_plan

        problem = engine.run(script_mode_problem_plan())
        if problem is not None:
            raise problem
    from esqlog.wrapper.options import join_weight_for

    weight = join_weight_for(None, [record.join_weight if record else None]) if joins else None
    result = evaluate_queries(engine, info.name, field_name, queries, qs, info.shards, predicted,
                              mode=mode, join_weight=weight)
    native = result.per_query["native"]
    rows = [{"system": "native", **result.means["native"]}]
    diffs: dict[str, dict[str, object]] = {}
    for q in qs:
        label = system_label(q)
        comparison = compare(native, result.per_query[label], n_resamples=resamples)
        diffs[label] = {m: r.__dict__ for m, r in comparison.items()}
        ndcg = comparison["NDCG@10"]
        rows.append({"system": label + (" (calibrated)" if q == predicted else ""),
                     **result.means[label],
                     "dNDCG@10 [95% CI]": f"{ndcg.mean_diff:+.4f} [{ndcg.low:+.4f}, "
                                          f"{ndcg.high:+.4f}]"})
    if trec_dir is not None:
        write_trec_qrels(queries.qrels, trec_dir / "qrels.txt")
        write_trec_run(result.native, trec_dir / "native.run", "native")
        for q, run in result.runs.items():
            write_trec_run(run, trec_dir / f"qlog-q{q:g}.run", f"qlog-q{q:g}")
    if plot is not None:
        curve = [(q, result.means[system_label(q)]["NDCG@10"]) for q in qs]
        label = f"{len(loaded):,} queries"
        marks = {label: predicted} if predicted is not None else {}
        plot_q_sweep({index: {label: curve}}, {index: marks}, plot)
    best = max(qs, key=lambda q: result.means[system_label(q)]["NDCG@10"])
    if as_json:
        click.echo(json.dumps({"index": info.name, "field": field_name,
                               "queries": len(loaded), "means": result.means, "diffs": diffs,
                               "best_q": best, "predicted_q": predicted}, default=_json_default))
        return
    click.echo(f"{len(loaded)} queries on {info.name}/{field_name} ({engine.label})")
    click.echo(format_table(rows, ["system", *METRICS, "dNDCG@10 [95% CI]"]))
    click.echo(f"best q in this run: {best:g}" + (f"; calibrated q: {predicted:g}"
                                                   if predicted is not None else ""))


def _json_default(value: object) -> object:
    if isinstance(value, float) and math.isnan(value):
        return None
    return str(value)
