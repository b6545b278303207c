"""esqlog calibrate: one read-only pass over a field that yields its q."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from esqlog.calibrate import (
    Calibration,
    CalibrationTimings,
    calibrate,
    calibrate_with_vocabulary,
    install_script_plan,
    save_calibration,
    save_with_vocabulary,
    store_in_cluster_plan,
)
from esqlog.cli.options import connection_options, open_engine, progress_factory
from esqlog.engine import ConnectionSettings
from esqlog.errors import UsageError
from esqlog.hapax import DEFAULT_SAMPLE
from esqlog.qlog import PREDICTORS


@click.command("calibrate")
@connection_options
@click.option("--index", required=True, help="Index (or alias of one index) to calibrate.")
@click.option("--field", "field_name", required=True, help="The analyzed text field to score.")
@click.option("--exact", is_flag=True, help="Read every document's term vectors (slower).")
@click.option("--vocabulary", "with_vocabulary", is_flag=True,
              help="Also snapshot every term's df beside --out (NAME.vocab.npz), so searches "
                   "need no statistics round trip; implies --exact.")
@click.option("--identifiers", "with_identifiers", is_flag=True,
              help="With --vocabulary: also learn identifier splits and the split stream's "
                   "statistics (NAME.idents.npz) for search --mode identifiers.")
@click.option("--sample", type=int, default=DEFAULT_SAMPLE, show_default=True,
              help="Documents sampled for h_tok when not --exact.")
@click.option("--seed", type=int, default=42, show_default=True, help="Sampling seed.")
@click.option("--predictor", type=click.Choice(sorted(PREDICTORS)), default=None,
              help="Rule from corpus statistics to q (default: the best validated one).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the calibration JSON here (atomically).")
@click.option("--install-script", is_flag=True,
              help="Install esqlog's stored Painless script (for --mode script).")
@click.option("--store-in-cluster", is_flag=True,
              help="Also keep the calibration in esqlog's own index esqlog-calibrations.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of a report.")
@click.option("--progress/--no-progress", default=None,
              help="Progress bar on stderr (default: when stderr is a terminal).")
def calibrate_command(
    connection: ConnectionSettings, index: str, field_name: str, exact: bool, sample: int,
    seed: int, predictor: str | None, out: Path | None, with_vocabulary: bool,
    install_script: bool,
    store_in_cluster: bool, as_json: bool, progress: bool | None,
    with_identifiers: bool = False,
) -> None:
    """Measure a field's hapax density and predict its q, reading only.

    The index and its analyzer stay as they are: esqlog reads term statistics and writes
    nothing but the calibration file, and, when asked, its stored script and its own index.
    """
    from esqlog.qlog import DEFAULT_PREDICTOR

    if with_vocabulary and out is None:  # before connecting: a usage error needs no cluster
        raise UsageError("--vocabulary needs --out (the snapshot is written beside that file)",
                         "add --out FILE.json")
    if with_identifiers and not with_vocabulary:
        raise UsageError("--identifiers needs --vocabulary (its statistics ride on that scan)",
                         "add --vocabulary --out FILE.json")
    engine = open_engine(connection)
    show_progress = sys.stderr.isatty() if progress is None else progress
    timings = CalibrationTimings()
    bars = progress_factory(show_progress and not as_json)
    identifiers_note = None
    if with_identifiers:
        from esqlog.identifier_calibrate import calibrate_identifiers, identifier_report

        assert out is not None
        found = calibrate_identifiers(engine, index, field_name,
                                      predictor=predictor or DEFAULT_PREDICTOR,
                                      progress_factory=bars, timings=timings)
        record, identifiers_note = identifier_report(found, out)
    elif with_vocabulary:
        assert out is not None
        record, vocab = calibrate_with_vocabulary(
            engine, index, field_name, predictor=predictor or DEFAULT_PREDICTOR,
            progress_factory=bars, timings=timings)
        record = save_with_vocabulary(record, vocab, out)
    else:
        record = calibrate(engine, index, field_name, exact=exact, sample=sample, seed=seed,
                           predictor=predictor or DEFAULT_PREDICTOR, progress_factory=bars,
                           timings=timings)
        if out is not None:
            save_calibration(record, out)
    if install_script:
        engine.run(install_script_plan())
    if store_in_cluster:
        engine.run(store_in_cluster_plan(record))
    if as_json:
        click.echo(json.dumps({**record.to_json(), "regime": record.regime,
                               "seconds": round(timings.total, 3),
                               "out": str(out) if out else None}, sort_keys=True))
        return
    click.echo(format_report(record, timings))
    if out is not None:
        click.echo(f"calibration written to {out}")
    if record.vocabulary:
        click.echo(f"vocabulary snapshot written to {record.vocabulary_path()}")
    if identifiers_note:
        click.echo(identifiers_note)
    if install_script:
        click.echo("stored script esqlog-qlog-term installed")
    if store_in_cluster:
        click.echo("calibration stored in index esqlog-calibrations")


def format_report(record: Calibration, timings: CalibrationTimings | None = None) -> str:
    """The short human report of a calibration."""
    interval = ("exact" if record.h_tok_method == "exact"
                else f"95% CI {record.h_tok_low:.4f}-{record.h_tok_high:.4f}")
    lines = [
        f"engine       {record.engine} {record.engine_version}",
        f"index        {record.index} ({record.shards} shard{'s' * (record.shards != 1)}, "
        f"uuid {record.index_uuid})",
        f"field        {record.field} (analyzer {record.analyzer})",
        f"documents    N = {record.doc_count:,} with the field ({record.live_docs:,} live)",
        (f"vocabulary   {record.vocabulary_terms:,} terms in live documents (snapshot "
         f"{record.vocabulary})" if record.vocabulary else
         "vocabulary   not counted (pass --vocabulary to snapshot every term's df)"),
        f"avgdl        {record.avgdl:.1f} tokens ({record.sum_ttf:,} tokens in all)",
        f"h_tok        {record.h_tok:.4f} ({interval})",
        f"q            {record.q:.3f}  [{record.predictor} v{record.predictor_version}]",
        f"regime       {record.regime}",
    ]
    if timings is not None and timings.total:
        lines.append(f"took         {timings.total:.1f} s")
    return "\n".join(lines)
