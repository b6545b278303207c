"""The ``esqlog`` command line: thin click commands over the library.

Every user-facing failure becomes one line on stderr (``error: <problem>; <fix>``) and an
exit code: 2 for bad input, 3 for cluster problems, 1 otherwise. No tracebacks for user
errors; ``--debug`` shows them for bug reports.
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

import click

from esqlog.errors import EsqlogError, redact
from esqlog.version import __version__


class EsqlogGroup(click.Group):
    """A click group that turns esqlog and client errors into one-line messages, and whose
    commands are imported only when one runs (esqlog.cli.commands: ``--help`` stays fast)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        from esqlog.cli import commands

        return sorted(set(super().list_commands(ctx)) | set(commands.LAZY_COMMANDS))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        from esqlog.cli import commands

        found = super().get_command(ctx, cmd_name)
        if found is None:
            found = commands.load(cmd_name)
            if found is not None:
                self.add_command(found, cmd_name)
        return found

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The listing from each command's recorded summary, importing none of them."""
        from esqlog.cli import commands

        shown = {
            name: self.commands.get(name) or commands.listed(name)
            for name in self.list_commands(ctx)
        }
        listing = {name: command for name, command in shown.items() if not command.hidden}
        if not listing:
            return
        limit = formatter.width - 6 - max(len(name) for name in listing)
        with formatter.section("Commands"):
            formatter.write_dl(
                [(name, command.get_short_help_str(limit)) for name, command in listing.items()]
            )

    def invoke(self, ctx: click.Context) -> Any:
        from esqlog.cli.shared_options import show_python_warning

        try:
            with warnings.catch_warnings():  # restores the application's hook afterwards
                warnings.showwarning = show_python_warning
                return super().invoke(ctx)
        except EsqlogError as exc:
            _fail(ctx, str(exc), exc.exit_code)
        except click.exceptions.Exit:
            raise
        except (click.ClickException, click.Abort):
            raise
        except Exception as exc:
            from esqlog.engine.failures import describe_failure, is_client_error

            if ctx.meta.get("esqlog.debug"):
                raise
            if is_client_error(exc):
                error = describe_failure(exc, ctx.meta.get("esqlog.url"))
                _fail(ctx, str(error), error.exit_code)
            raise


def _fail(ctx: click.Context, message: str, code: int) -> None:
    """One ``error:`` line, credentials in any URL redacted, whatever built the message."""
    flat = " ".join(redact(message).split())
    click.echo(f"error: {flat}", err=True)
    ctx.exit(code)


@click.group(cls=EsqlogGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="esqlog")
@click.option("--debug", is_flag=True, hidden=True, help="Show tracebacks (for bug reports).")
@click.option(
    "--verbose",
    "-v",
    is_flag=True,
    help="Log each request's method, path and status (and retries) to stderr; "
    "never headers or credentials.",
)
@click.pass_context
def main(ctx: click.Context, debug: bool, verbose: bool) -> None:
    """q-log IDF for BM25 code search on Elasticsearch and OpenSearch, without reindexing.

    Start with `esqlog calibrate --url URL --index INDEX --field FIELD`.
    """
    from esqlog.cli.logs import configure_logging  # not for --help: logging costs 10 ms

    ctx.meta["esqlog.debug"] = debug
    configure_logging(verbose)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
