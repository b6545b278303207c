"""Reading what ``eval`` and ``bench-beir`` measure against: queries, judgments, metrics.

Shared by both commands so a BEIR or TREC file means the same to each, and every problem in
the user's files is said the same way: one ``warning:`` line per kind of problem, with its
count and first example; only input with nothing usable left is an error (exit 2).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import click

from esqlog.engine.client import Engine
from esqlog.errors import UsageError
from esqlog.evaluation.judgments import Notes, judged_queries, read_qrels, read_queries
from esqlog.evaluation.sweeps import QuerySet


@dataclass(frozen=True)
class EvalInputs:
    """The queries that can be evaluated, with their judgments, and what was skipped."""

    queries: QuerySet
    notes: Notes
    format: str


def load_inputs(queries_path: Path, qrels_path: Path | None, limit: int | None) -> EvalInputs:
    """Queries (any supported format) joined with their judgments.

    Judgments come from ``qrels_path`` when given, else from the queries file's own
    ``gold`` fields (esqlog's JSONL); ``limit`` keeps the first N evaluable queries.
    """
    notes = Notes()
    queries = read_queries(queries_path, notes)
    if qrels_path is not None:
        qrels = read_qrels(qrels_path, notes)
    elif queries.gold is not None:
        qrels = queries.gold
    else:
        raise UsageError(
            f"{queries_path} ({queries.format}) carries no judgments",
            "pass --qrels FILE (BEIR qrels .tsv or TREC qrels)",
        )
    keep, judged = judged_queries(queries, qrels, notes)
    if limit is not None:
        keep = keep[:limit]
    ids = [queries.ids[i] for i in keep]
    return EvalInputs(
        QuerySet(
            ids, [queries.texts[i] for i in keep], judgments={qid: judged[qid] for qid in ids}
        ),
        notes,
        queries.format,
    )


def check_documents(engine: Engine, index: str, inputs: EvalInputs, id_field: str | None) -> None:
    """Count the judged relevant documents the index does not hold (one note)."""
    from esqlog.evaluation.sweeps import id_field_plan_check, missing_documents

    if id_field is not None:
        id_field_plan_check(engine, index, id_field)
    relevant = [
        d for judged in inputs.queries.qrels.values() for d, grade in judged.items() if grade > 0
    ]
    missing = missing_documents(engine, index, relevant, id_field)
    if missing:
        where = f"field {id_field!r}" if id_field else "_id"
        inputs.notes.add(
            f"of {len(set(relevant)):,} judged relevant documents are not in "
            f"the index (by {where}; they count as relevant but unretrieved)",
            missing[0],
            len(missing),
        )


def show_notes(notes: Notes) -> None:
    """Each kind of problem on one ``warning:`` line on stderr."""
    from esqlog.errors import redact

    for line in notes.lines():  # ids come from the user's files: redact as errors are
        click.echo(redact(f"warning: {line}"), err=True)


def parse_metrics(names: Sequence[str], inputs: EvalInputs | None = None) -> dict[str, str] | None:
    """``--metric`` values -> ir-measures measures (None: esqlog's default set), each
    tried on the first query's judgments when ``inputs`` are given."""
    from esqlog.evaluation.metrics import metric_measures

    if not names:
        return None
    sample = None
    if inputs is not None and inputs.queries.ids:
        first = inputs.queries.ids[0]
        sample = {first: inputs.queries.qrels[first]}
    try:
        return metric_measures(names, sample)
    except ValueError as exc:
        raise UsageError(
            f"{exc} (--metric)",
            "use ir-measures names, e.g. --metric nDCG@10 --metric R@100 --metric RR@10",
        ) from None
