"""User-facing errors: one line that names the problem and the fix, never a traceback.

The hierarchy (all four are public: ``esqlog.EsqlogError`` and so on)::

    Exception
     └── EsqlogError            a problem the user can fix: .problem, .fix, .exit_code 1
          ├── UsageError        bad input: an argument, a file, query text       (exit 2)
          │    └── ScriptingUnavailable   mode="script" on a cluster that cannot run
          │                               esqlog's stored script (esqlog.wrapper.scripting)
          └── ClusterError      the cluster refused, failed or could not be reached (exit 3)

Why so few: an application catches ``UsageError`` at start-up (``wrap`` and ``calibrate``
validate everything before the first request) and otherwise keeps its own error handling,
because a wrapped client's searches raise the client's own exceptions (a 404 is the
client's ``NotFoundError``). ``ClusterError`` is what the CLI turns a client's failure into.
TypeError marks a programming error instead: not a client (or an async one where only a
sync client will do), options passed positionally, pickling a wrapped client.
"""

from __future__ import annotations

import re

#: ``scheme://user:password@`` (or ``scheme://token@``) in any text: the userinfo part of a
#: URL, up to the authority's last ``@`` (a password may hold an unescaped ``@``, and clients
#: split at the last one), in any case of the scheme (``HTTP://`` is the same URL).
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^\s/]*@")


def redact(text: str) -> str:
    """``http://user:pw@host`` -> ``http://***@host`` wherever a URL appears in ``text``.

    Why here: every user-facing message is built from pieces (the --url, a client's
    exception text) that may carry credentials; redacting at the one place all messages
    pass through means no new message can forget to.
    """
    return _USERINFO.sub(r"\1***@", text)


class EsqlogError(Exception):
    """A problem the user can fix; the CLI prints it on one line and exits with ``exit_code``."""

    exit_code = 1

    def __init__(self, problem: str, fix: str | None = None) -> None:
        self.problem = redact(problem)
        self.fix = redact(fix) if fix else fix
        super().__init__(f"{self.problem}; {self.fix}" if self.fix else self.problem)

    def __reduce__(self) -> tuple[type, tuple[str, str | None]]:
        """Problem and fix survive pickling (a scan worker process raises them)."""
        return type(self), (self.problem, self.fix)


class UsageError(EsqlogError):
    """Bad input from the user (arguments, files, query text): exit code 2."""

    exit_code = 2


class ClusterError(EsqlogError):
    """The cluster refused, failed or could not be reached."""

    exit_code = 3
