"""Options shared by commands: how to reach the cluster, with secrets kept out of sight."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from esqlog.engine.client import Engine
from esqlog.engine.connection import ConnectionSettings, connect
from esqlog.errors import UsageError, redact
from esqlog.progress import Advance, ProgressFactory

F = TypeVar("F", bound=Callable[..., Any])


def connection_options(func: F) -> F:
    """--url and auth/TLS options, each also read from an ESQLOG_* environment variable."""
    options = [
        click.option(
            "--url",
            envvar="ESQLOG_URL",
            metavar="URL",
            help="Cluster URL, e.g. https://search.example:9200 [env ESQLOG_URL].",
        ),
        click.option("--user", envvar="ESQLOG_USER", help="Basic-auth user [env ESQLOG_USER]."),
        click.option(
            "--password",
            envvar="ESQLOG_PASSWORD",
            show_envvar=False,
            help="Basic-auth password [env ESQLOG_PASSWORD]; prefer --password-file.",
        ),
        click.option(
            "--password-file",
            envvar="ESQLOG_PASSWORD_FILE",
            type=click.Path(dir_okay=False, path_type=Path),
            help="File whose first line is the password [env ESQLOG_PASSWORD_FILE].",
        ),
        click.option("--api-key", envvar="ESQLOG_API_KEY", help="API key [env ESQLOG_API_KEY]."),
        click.option(
            "--bearer-token",
            envvar="ESQLOG_BEARER_TOKEN",
            help="Bearer token [env ESQLOG_BEARER_TOKEN].",
        ),
        click.option(
            "--ca-certs",
            envvar="ESQLOG_CA_CERTS",
            type=click.Path(exists=True, dir_okay=False),
            help="CA bundle for the cluster's TLS certificate [env ESQLOG_CA_CERTS].",
        ),
        click.option(
            "--insecure",
            is_flag=True,
            help="Do not verify TLS certificates or hostnames (prints a warning).",
        ),
        click.option(
            "--timeout",
            type=click.FloatRange(min=0.1),
            default=30.0,
            show_default=True,
            help="Seconds to wait for each request's answer (a request that "
            "times out is not retried).",
        ),
    ]
    for option in reversed(options):
        func = option(func)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        settings = _settings_from(kwargs)
        click.get_current_context().meta["esqlog.url"] = settings.url
        kwargs["connection"] = settings
        return func(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def _settings_from(kwargs: dict[str, Any]) -> ConnectionSettings:
    url = kwargs.pop("url")
    password = kwargs.pop("password")
    password_file = kwargs.pop("password_file")
    if not url:
        raise UsageError("no cluster URL given", "pass --url or set ESQLOG_URL")
    if not url.startswith(("http://", "https://")):
        # the value is not shown: "user:pw@host" without a scheme is a secret in plain view
        raise UsageError(
            "--url must start with http:// or https://", "pass e.g. --url https://localhost:9200"
        )
    if password_file is not None:
        try:
            password = password_file.read_text(encoding="utf-8").splitlines()[0]
        except (OSError, IndexError, UnicodeDecodeError):
            raise UsageError(
                f"cannot read a password from {str(password_file)!r}",
                "put the password on the first line of that file",
            ) from None
    insecure = kwargs.pop("insecure")
    if insecure:
        click.echo("warning: --insecure: TLS certificates and hostnames are NOT verified", err=True)
    return ConnectionSettings(
        url=url.rstrip("/"),
        user=kwargs.pop("user"),
        password=password,
        api_key=kwargs.pop("api_key"),
        bearer_token=kwargs.pop("bearer_token"),
        ca_certs=kwargs.pop("ca_certs"),
        verify_certs=not insecure,
        timeout=kwargs.pop("timeout"),
    )


def warn_once(text: str, topic: str | None = None) -> None:
    """One ``warning:`` line on stderr, at most once per ``topic`` (or text) per command.

    Why a topic: the same fact can be noticed twice (the stale-calibration check and the
    wrapper's snapshot check both see an index that drifted); the user needs it once.
    """
    ctx = click.get_current_context(silent=True)
    seen: set[str] = ctx.meta.setdefault("esqlog.warned", set()) if ctx else set()
    key = topic or text
    if key in seen:
        return
    seen.add(key)
    click.echo(redact(" ".join(text.split())), err=True)


def show_python_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: Any = None,
    line: str | None = None,
) -> None:
    """``warnings.showwarning`` for the CLI: esqlog's warnings as one ``warning:`` line.

    Python's own format (``path:line: RuntimeWarning: ...`` plus the source line) is for
    developers; the library warns through it so applications can filter, the CLI shows
    the message alone.
    """
    text = str(message).removeprefix("esqlog: ")
    topic = "drift" if "changed by" in text and "snapshot" in text else None
    warn_once(f"warning: {text}", topic)


def open_engine(settings: ConnectionSettings) -> Engine:
    """Connect, detect the engine and ask its version (so failures surface here, early)."""
    engine = connect(settings)
    _ = engine.version
    return engine


def progress_factory(enabled: bool, unit: str = "docs") -> ProgressFactory:
    """A rich progress bar (``unit``/s and ETA) on stderr, or None when disabled/not a TTY."""
    if not enabled:
        return None
    try:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )
    except ImportError:  # the 'progress' extra is not installed
        return None

    class _Rate(TextColumn):
        def __init__(self) -> None:
            super().__init__("")

        def render(self, task: Any) -> Any:
            from rich.text import Text

            speed = task.finished_speed or task.speed
            return Text(f"{speed:,.0f} {unit}/s" if speed else "")

    def factory(label: str, announced: int) -> Advance:
        bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            _Rate(),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=False,
        )
        task = bar.add_task(label, total=announced)
        bar.start()
        seen, planned = 0, announced

        def advance(n: int, total: int | None = None) -> None:
            nonlocal seen, planned
            seen += n
            if total is not None:  # the work stopped short of what it announced
                planned = total
            bar.update(task, advance=n, total=planned)
            if seen >= planned:
                bar.stop()

        return advance

    return factory
