"""Script mode's support: is esqlog's stored script there, and what to do when it is not.

``mode="script"`` is a promise (an error if the cluster cannot run the script); a search
not forced to scripts falls back to boost mode (same ranking, no scripts) with one
warning. Both rules live in :func:`rewritten_search_plan`, the one place a rewritten query is sent.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable

from esqlog.calibration.cluster_store import TERM_SCRIPT_ID
from esqlog.engine.failures import error_reason, error_status
from esqlog.engine.paths import api_path
from esqlog.engine.search_call import SearchCall
from esqlog.engine.steps import ClientSearch, Plan, Request, SearchPlan
from esqlog.errors import UsageError
from esqlog.scoring.rewrite import RewriteMode

SCRIPT_FIX = (
    "use mode='boost' (same ranking, no scripts), or install the stored script with "
    "esqlog calibrate --install-script"
)


class ScriptingUnavailable(UsageError):
    """Script mode was forced but the cluster cannot run esqlog's stored script."""


def is_script_failure(exc: BaseException) -> bool:
    """A 400 whose reason says scripts are unavailable, disallowed or the script is missing."""
    if error_status(exc) not in (400, 404, 500):
        return False
    reason = error_reason(exc).lower()
    return any(
        sign in reason
        for sign in (
            "script_lang not supported",
            "cannot execute",
            "scripts of type",
            "unable to find script",
            "script_score",
            "stored script",
            "not allowed",
            "painless",
        )
    )


class ScriptSupport:
    """Whether the cluster runs esqlog's stored script: asked once, then remembered."""

    def __init__(self) -> None:
        self.ok: bool | None = None  # None: not asked yet
        self.failure: BaseException | None = None  # the 404 that said it is missing
        self._warned = False
        self._lock = threading.Lock()

    def probe_plan(self) -> Plan[bool]:
        """Whether esqlog's stored script exists, asked once per wrapper.

        Script mode scripts only the rare terms, so without this a cluster lacking the
        script (or Painless) would fail, or fall back, only on queries that happen to carry
        one; asking first makes the first script-mode search decide, every time.
        """
        if self.ok is None:
            try:
                yield Request("GET", api_path("_scripts", TERM_SCRIPT_ID))
            except Exception as exc:
                status = error_status(exc)
                if status in (401, 403):  # a search-only user may not read scripts:
                    self.ok = True  # let the search itself tell
                    return True
                if status != 404:
                    raise
                self.ok, self.failure = False, exc
            else:
                self.ok = True
        return bool(self.ok)

    def fall_back(self, exc: BaseException | None) -> None:
        """Stop scripting for this wrapper; warn once, naming why."""
        self.ok = False
        with self._lock:
            if exc is None or self._warned:
                return
            self._warned = True
        reason = (
            f"stored script {TERM_SCRIPT_ID} not found"
            if exc is self.failure
            else error_reason(exc)
        )
        warnings.warn(
            f"esqlog: the cluster cannot run the stored script ({reason}); "
            "falling back to boost mode",
            RuntimeWarning,
            stacklevel=6,
        )


def rewritten_search_plan(
    call: SearchCall,
    rewrite: Callable[[RewriteMode], None],
    mode: RewriteMode,
    forced: bool,
    scripts: ScriptSupport,
) -> SearchPlan:
    """Send the rewritten search; in script mode, fall back to boost or raise (forced).

    ``rewrite`` sets the call's rewritten queries for a mode, each built from the caller's
    original one, so the fallback never rewrites the script rewrite.
    """
    if mode == "script" and not (yield from scripts.probe_plan()):
        if forced:
            raise ScriptingUnavailable(
                f"script mode is not available on this cluster (stored script "
                f"{TERM_SCRIPT_ID} not found)",
                SCRIPT_FIX,
            ) from scripts.failure
        scripts.fall_back(scripts.failure)
        mode = "boost"
    rewrite(mode)
    try:
        return (yield ClientSearch((), call.final_kwargs()))
    except Exception as exc:
        if mode != "script" or not is_script_failure(exc):
            raise
        if forced:
            raise ScriptingUnavailable(
                f"script mode is not available on this cluster ({error_reason(exc)})", SCRIPT_FIX
            ) from exc
        scripts.fall_back(exc)
    rewrite("boost")
    return (yield ClientSearch((), call.final_kwargs()))
