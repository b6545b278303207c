"""What long work reports its progress through, whoever draws it (the CLI's rich bars).

Why a module of its own: the library's long steps (a vocabulary scan, a warm) report
progress without knowing who shows it; the CLI passes a factory that draws bars, the
library's callers pass None. The types live here so neither side imports the other.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol


class Advance(Protocol):
    """One piece of work's progress: ``n`` more units done; ``total`` when the work learns
    it will do fewer units than it announced (a warm that stops at its cache share), which
    also ends the bar once those are done."""

    def __call__(self, n: int, total: int | None = None) -> None: ...


#: (label, units announced) -> the work's Advance; None shows nothing
ProgressFactory = Callable[[str, int], Advance] | None
