"""User-facing errors: one line that names the problem and the fix, never a traceback."""

from __future__ import annotations


class EsqlogError(Exception):
    """A problem the user can fix; the CLI prints it on one line and exits with ``exit_code``."""

    exit_code = 1

    def __init__(self, problem: str, fix: str | None = None) -> None:
        self.problem = problem
        self.fix = fix
        super().__init__(f"{problem}; {fix}" if fix else problem)


class UsageError(EsqlogError):
    """Bad input from the user (arguments, files, query text): exit code 2."""

    exit_code = 2


class ClusterError(EsqlogError):
    """The cluster refused, failed or could not be reached."""

    exit_code = 3
