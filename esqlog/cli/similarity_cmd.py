"""esqlog similarity apply/revert: the opt-in index-wide q-log BM25 (see esqlog.scoring.similarity).

Thin: the logic, backups and failure handling live in :mod:`esqlog.scoring.similarity`. Both
commands close the index for a moment, so both refuse to act without --yes and first print
exactly what they would do.
"""

from __future__ import annotations

import click

from esqlog.cli.shared_options import connection_options, open_engine
from esqlog.engine.connection import ConnectionSettings
from esqlog.errors import UsageError
from esqlog.scoring.similarity import (
    SimilarityParams,
    apply_plan,
    check_applicable,
    describe_apply,
    describe_revert,
    read_state_plan,
    revert_plan,
)
from esqlog.scoring.similarity_backup import BACKUP_INDEX, load_backup_plan


def _refuse(index: str, action: str) -> None:
    raise UsageError(
        f"not closing index {index!r} without --yes",
        f"re-run esqlog similarity {action} {index} --yes to go ahead",
    )


@click.group("similarity")
def similarity_group() -> None:
    """Make q-log BM25 the index's default similarity (closes the index briefly), or undo it.

    Unlike esqlog search, this changes the index: every query on it is scored with q-log
    IDF. The previous settings are kept in esqlog-similarity-backups for revert.
    """


@similarity_group.command("apply")
@connection_options
@click.argument("index")
@click.option("--q", "q", type=float, required=True, help="q of the q-log IDF (0..2).")
@click.option("--k1", type=float, default=1.2, show_default=True, help="BM25 k1.")
@click.option("--b", "b", type=float, default=0.75, show_default=True, help="BM25 b.")
@click.option("--yes", is_flag=True, help="Go ahead (the index is closed for a few seconds).")
def apply_command(
    connection: ConnectionSettings, index: str, q: float, k1: float, b: float, yes: bool
) -> None:
    """Set INDEX's default similarity to esqlog's scripted q-log BM25."""
    params = SimilarityParams(q, k1, b)
    engine = open_engine(connection)
    state = engine.run(read_state_plan(index))
    check_applicable(state)
    if not yes:
        click.echo(describe_apply(state, params))
        _refuse(state.index, "apply")
    change = engine.run(apply_plan(state.index, params, state=state))
    click.echo(
        f"index {change.index}: default similarity is now q-log BM25 "
        f"(q={q:g}, k1={k1:g}, b={b:g}); the index is open"
    )
    if change.kept_backup:
        click.echo(f"the backup from the first apply was kept in {BACKUP_INDEX}")
    else:
        click.echo(
            f"previous settings saved in {BACKUP_INDEX}; undo with "
            f"esqlog similarity revert {change.index} --yes"
        )


@similarity_group.command("revert")
@connection_options
@click.argument("index")
@click.option("--yes", is_flag=True, help="Go ahead (the index is closed for a few seconds).")
def revert_command(connection: ConnectionSettings, index: str, yes: bool) -> None:
    """Restore INDEX's similarity settings saved by esqlog similarity apply."""
    engine = open_engine(connection)
    state = engine.run(read_state_plan(index))
    if not yes:
        backup = engine.run(load_backup_plan(state.uuid))
        if backup is None:
            raise UsageError(
                f"esqlog has no similarity backup for index {state.index!r}",
                "nothing to revert: esqlog similarity apply was not run on it",
            )
        click.echo(describe_revert(state, backup))
        _refuse(state.index, "revert")
    change = engine.run(revert_plan(state.index, state=state))
    restored = (
        f"{len(change.after)} index.similarity setting(s)"
        if change.after
        else "no index.similarity settings (Lucene BM25 default)"
    )
    click.echo(f"index {change.index}: restored {restored}; the index is open")
