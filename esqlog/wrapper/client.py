"""The wrapped clients (sync and async) and :func:`wrap`, which builds them."""

from __future__ import annotations

import asyncio
import copy
import functools
import inspect
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from esqlog.calibration.files import load_calibration
from esqlog.calibration.record import Calibration
from esqlog.engine.client import AsyncEngine, Engine, flavor_of, is_async_client
from esqlog.engine.steps import ClientSearch, Pause, Step, adrive, drive
from esqlog.identifiers.settings import IdentifierSettings
from esqlog.wrapper.core import WrapperCore
from esqlog.wrapper.decisions import DecisionHook
from esqlog.wrapper.multi import msearch_plan
from esqlog.wrapper.options import (
    DEFAULT_RESOLVE_TTL,
    DEFAULT_SCRIPT_DF_FRACTION,
    DEFAULT_TOP_N,
    BoostShards,
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

#: The client's own type: ``wrap`` returns an object that is one (``isinstance`` and every
#: attribute), so a type checker sees the client's methods and catches ``es.serch(...)``.
ClientT = TypeVar("ClientT")

#: What ``wrap`` takes as its calibration: a record, a file, or several of either.
CalibrationSource = Calibration | str | Path | Iterable[Calibration | str | Path]


def keywords_of(
    method: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
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
        raise TypeError(
            f"{getattr(method, '__qualname__', 'search')}() takes keyword arguments only ({exc})"
        ) from None
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

    # copy and pickle look __class__ up on the instance, which names the client's class:
    # without these, copy.copy rebuilt a bare client around the wrapper's own attributes
    # (endless recursion) and pickle refused with "args[0] ... has the wrong class".
    def __copy__(self) -> Any:
        """A wrapped copy of the client, as ``copy.copy(client)`` would make (same
        calibrations, same caches: the copy searches exactly as this wrapper does)."""
        return type(self)(copy.copy(self._client), self.esqlog_core)

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        """The client's own deep copy, wrapped; it fails as the client's does (both clients
        hold thread locals and locks, which cannot be copied)."""
        return type(self)(copy.deepcopy(self._client, memo), self.esqlog_core)

    def __reduce_ex__(self, protocol: Any) -> NoReturn:
        """Refused with the fix: the client's connections and esqlog's caches belong to this
        process; a Calibration pickles, and wrap() rebuilds the wrapper from it."""
        raise TypeError(
            f"an esqlog-wrapped {type(self._client).__name__} cannot be pickled (it holds "
            "the client's connections and esqlog's caches); pickle the Calibration instead "
            "and call esqlog.wrap(client, calibration) where it is used"
        )


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

    async def search(self, *args: Any, esqlog_mode: SearchMode | None = None, **kwargs: Any) -> Any:
        """The client's own ``search``, with calibrated match clauses scored by q-log BM25."""
        args, kwargs = keywords_of(self._client.search, args, kwargs)
        return await adrive(search_plan(self.esqlog_core, args, kwargs, esqlog_mode), self._perform)

    async def msearch(
        self, *args: Any, esqlog_mode: SearchMode | None = None, **kwargs: Any
    ) -> Any:
        """The client's own ``msearch``, each calibrated search rewritten (wrapper.multi)."""
        return await adrive(
            msearch_plan(self.esqlog_core, args, kwargs, esqlog_mode), self._perform
        )

    async def _perform(self, step: Step) -> Any:
        if isinstance(step, ClientSearch):
            return await getattr(self._client, step.method)(*step.args, **step.kwargs)
        if isinstance(step, Pause):
            await asyncio.sleep(step.seconds)
            return None
        return await self._engine.perform(step)


def unwrapped(client: Any) -> Any:
    """The client itself, when given a wrapper of it (else ``client`` as given)."""
    return client._client if isinstance(client, _Wrapped) else client


def as_calibrations(calibration: CalibrationSource) -> list[Calibration]:
    """Calibrations given as records, paths, or any mix of them in an iterable."""
    items: list[Calibration | str | Path] = (
        [calibration] if isinstance(calibration, Calibration | str | Path) else list(calibration)
    )
    return [c if isinstance(c, Calibration) else load_calibration(c) for c in items]


def wrap(
    client: ClientT,
    calibration: CalibrationSource,
    *,
    mode: SearchMode = "auto",
    top_n: int = DEFAULT_TOP_N,
    dfs: bool = True,
    boost_shards: BoostShards = "weighted",
    joins: bool = False,
    join_weight: float | None = None,
    stats_ttl: float = 60.0,
    stats: StatsSource = "auto",
    script_df_fraction: float = DEFAULT_SCRIPT_DF_FRACTION,
    rerank_in: RerankWhere = "engine",
    resolve_ttl: float = DEFAULT_RESOLVE_TTL,
    identifiers: IdentifierSettings | None = None,
    on_decision: DecisionHook | None = None,
) -> ClientT:
    """Wrap an Elasticsearch/OpenSearch client (sync or async) so its searches use q-log IDF.

    The result is typed and behaves as ``client`` (``isinstance``, every attribute, the
    client's exceptions); ``copy.copy`` gives a wrapped copy, pickling is refused with the
    fix. ``calibration``: a Calibration, a calibration file, or several of either. The
    options are keyword-only, so a reader sees which one a value sets:

    ``mode``: ``auto`` (the default: ``identifiers`` on an index whose calibration says the
    field is code and holds the identifiers statistics, ``boost`` otherwise; decided per
    index at wrap() time and logged, esqlog.wrapper.auto_mode), ``boost`` (per-term boosts;
    no scripts needed), ``script`` (stored Painless script; an error if the cluster cannot
    run it), ``rerank`` (native top-``top_n``, rescored with q-log BM25),
    ``native`` (pass everything through) or ``identifiers`` (query words also match inside
    identifiers, a different match set; needs a calibration made with ``vocabulary=True,
    identifiers=True``; docs/identifiers.md). ``identifiers``: that mode's clause
    budget and the like, as an :class:`~esqlog.identifiers.settings.IdentifierSettings`.
    ``joins``: add identifier-join clauses (esqlog.scoring.joins) weighted ``join_weight``.
    ``stats_ttl``: seconds a term's global df may be reused from the bounded cache (0
    disables it: every search fetches fresh statistics). ``dfs``: on multi-shard indices,
    run rewritten searches with ``dfs_query_then_fetch`` so every shard scores with the
    global statistics the weights were computed from (unless the call sets ``search_type``
    itself). ``boost_shards``: how boost mode scores several shards when the calibration
    recorded each shard's statistics (``--identifiers``): ``weighted`` (default) sends one
    request without dfs whose boosts divide each term's weight by its shards' idfs averaged
    by df (esqlog.wrapper.shard_stats; within 0.002 NDCG@10 of dfs, faster); ``dfs`` the one
    exact dfs search; ``fan_out`` one request per shard, each exact in its shard's statistics,
    when the search can be merged exactly (esqlog.wrapper.boost_fan_out). Without those
    statistics boost goes the dfs way; ``dfs=False`` sends global boosts without dfs, the
    shards' own idfs uncorrected. ``stats``: where
    term df comes from: ``auto`` (the calibration's vocabulary
    snapshot when it has one, checked every minute against the index, else live),
    ``snapshot`` (require one) or ``live`` (ask the cluster for every term not in the TTL
    cache). ``script_df_fraction``: in script mode, terms in more than this fraction of the
    documents get boosts (same weights) so Lucene can still prune; 1.0 scripts every term.
    ``rerank_in``: ``engine`` reranks with the engine's rescore phase (one round trip, only
    the page is fetched; each shard's top-``top_n``); ``client`` fetches the global
    top-``top_n`` and rescores them here from each hit's per-term scores (or term vectors).
    ``resolve_ttl``: seconds an index or alias name's resolution (concrete index, UUID,
    shards) is trusted before one request checks it again (0: every search checks).
    ``on_decision``: called with each search's SearchDecision (rewritten or passed through
    and why, statistics source, fallback; esqlog.wrapper.decisions), the same record the
    ``esqlog`` logger writes at DEBUG.
    Every option is validated here (esqlog.wrapper.options): bad values raise UsageError.
    """
    options = WrapOptions(
        mode=mode,
        top_n=top_n,
        dfs=dfs,
        boost_shards=boost_shards,
        joins=joins,
        join_weight=join_weight,
        stats_ttl=stats_ttl,
        stats=stats,
        script_df_fraction=script_df_fraction,
        rerank_in=rerank_in,
        resolve_ttl=resolve_ttl,
        identifiers=identifiers,
        on_decision=on_decision,
    )
    core = WrapperCore(as_calibrations(calibration), options, flavor_of(client))
    wrapped: _Wrapped
    if is_async_client(client) or inspect.iscoroutinefunction(getattr(client, "search", None)):
        wrapped = AsyncQlogClient(client, core)
    else:
        wrapped = QlogClient(client, core)
    return wrapped  # type: ignore[return-value]  # it is one: __class__ and every attribute
