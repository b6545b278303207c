"""esqlog calibrate: one read-only pass over a field that yields its q."""

from __future__ import annotations

import json
import sys
from contextlib import ExitStack
from typing import Any

import click

from esqlog.atomic import output_target
from esqlog.calibration.calibrate import (
    CalibrationTimings,
    calibrate,
    calibrate_with_vocabulary,
    check_sample,
)
from esqlog.calibration.cluster_store import install_script_plan, store_in_cluster_plan
from esqlog.calibration.files import save_calibration, save_with_vocabulary
from esqlog.calibration.record import Calibration
from esqlog.cli.report import format_report
from esqlog.cli.shared_options import connection_options, open_engine, progress_factory
from esqlog.engine.connection import ConnectionSettings
from esqlog.engine.shard_scan import DEFAULT_PARALLEL, check_parallel
from esqlog.errors import UsageError
from esqlog.identifiers.dask_scan import (
    DEFAULT_CONNECT_TIMEOUT,
    dask_scheduler,
    require_distributed,
)
from esqlog.identifiers.memory import MemoryLimit, parse_memory_limit
from esqlog.scoring.qlog import PREDICTORS
from esqlog.statistics.hapax import DEFAULT_SAMPLE


@click.command("calibrate")
@connection_options
@click.option("--index", required=True, help="Index (or alias of one index) to calibrate.")
@click.option("--field", "field_name", required=True, help="The analyzed text field to score.")
@click.option("--exact", is_flag=True, help="Read every document's term vectors (slower).")
@click.option(
    "--vocabulary",
    "with_vocabulary",
    is_flag=True,
    help="Also snapshot every term's df beside --out (NAME.vocab.<sha>.npz), so "
    "searches need no statistics round trip; implies --exact.",
)
@click.option(
    "--identifiers",
    "with_identifiers",
    is_flag=True,
    help="With --vocabulary: also learn identifier splits and the split stream's "
    "statistics (NAME.idents.<sha>.npz) for search --mode identifiers.",
)
@click.option(
    "--parallel",
    type=int,
    default=DEFAULT_PARALLEL,
    show_default=True,
    help="Shards read at once by --exact / --vocabulary (1: one after another); "
    "--identifiers reads them in as many worker processes.",
)
@click.option(
    "--memory-limit",
    default="256M",
    show_default=True,
    help="With --identifiers: memory for what grows with the documents (each "
    "document's term ids go to a temporary file past it); the statistics "
    "do not depend on it. A size: 64M, 1G.",
)
@click.option(
    "--dask",
    "dask_address",
    metavar="ADDRESS",
    help="With --identifiers: scan the shards as tasks on the Dask cluster whose "
    "scheduler is here (tcp://HOST:8786; pip install 'esqlog[distributed]'). "
    "The connection settings, credentials included, travel to its workers; "
    "the files written are the same as a local run's.",
)
@click.option(
    "--dask-timeout",
    type=click.FloatRange(min=0.1),
    default=DEFAULT_CONNECT_TIMEOUT,
    show_default=True,
    help="Seconds to wait for the --dask scheduler.",
)
@click.option(
    "--sample",
    type=int,
    default=DEFAULT_SAMPLE,
    show_default=True,
    help="Documents sampled for h_tok when not --exact.",
)
@click.option(
    "--seed",
    type=int,
    default=42,
    show_default=True,
    help="Sampling seed (a signed 64-bit integer).",
)
@click.option(
    "--predictor",
    type=click.Choice(sorted(PREDICTORS)),
    default=None,
    help="Rule from corpus statistics to q (default: the best validated one).",
)
@click.option(
    "--out",
    type=click.Path(),  # checked by esqlog.atomic (one line)
    help="Write the calibration JSON here (atomically; a symlink's target is "
    "rewritten, its mode kept).",
)
@click.option(
    "--install-script",
    is_flag=True,
    help="Install esqlog's stored Painless script (for --mode script).",
)
@click.option(
    "--store-in-cluster",
    is_flag=True,
    help="Also keep the calibration in esqlog's own index esqlog-calibrations.",
)
@click.option(
    "--warm/--no-warm",
    default=True,
    show_default=True,
    help="With --identifiers on nodes that keep whole words (esqlog-terms 1.11.1 or "
    "later): read every word's group on the nodes afterwards, the most frequent first "
    "(esqlog plugin warm).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of a report.")
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Progress bar on stderr (default: when stderr is a terminal).",
)
def calibrate_command(
    connection: ConnectionSettings,
    index: str,
    field_name: str,
    exact: bool,
    sample: int,
    seed: int,
    predictor: str | None,
    out: str | None,
    with_vocabulary: bool,
    install_script: bool,
    store_in_cluster: bool,
    warm: bool,
    as_json: bool,
    progress: bool | None,
    with_identifiers: bool = False,
    parallel: int = DEFAULT_PARALLEL,
    memory_limit: str = "256M",
    dask_address: str | None = None,
    dask_timeout: float = DEFAULT_CONNECT_TIMEOUT,
) -> None:
    """Measure a field's hapax density and predict its q, reading only.

    The index and its analyzer stay as they are: esqlog reads term statistics and writes
    nothing but the calibration file, and, when asked, its stored script and its own index.
    """

    # Every check of the user's input before connecting, and every step that can fail
    # before --out is written: a failed run never leaves a new file behind.
    if with_vocabulary and out is None:
        raise UsageError(
            "--vocabulary needs --out (the snapshot is written beside that file)",
            "add --out FILE.json",
        )
    if with_identifiers and not with_vocabulary:
        raise UsageError(
            "--identifiers needs --vocabulary (its statistics ride on that scan)",
            "add --vocabulary --out FILE.json",
        )
    if dask_address is not None and not with_identifiers:
        raise UsageError(
            "--dask runs the --identifiers scan (nothing else runs on Dask)",
            "add --vocabulary --identifiers, or leave out --dask",
        )
    if dask_address is not None:
        require_distributed()
    if out is not None:
        output_target(out, "calibration file")
    if not (exact or with_vocabulary):
        check_sample(sample)
    check_parallel(parallel)
    memory = parse_memory_limit(memory_limit)
    if not -(2**63) <= seed < 2**63:
        raise UsageError(
            f"--seed must be a signed 64-bit integer, got {seed}",
            "pass a smaller --seed, e.g. --seed 42",
        )
    with ExitStack() as stack:  # the scheduler first: it is what this run adds to reach
        scheduler = (
            None
            if dask_address is None
            else stack.enter_context(dask_scheduler(dask_address, dask_timeout))
        )
        _run(
            connection,
            index,
            field_name,
            exact,
            sample,
            seed,
            predictor,
            out,
            with_vocabulary,
            install_script,
            store_in_cluster,
            as_json,
            progress,
            with_identifiers,
            parallel,
            memory,
            scheduler,
            warm,
        )


