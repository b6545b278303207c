"""``esqlog --verbose``: esqlog's log lines on stderr, through click.

Its own module so that ``esqlog --help`` (which never runs the group's callback) does not
import :mod:`logging`.
"""

from __future__ import annotations

import logging

import click


class _StderrHandler(logging.Handler):
    """Log lines to click's current stderr (so test runners capture them too)."""

    def emit(self, record: logging.LogRecord) -> None:
        click.echo(self.format(record), err=True)


def configure_logging(verbose: bool) -> None:
    """``--verbose``: esqlog's request log (method, path, status; no headers) on stderr."""
    log = logging.getLogger("esqlog")
    for handler in [h for h in log.handlers if isinstance(h, _StderrHandler)]:
        log.removeHandler(handler)
    if verbose:
        handler = _StderrHandler()
        handler.setFormatter(logging.Formatter("esqlog: %(message)s"))
        log.addHandler(handler)
        if not log.isEnabledFor(logging.INFO):
            log.setLevel(logging.INFO)
