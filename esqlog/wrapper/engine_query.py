"""Which engine query the identifiers mode's groups are sent as, and the fall back to spans.

Why: ``IdentifierSettings(engine_query="auto")`` (the default) sends the ``esqlog_terms``
query of the esqlog-terms plugin where calibrate found the plugin on every data node
(esqlog.calibration.plugin), and span queries otherwise. A cluster can change after
calibrate (a node added without the plugin, the plugin removed); such a node refuses the
query at parse time. Both engines answer that with a 400 ``parsing_exception`` whose reason
is ``unknown query [esqlog_terms]`` (caused by ``named_object_not_found_exception``), for a
search and for a whole ``_msearch`` alike; a data node that cannot read the query sent by a
coordinating node that has the plugin names the query in an unknown named-writeable error.
Then the search is sent once more with spans, and the wrapper keeps to spans for the rest
of its life, with one warning on the ``esqlog`` logger.

``select="auto"`` (the default) is resolved here too: "all" (each word's whole group, kept on
the nodes) where the plugin is chosen and calibrate found a release that keeps whole words
on every data node, "cover" otherwise. A search the nodes cannot plan (and/msm, a node
that refused the plan) takes the budget's "cover" on the client, without a warning.
"""

from __future__ import annotations

import functools
import json
import logging
import re
import threading
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from esqlog.calibration.plugin import engine_query_for, whole_words_for
from esqlog.calibration.record import Calibration
from esqlog.identifiers import node_plan, synonym
from esqlog.identifiers.settings import IdentifierSettings

logger = logging.getLogger("esqlog")
T = TypeVar("T")


def _refused(query: str | None = None) -> re.Pattern[str]:
    """What the engines say when a node does not know the plugin's query ``query``
    (esqlog_terms by default: its name read now, not when this module was imported)."""
    return _refusal_of(query or synonym.QUERY_NAME)


def _node_plan_refused() -> re.Pattern[str]:
    """A node that does not know esqlog_identifiers (a plugin before 1.9.0), or cannot read
    the word lists it names (the index deleted, or not readable by this user): the plugin's
    error names the query in brackets either way."""
    return _node_plan_refusal_of(node_plan.QUERY_NAME)


@functools.lru_cache(maxsize=8)
def _refusal_of(name: str) -> re.Pattern[str]:
    """:func:`_refused` of one query name, compiled once: every search's answer is checked
    against it, and building the expression each time cost a wrapped search ~10 µs."""
    quoted = re.escape(name)
    return re.compile(
        rf"unknown query \[{quoted}\]|unknown field \[{quoted}\]"
        rf"|unknown namedwriteable \[[^\]]*\]\[{quoted}\]",
        re.IGNORECASE,
    )


@functools.lru_cache(maxsize=8)
def _node_plan_refusal_of(name: str) -> re.Pattern[str]:
    """:func:`_node_plan_refused` of one query name, compiled once (as :func:`_refusal_of`)."""
    return re.compile(
        rf"{_refusal_of(name).pattern}|\[{re.escape(name)}\]",
        re.IGNORECASE,
    )


def _text_of(payload: Any) -> str:
    try:
        return json.dumps(payload, default=str)
    except (TypeError, ValueError):  # pragma: no cover - default=str renders anything
        return str(payload)


def plugin_refused(exc: BaseException, pattern: re.Pattern[str] | None = None) -> bool:
    """Whether a client's exception is a node refusing the esqlog_terms query (or what
    ``pattern`` matches)."""
    info = getattr(exc, "info", None) or getattr(exc, "body", None)
    found = pattern or _refused()
    return bool(found.search(_text_of(info) if info is not None else str(exc)))


