"""esqlog plugin build: the esqlog-terms engine plugin as a zip for one exact engine release.

Thin: the build lives in :mod:`esqlog.engine.plugin_zip`. The zip is what
``bin/opensearch-plugin install file:///...zip`` or ``bin/elasticsearch-plugin install
file:///...zip`` takes on every node (docs/plugin.md); the identifiers mode then finds the
plugin by itself.
"""

from __future__ import annotations

from pathlib import Path

import click

from esqlog.engine.plugin_zip import ENGINES, build, target, zip_name


@click.group("plugin")
def plugin_group() -> None:
    """Build the esqlog-terms engine plugin zip for one exact engine release.

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