def _run(
    connection: ConnectionSettings,
    index: str,
    field_name: str,
    exact: bool,
    sample: int,
    seed: int,
    predictor: str | None,
    out: str | None,
    with_vocabulary: bool,
    install_script: bool,
    store_in_cluster: bool,
    as_json: bool,
    progress: bool | None,
    with_identifiers: bool,
    parallel: int,
    memory: MemoryLimit,
    scheduler: Any,
    warm: bool,
) -> None:
    """Calibrate and report, once every argument has been checked."""
    from esqlog.scoring.qlog import DEFAULT_PREDICTOR

    engine = open_engine(connection)
    if install_script:
        engine.run(install_script_plan())
    show_progress = sys.stderr.isatty() if progress is None else progress
    timings = CalibrationTimings()
    bars = progress_factory(show_progress and not as_json)
    vocab = None
    found = None  # the identifiers mode's statistics, when asked
    if with_identifiers:
        from esqlog.identifiers.calibrate import calibrate_identifiers

        found = calibrate_identifiers(
            engine,
            index,
            field_name,
            predictor=predictor or DEFAULT_PREDICTOR,
            progress_factory=bars,
            timings=timings,
            connection=connection,
            parallel=parallel,
            memory=memory,
            dask=scheduler,
        )
        record = found.record
    elif with_vocabulary:
        record, vocab = calibrate_with_vocabulary(
            engine,
            index,
            field_name,
            predictor=predictor or DEFAULT_PREDICTOR,
            progress_factory=bars,
            timings=timings,
            parallel=parallel,
        )
    else:
        record = calibrate(
            engine,
            index,
            field_name,
            exact=exact,
            sample=sample,
            seed=seed,
            predictor=predictor or DEFAULT_PREDICTOR,
            progress_factory=bars,
            timings=timings,
            parallel=parallel,
        )
    if record.analysis_warning:
        click.echo(f"warning: {record.analysis_warning}", err=True)
    if store_in_cluster:
        engine.run(store_in_cluster_plan(record))
    identifiers_note = None
    if out is not None and found is not None:
        from esqlog.identifiers.calibrate import identifier_report

        record, identifiers_note = identifier_report(found, out, engine, bars, warm)
    elif out is not None and vocab is not None:
        record = save_with_vocabulary(record, vocab, out)
    elif out is not None:
        save_calibration(record, out)
    _report(record, timings, out, identifiers_note, as_json, install_script, store_in_cluster)


def _report(
    record: Calibration,
    timings: CalibrationTimings,
    out: str | None,
    identifiers_note: str | None,
    as_json: bool,
    install_script: bool,
    store_in_cluster: bool,
) -> None:
    """What the run did, printed once all of it is done (nothing is claimed before it
    happened): one JSON object, or the report, a line per file written, the mode a search
    with no mode will use, and a line per change in the cluster."""
    if as_json:
        click.echo(
            json.dumps(
                {
                    **record.to_json(),
                    "regime": record.regime,
                    "seconds": round(timings.total, 3),
                    "out": str(out) if out else None,
                },
                sort_keys=True,
            )
        )
        return
    click.echo(format_report(record, timings))
    if out is not None:
        click.echo(f"calibration written to {out}")
    if record.vocabulary:
        click.echo(f"vocabulary snapshot written to {record.vocabulary_path()}")
    if identifiers_note:
        click.echo(identifiers_note)
    elif out is not None:
        from esqlog.identifiers.calibrate import auto_mode

        mode, why = auto_mode(record)
        click.echo(f"search       wrap() and esqlog mcp with no mode: {mode} ({why})")
    if install_script:
        click.echo("stored script esqlog-qlog-term installed")
    if store_in_cluster:
        click.echo("calibration stored in index esqlog-calibrations")