def refused_in(response: Any, pattern: re.Pattern[str] | None = None) -> bool:
    """Whether an answer (a search's, or an msearch's) holds shard failures or items that
    refuse the query: a data node without the plugin, behind a coordinating node with it."""
    body = getattr(response, "body", response)
    if not isinstance(body, Mapping):
        return False
    parts: list[Any] = [
        body.get("_shards", {}).get("failures")
        if isinstance(body.get("_shards"), Mapping)
        else None
    ]
    items = body.get("responses")
    if isinstance(items, list):
        parts += [
            r.get("error") or (r.get("_shards") or {}).get("failures")
            for r in items
            if isinstance(r, Mapping)
        ]
    found = pattern or _refused()
    return any(p and found.search(_text_of(p)) for p in parts)


class EngineQueryChoice:
    """The identifiers settings with engine_query resolved for this wrapper's cluster."""

    def __init__(self, settings: IdentifierSettings, calibrations: Sequence[Calibration]) -> None:
        self.asked = settings.engine_query
        if settings.engine_query == "auto":
            chosen, self.why = engine_query_for(calibrations)
            settings = replace(settings, engine_query="plugin" if chosen == "plugin" else "span")
        else:
            self.why = f"engine_query={settings.engine_query!r} was given"
        if settings.select == "auto" and not (
            settings.engine_query == "plugin" and whole_words_for(calibrations)
        ):  # "all" only where every data node keeps whole words (esqlog-terms 1.11.1)
            settings = replace(settings, select="cover")
        self.settings = settings
        self._lock = threading.Lock()
        self.fell_back = False

    @property
    def plugin(self) -> bool:
        return self.settings.engine_query == "plugin"

    def plan_on_client(self, on_change: Callable[[IdentifierSettings], None]) -> None:
        """The nodes cannot plan (a node without esqlog-terms 1.9.0, or the word lists
        unreadable): plan on the client from now on, with one warning."""
        with self._lock:
            if self.settings.node_plan:
                self.settings = replace(self.settings, node_plan=False)
                logger.warning(
                    "esqlog: a node refused the esqlog_identifiers query (an esqlog-terms "
                    "plugin before 1.9.0, or the word lists index unreadable); identifiers "
                    "queries are planned on the client from now on"
                )
                on_change(self.settings)

    def fall_back(self, on_change: Callable[[IdentifierSettings], None]) -> bool:
        """Switch to spans for good (True), when the plugin was chosen by "auto"; an
        explicit engine_query="plugin" is a promise: its error stands (False). A search
        built with the plugin just before another switched retries too."""
        if self.asked != "auto":
            return False
        with self._lock:
            if self.plugin:
                self.settings = replace(self.settings, engine_query="span")
                self.fell_back = True
                self.why = "a node refused the esqlog_terms query: spans from now on"
                logger.warning(
                    "esqlog: a node refused the esqlog_terms query (the "
                    "esqlog-terms plugin is missing there); the identifiers mode "
                    "sends span queries from now on (calibrate again once every "
                    "data node has the plugin)"
                )
                on_change(self.settings)
        return True


def with_span_fallback(
    choice: EngineQueryChoice,
    on_change: Callable[[IdentifierSettings], None],
    plan: Callable[[], Generator[Any, Any, T]],
    before_retry: Callable[[], None],
) -> Generator[Any, Any, T]:
    """Run ``plan``; if the cluster refuses the query the nodes plan (esqlog_identifiers),
    plan on the client and run it again; if it refuses the plugin's query (an error, or
    failures in the answer), switch to spans and run it once more (``before_retry`` puts
    the caller's request back as given each time)."""
    for _ in range(2):
        node, plugin = choice.plugin and choice.settings.node_plan, choice.plugin
        try:
            result = yield from plan()
        except Exception as exc:
            if node and plugin_refused(exc, _node_plan_refused()):
                choice.plan_on_client(on_change)
            elif not (plugin and plugin_refused(exc) and choice.fall_back(on_change)):
                raise
        else:
            if node and refused_in(result, _node_plan_refused()):
                choice.plan_on_client(on_change)
            elif not (plugin and refused_in(result) and choice.fall_back(on_change)):
                return result
        before_retry()
    return (yield from plan())
