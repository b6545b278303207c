"""The wrapped clients (sync and async) and :func:`wrap`, which builds them."""

from __future__ import annotations

import asyncio
import functools
import inspect
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from esqlog.calibration.calibrate import load_calibration
from esqlog.calibration.record import Calibration
from esqlog.engine.client import AsyncEngine, Engine, flavor_of, is_async_client
from esqlog.engine.steps import ClientSearch, Pause, Step, adrive, drive
from esqlog.identifiers.query import IdentifierSettings
from esqlog.wrapper.core import WrapperCore
from esqlog.wrapper.multi import msearch_plan
from esqlog.wrapper.options import (
    DEFAULT_RESOLVE_TTL,
    DEFAULT_SCRIPT_DF_FRACTION,
    DEFAULT_TOP_N,
    RerankWhere,
    SearchMode,
    StatsSource,
    WrapOptions,
)
from esqlog.wrapper.search import search_plan

#: Client methods that return a new client of the same kind (elasticsearch-py's ``options``,
#: which langchain, llama-index and ``helpers.scan`` call): their result is wrapped with the
#: same calibration, else one ``options(request_timeout=...)`` would drop esqlog silently.
#: tests/engine/test_wrapper_client.py checks that no other public method of the installed clients
#: returns a client.
CLIENT_FACTORIES = frozenset({"options"})


def keywords_of(method: Any, args: tuple[Any, ...],
                kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """Positional arguments named as the client's own ``search`` binds them.

    Both clients' current ``search`` is keyword-only, so positional arguments raise the
    TypeError the client itself would raise, before any request; an older client that took
    ``search(body, index)`` gets them by name. A signature that cannot be read (``*args``)
    leaves them as given.
    """
    if not args:
        return args, kwargs
    try:
        signature = inspect.signature(method)
    except (TypeError, ValueError):
        return args, kwargs
    kinds = {p.kind for p in signature.parameters.values()}
    if inspect.Parameter.VAR_POSITIONAL in kinds:
        return args, kwargs
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as exc:
        raise TypeError(f"{getattr(method, '__qualname__', 'search')}() takes keyword "
                        f"arguments only ({exc})") from None
    named: dict[str, Any] = {}
    for name, value in bound.arguments.items():
        if signature.parameters[name].kind is inspect.Parameter.VAR_KEYWORD:
            named.update(value)
        else:
            named[name] = value
    return (), named


class _Wrapped:
    """What both wrappers share: every attribute is the client's own, ``isinstance`` sees the
    client's class (frameworks validate ``client: Elasticsearch`` fields), and a method that
    returns a new client returns it wrapped."""

    def __init__(self, client: Any, core: WrapperCore) -> None:
        self._client = client
        self.esqlog_core = core

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # isinstance() falls back to __class__
        return type(self._client)

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._client, name)
        if name in CLIENT_FACTORIES and callable(value):
            return self._rewrapping(value)
        return value

    def _rewrapping(self, method: Any) -> Any:
        @functools.wraps(method)
        def call(*args: Any, **kwargs: Any) -> Any:
            made = method(*args, **kwargs)
            if isinstance(made, type(self._client)):
                return type(self)(made, self.esqlog_core)
            return made
        return call

    def __repr__(self) -> str:
        return f"<esqlog wrapper of {self._client!r}>"


class QlogClient(_Wrapped):
    """Sync wrapper of ``Elasticsearch`` / ``OpenSearch``."""

    def __init__(self, client: Any, core: WrapperCore) -> None:
        super().__init__(client, core)
        self._engine = Engine(client)

    def __enter__(self) -> Any:
        """``with esqlog.wrap(client, ...) as es``: the client's own enter, the wrapper back."""
        entered = self._client.__enter__()
        return self if entered is self._client else entered

    def __exit__(self, *exc_info: Any) -> Any:
        return self._client.__exit__(*exc_info)

    def search(self, *args: Any, esqlog_mode: SearchMode | None = None, **kwargs: Any) -> Any:
        """The client's own ``search``, with calibrated match clauses scored by q-log BM25."""
        args, kwargs = keywords_of(self._client.search, args, kwargs)
        return drive(search_plan(self.esqlog_core, args, kwargs, esqlog_mode), self._perform)

    def msearch(self, *args: Any, esqlog_mode: SearchMode | None = None, **kwargs: Any) -> Any:
        """The client's own ``msearch``, each calibrated search rewritten (wrapper.multi)."""
        return drive(msearch_plan(self.esqlog_core, args, kwargs, esqlog_mode), self._perform)

    def _perform(self, step: Step) -> Any:
        if isinstance(step, ClientSearch):
            return getattr(self._client, step.method)(*step.args, **step.kwargs)
        if isinstance(step, Pause):
            time.sleep(step.seconds)
            return None
        return self._engine.perform(step)


