"""esqlog plugin build: the esqlog-terms engine plugin as a zip for one exact engine release;
esqlog plugin lists: the word-lists indices calibrations wrote for it, and removing those
no calibration in use names; esqlog plugin stats: its caches on every node; esqlog plugin
warm: the whole-word groups of a calibration's words read ahead of traffic.

Thin: the build lives in :mod:`esqlog.engine.plugin_zip`, the lists in
:mod:`esqlog.identifiers.word_lists`, the stats in :mod:`esqlog.engine.plugin_stats`, the
warm in :mod:`esqlog.identifiers.warm`. The zip
is what ``bin/opensearch-plugin install file:///...zip`` or ``bin/elasticsearch-plugin install
file:///...zip`` takes on every node (docs/plugin.md); the identifiers mode then finds the
plugin by itself.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from esqlog.cli.shared_options import connection_options, open_engine, progress_factory
from esqlog.engine.connection import ConnectionSettings
from esqlog.engine.plugin_stats import ClusterCaches, NodeCaches, cache_stats_plan
from esqlog.engine.plugin_zip import ENGINES, build, target, zip_name
from esqlog.errors import UsageError

if TYPE_CHECKING:
    from esqlog.identifiers.warm_watch import WatchJob


def _mb(count: int) -> str:
    """Bytes as the commands print them (decimal megabytes, one decimal)."""
    return f"{count / 1e6:.1f} MB"


@click.group("plugin")
def plugin_group() -> None:
    """Build the esqlog-terms engine plugin zip; list and prune the word lists it reads; show
    its caches on every node.

    The plugin runs the identifiers mode at near native speed (docs/plugin.md).
    """


@plugin_group.command("build")
@click.option("--engine", type=click.Choice(ENGINES), required=True, help="The cluster's engine.")
@click.option(
    "--version",
    "version",
    required=True,
    help="The nodes' exact version (GET / shows it), e.g. 2.19.1.",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="Folder to write the zip into.",
)
@click.option(
    "--distribution",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="An unpacked distribution of that release to compile against, instead of "
    "its jars from Maven Central.",
)
def build_command(engine: str, version: str, out: Path, distribution: Path | None) -> None:
    """Build the esqlog-terms plugin zip for ENGINE at VERSION (needs a JDK: javac).

    The engine's jars come from that release's integ-test distribution on Maven Central
    (cached in ~/.m2), unless --distribution names an unpacked one. Install the zip on
    every node with the engine's own tool, then restart the nodes.
    """
    tgt = target(engine, version)
    path = build(tgt, out / zip_name(tgt), distribution, lambda line: click.echo(line, err=True))
    tool = f"bin/{engine}-plugin"
    click.echo(f"wrote {path}")
    click.echo(
        f"install on every node: {tool} install file://{path.resolve()} (then restart the node)"
    )


@plugin_group.command("lists")
@connection_options
@click.option(
    "--keep",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="A calibration file in use: the word lists it names are kept (repeatable).",
)
@click.option(
    "--remove",
    is_flag=True,
    help="Delete the word-lists indices esqlog made that no --keep calibration names.",
)
def lists_command(connection: ConnectionSettings, keep: tuple[Path, ...], remove: bool) -> None:
    """List the word-lists indices (esqlog-words-...) calibrations wrote for the plugin.

    esqlog calibrate writes one for each new statistics and leaves the one before, which
    wrappers still holding the earlier calibration read. Name every calibration in use
    with --keep; with --remove, the lists esqlog made that none of them names are deleted
    (a process still holding one of those calibrations plans on the client from then on).
    Indices of that name which esqlog did not mark are shown and never touched.
    """
    from esqlog.calibration.files import load_calibration
    from esqlog.identifiers.word_lists import lists_indices_plan, remove_lists_plan

    if remove and not keep:
        raise UsageError(
            "--remove needs the calibrations in use (--keep FILE, repeatable)",
            "pass --keep for every calibration your applications load; to remove every "
            "list, delete the esqlog-words-* indices yourself",
        )
    named: dict[str, list[str]] = {}
    for path in keep:
        name = load_calibration(path).word_lists
        if name:
            named.setdefault(name, []).append(str(path))
    engine = open_engine(connection)
    own, other = engine.run(lists_indices_plan())
    if not own and not other:
        click.echo("no word-lists index on this cluster")
    removed = 0
    for lists in own:
        state = f"{lists.words:,} words, {_mb(lists.size_bytes)}"
        if not lists.complete:
            state += ", incomplete (a calibrate writing it, or killed midway)"
        users = named.get(lists.name)
        if users:
            click.echo(f"{lists.name}  {state}; named by {', '.join(users)}")
        elif remove:
            engine.run(remove_lists_plan(lists.name))
            removed += 1
            click.echo(f"{lists.name}  {state}; removed (no --keep calibration names it)")
        else:
            click.echo(f"{lists.name}  {state}; no --keep calibration names it")
    for name in other:
        click.echo(f"{name}  not made by esqlog; left alone")
    for name in sorted(set(named) - {o.name for o in own}):
        click.echo(
            f"{name}  named by {', '.join(named[name])}, but not on this cluster: "
            "its searches are planned on the client; calibrate again to write it"
        )
    if remove:
        click.echo(f"removed {removed} word-lists index{'es' if removed != 1 else ''}")


#: each cache's name in the report, and the node setting that sizes it (docs/plugin.md)
_CACHES = {
    "term_state_cache": ("term states", "esqlog.terms.postings_cache_size"),
    "word_lists": ("word lists", "esqlog.terms.word_lists_cache_size"),
    "word_postings": ("whole words", "esqlog.terms.word_postings_cache_size"),
}


def cache_line(node: NodeCaches, section: str) -> str:
    """One cache of one node: its size against its limit, entries, hit rate and evictions."""
    get = node.counter
    hits, misses = get(section, "hits"), get(section, "misses")
    size, limit = get(section, "size_in_bytes"), get(section, "limit_in_bytes")
    share = f" ({100 * size / limit:.0f}%)" if limit else ""
    lookups = hits + misses
    rate = f"{100 * hits / lookups:.1f}% hits of {lookups:,} lookups" if lookups else "no lookup"
    refused = get(section, "breaker_refused") + get(section, "refused")
    line = (
        f"{_CACHES[section][0]}: {_mb(size)} of {_mb(limit)}{share}, "
        f"{get(section, 'entries'):,} entries, {rate}, {get(section, 'evictions'):,} evictions"
    )
    if not refused:
        return line
    if section == "word_postings":  # admission refuses a full cache's first sights too
        return line + f", {refused:,} not kept (a full cache's first sight, or the breaker)"
    return line + f", {refused:,} refused by the esqlog_terms breaker"


def stats_lines(found: ClusterCaches) -> list[str]:
    """The report: each node's caches (those its plugin release reports), the failures, and
    what to change where a cache evicts (a cache too small for its node's traffic evicts what
    the next searches look up again; the counters run from the node's start, so the advice
    says to watch them grow)."""
    out = []
    if not found.per_node:
        out.append(
            "esqlog-terms before 1.10.0 answers for the node that received the request only; "
            "upgrade the plugin to see every node"
        )
    width = max((len(n.name) for n in found.nodes), default=0)
    for node in found.nodes:
        for k, section in enumerate(s for s in _CACHES if s in node.sections):
            label = node.name if k == 0 else ""
            out.append(f"{label:<{width}}  {cache_line(node, section)}")
    for node_id, reason in found.failures:
        out.append(f"node {node_id} did not answer: {reason}")
    for node in found.nodes:
        for section, (name, setting) in _CACHES.items():
            evicted = node.counter(section, "evictions")
            if evicted:
                out.append(
                    f"{node.name}'s {name} cache has evicted {evicted:,} entries since the node "
                    f"started; if that keeps growing, raise {setting} on that node "
                    "(docs/plugin.md)"
                )
    if not found.nodes:
        out.append("no node answered")
    return out


@plugin_group.command("stats")
@connection_options
def stats_command(connection: ConnectionSettings) -> None:
    """Show the plugin's caches on every node: size against limit, hit rate, evictions.

    A node's caches serve the searches of the shards it holds; one that evicts is too small
    for its traffic, and the report names the setting that sizes it.
    """
    engine = open_engine(connection)
    for line in stats_lines(engine.run(cache_stats_plan())):
        click.echo(line)


@plugin_group.command("warm")
@connection_options
@click.option(
    "--calibration",
    "paths",
    multiple=True,
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="A calibration with identifier statistics and word lists (repeatable).",
)
@click.option(
    "--share",
    type=click.FloatRange(0.0, 1.0, min_open=True),
    default=0.5,
    show_default=True,
    help="The share of each node's free whole-word cache a calibration may fill.",
)
@click.option(
    "--words",
    type=click.IntRange(1),
    default=None,
    help="At most this many words per calibration, the most frequent first [default: every "
    "word with compounds].",
)
@click.option(
    "--progress/--no-progress",
    default=None,
    help="A progress bar per node on stderr [default: when stderr is a terminal].",
)
@click.option(
    "--watch",
    type=click.FloatRange(1.0),
    default=None,
    metavar="SECONDS",
    help="Then keep looking every SECONDS, and warm each node started again or newly "
    "holding a copy (until interrupted; for a service manager).",
)
def warm_command(
    connection: ConnectionSettings,
    paths: tuple[Path, ...],
    share: float,
    words: int | None,
    progress: bool | None,
    watch: float | None,
) -> None:
    """Read the whole-word groups of each calibration's words, the most frequent first,
    on every node holding its index, so that searches after a node starts read none.

    Searches only (size 0), nothing written. Run it after esqlog calibrate and after nodes
    restart, or once with --watch, which does so by itself; the identifiers mode keeps each
    word's whole group on the nodes where every data node runs esqlog-terms 1.11.1 or later
    (docs/plugin.md).
    """
    from esqlog.identifiers.warm_watch import job_plan

    engine = open_engine(connection)
    jobs = [_warm_job(path) for path in paths]
    if watch is not None:
        from esqlog.identifiers.warm_watch import watch as watch_nodes

        def say(line: str) -> None:
            click.echo(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {line}")

        say(f"watching {len(jobs)} calibration(s) every {watch:g} s (Ctrl-C stops)")
        try:
            watch_nodes(engine.run, jobs, watch, say, share, words)
        except KeyboardInterrupt:
            say("stopped")
        return
    bars = progress_factory(sys.stderr.isatty() if progress is None else progress, "words")
    for job in jobs:
        where = job.where
        done = engine.run(job_plan(job, share, words, bars))
        if not any(done.words.values()):
            click.echo(
                f"{where}: no word read: no node's whole-word cache has room "
                "(esqlog plugin stats shows it; raise esqlog.terms.word_postings_cache_size)"
            )
            continue
        counts = ", ".join(f"{n:,}" for n in done.words.values())
        nodes = len(done.words)
        click.echo(
            f"{where}: {counts} words read on {nodes} node{'s' if nodes != 1 else ''} in "
            f"{done.searches} searches, {done.seconds:.1f} s; the caches grew by "
            f"{_mb(done.grown_bytes)}"
        )
    for line in stats_lines(engine.run(cache_stats_plan())):
        if "whole words" in line:
            click.echo(line.strip())


def _warm_job(path: Path) -> WatchJob:
    """A calibration to warm, loaded and checked: one clear line where it has no word lists."""
    from esqlog.calibration.files import load_calibration
    from esqlog.identifiers.files import load_with_vocabulary
    from esqlog.identifiers.warm_watch import WatchJob

    cal = load_calibration(path)
    where = f"{path}: {cal.index}/{cal.field}"
    if not cal.word_lists or cal.vocabulary_path() is None:
        raise UsageError(
            f"{where} has no word lists for the nodes",
            "run esqlog calibrate --vocabulary --identifiers on a cluster whose data "
            "nodes run esqlog-terms, then warm with that calibration",
        )
    stats, vocab = load_with_vocabulary(cal)
    return WatchJob(where, cal.index, cal.field, cal.word_lists, stats, vocab)