class AsyncQlogClient(_Wrapped):
    """Async wrapper of ``AsyncElasticsearch`` / ``AsyncOpenSearch``."""

    def __init__(self, client: Any, core: WrapperCore) -> None:
        super().__init__(client, core)
        self._engine = AsyncEngine(client)

    async def __aenter__(self) -> Any:
        """``async with esqlog.wrap(client, ...) as es``, as the client's own."""
        entered = await self._client.__aenter__()
        return self if entered is self._client else entered

    async def __aexit__(self, *exc_info: Any) -> Any:
        return await self._client.__aexit__(*exc_info)

    async def search(self, *args: Any, esqlog_mode: SearchMode | None = None,
                     **kwargs: Any) -> Any:
        """The client's own ``search``, with calibrated match clauses scored by q-log BM25."""
        args, kwargs = keywords_of(self._client.search, args, kwargs)
        return await adrive(search_plan(self.esqlog_core, args, kwargs, esqlog_mode),
                            self._perform)

    async def msearch(self, *args: Any, esqlog_mode: SearchMode | None = None,
                      **kwargs: Any) -> Any:
        """The client's own ``msearch``, each calibrated search rewritten (wrapper.multi)."""
        return await adrive(msearch_plan(self.esqlog_core, args, kwargs, esqlog_mode),
                            self._perform)

    async def _perform(self, step: Step) -> Any:
        if isinstance(step, ClientSearch):
            return await getattr(self._client, step.method)(*step.args, **step.kwargs)
        if isinstance(step, Pause):
            await asyncio.sleep(step.seconds)
            return None
        return await self._engine.perform(step)


def as_calibrations(
    calibration: Calibration | str | Path | Iterable[Calibration | str | Path],
) -> list[Calibration]:
    """Calibrations given as records, paths, or any mix of them in an iterable."""
    items: list[Calibration | str | Path] = (
        [calibration] if isinstance(calibration, Calibration | str | Path) else list(calibration))
    return [c if isinstance(c, Calibration) else load_calibration(c) for c in items]


def wrap(
    client: Any,
    calibration: Calibration | str | Path | Iterable[Calibration | str | Path],
    mode: SearchMode = "boost",
    top_n: int = DEFAULT_TOP_N,
    dfs: bool = True,
    joins: bool = False,
    join_weight: float | None = None,
    stats_ttl: float = 60.0,
    stats: StatsSource = "auto",
    script_df_fraction: float = DEFAULT_SCRIPT_DF_FRACTION,
    rerank_in: RerankWhere = "engine",
    resolve_ttl: float = DEFAULT_RESOLVE_TTL,
    identifiers: IdentifierSettings | None = None,
) -> Any:
    """Wrap an Elasticsearch/OpenSearch client (sync or async) so its searches use q-log IDF.

    ``mode``: ``boost`` (per-term boosts; default, no scripts needed), ``script`` (stored
    Painless script; an error if the cluster cannot run it), ``auto`` (script, falling back
    to boost with one warning), ``rerank`` (native top-``top_n``, rescored with q-log BM25),
    ``native`` (pass everything through) or ``identifiers`` (query words also match inside
    identifiers, a different match set; needs ``esqlog calibrate --vocabulary
    --identifiers``; README "Identifiers mode"; ``identifiers`` takes its clause budget and
    the like as an esqlog.identifiers.query.IdentifierSettings). ``joins``: add identifier-join
    clauses
    (esqlog.scoring.joins) weighted ``join_weight``. ``stats_ttl``: seconds a term's global df may
    be
    reused from the bounded cache (0 disables it: every search fetches fresh statistics).
    ``dfs``: on multi-shard indices, run rewritten
    searches with ``dfs_query_then_fetch`` so every shard scores with the global statistics
    the weights were computed from (unless the call sets ``search_type`` itself).
    ``stats``: where term df comes from: ``auto`` (the calibration's vocabulary snapshot
    when it has one, checked every minute against the index, else live), ``snapshot``
    (require one) or ``live`` (ask the cluster for every term not in the TTL cache).
    ``script_df_fraction``: in script mode, terms in more than this fraction of the
    documents get boosts (same weights) so Lucene can still prune; 1.0 scripts every term.
    ``rerank_in``: ``engine`` reranks with the engine's rescore phase (one round trip, only
    the page is fetched; each shard's top-``top_n``); ``client`` fetches the global
    top-``top_n`` and rescores them here from each hit's per-term scores (or term vectors).
    ``resolve_ttl``: seconds an index or alias name's resolution (concrete index, UUID,
    shards) is trusted before one request checks it again (0: every search checks).
    Every option is validated here (esqlog.wrapper.options): bad values raise UsageError.
    """
    options = WrapOptions(mode=mode, top_n=top_n, dfs=dfs, joins=joins, join_weight=join_weight,
                          stats_ttl=stats_ttl, stats=stats,
                          script_df_fraction=script_df_fraction, rerank_in=rerank_in,
                          resolve_ttl=resolve_ttl, identifiers=identifiers)
    core = WrapperCore(as_calibrations(calibration), options, flavor_of(client))
    if is_async_client(client) or inspect.iscoroutinefunction(getattr(client, "search", None)):
        return AsyncQlogClient(client, core)
    return QlogClient(client, core)
