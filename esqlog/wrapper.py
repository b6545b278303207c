"""The drop-in client wrapper: two lines of change in an existing application.

    client = esqlog.wrap(client, "calibration.json")        # or a Calibration, or several
    resp = client.search(index="code", query={"match": {"body": "read file"}})

``search`` keeps the client's own signature and response type; every other attribute is the
client's own. The wrapper analyzes each calibrated match/multi_match with the index's own
analyzer and fetches global term statistics in one extra request, then sends either a
rewritten query (``boost`` or ``script`` mode) or the original one followed by a client-side
rerank of the top-N (``rerank``). Exceptions are the client's own types, so an application's
error handling keeps working. Thread-safe; the async wrapper never blocks the event loop.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import threading
import time
import warnings
from collections import OrderedDict
from collections.abc import Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from esqlog.analysis import SearchAnalyses, search_analyses_plan, standard_terms
from esqlog.calibrate import (
    STALE_DRIFT,
    TERM_SCRIPT_ID,
    Calibration,
    freshness_of,
    index_identity_plan,
    load_calibration,
)
from esqlog.clauses import DEFAULT_MAX_CLAUSES, max_clause_count_plan
from esqlog.engine import (
    AsyncEngine,
    Engine,
    Flavor,
    Plan,
    Request,
    bm25_scale,
    error_reason,
    error_status,
    flavor_of,
    is_async_client,
    quote_path,
    version_plan,
)
from esqlog.errors import UsageError
from esqlog.joins import (
    DEFAULT_JOIN_WEIGHT,
    confirmed_joins,
    join_candidates,
    joins_that_fit,
    proposed_candidates,
)
from esqlog.rerank import (
    DEFAULT_TOP_N,
    NAME_PREFIX,
    ScoredText,
    hit_vectors_plan,
    named_score_corrections,
    reorder_hits,
    score_corrections,
    supports_named_scores,
    term_names,
    term_scores_plan,
)
from esqlog.rewrite import (
    FieldCalibration,
    RewriteSettings,
    collect_query_texts,
    filters_on_score,
    resolved_from_stats,
    rewrite_query_shared,
)
from esqlog.stats import (
    FieldStats,
    StatsCache,
    TextStats,
    resolve_index_plan,
    shard_routings_plan,
    term_stats_plan,
    texts_stats_plan,
)
from esqlog.vocabulary import Vocabulary, load_vocabulary

Mode = Literal["boost", "script", "auto", "rerank", "native"]
MODES: tuple[str, ...] = ("boost", "script", "auto", "rerank", "native")
StatsSource = Literal["auto", "snapshot", "live"]
RerankWhere = Literal["engine", "client"]
STATS_SOURCES: tuple[str, ...] = ("auto", "snapshot", "live")
CACHE_SIZE = 1024  # index-name resolutions and shard routings kept (a few hundred bytes each)
#: seconds between checks that an index still matches its vocabulary snapshot
SNAPSHOT_CHECK_SECONDS = 60.0
#: script mode scripts terms in at most this fraction of documents, boosts the rest
#: (same weights; see RewriteSettings.script_df_fraction and BENCHMARKS.md section 6)
DEFAULT_SCRIPT_DF_FRACTION = 0.01


class ScriptingUnavailable(UsageError):
    """Script mode was forced but the cluster cannot run esqlog's stored script."""


@dataclass(frozen=True)
class IndexTarget:
    """A concrete calibrated index with its shard routings."""

    index: str
    routings: tuple[str, ...]
    shards: int
    analysis: SearchAnalyses = field(  # each field's search analyzer
        default_factory=lambda: SearchAnalyses({}))


class _LRU:
    """A small thread-safe LRU map; bounded so long-running apps cannot grow it."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._data: OrderedDict[Any, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Any) -> Any:
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                return self._data[key]
            return None

    def put(self, key: Any, value: Any) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.size:
                self._data.popitem(last=False)

    def __len__(self) -> int:
        return len(self._data)


def _load_snapshots(calibrations: Sequence[Calibration],
                    stats: StatsSource) -> dict[tuple[str, str], Vocabulary]:
    """The vocabulary snapshots searches may use: (index, field) -> snapshot.

    ``auto`` uses every snapshot a calibration names; ``snapshot`` also insists that each
    calibration has one; ``live`` uses none (every new term costs a statistics request).
    """
    if stats == "live":
        return {}
    out: dict[tuple[str, str], Vocabulary] = {}
    for cal in calibrations:
        path = cal.vocabulary_path()
        if path is None:
            if stats == "snapshot":
                raise UsageError(f"the calibration of {cal.index}/{cal.field} has no vocabulary "
                                 "snapshot", "run esqlog calibrate --vocabulary --out FILE, or "
                                 "use stats='auto'")
            continue
        vocab = load_vocabulary(path, cal.vocabulary_sha256)
        if (vocab.index_uuid, vocab.field) != (cal.index_uuid, cal.field):
            raise UsageError(f"vocabulary file {str(path)!r} belongs to another index or field",
                             "run esqlog calibrate --vocabulary --out FILE again")
        out[(cal.index, cal.field)] = vocab
    return out


def _as_calibrations(
    calibration: Calibration | str | Path | Iterable[Calibration | str | Path],
) -> list[Calibration]:
    items: list[Calibration | str | Path] = (
        [calibration] if isinstance(calibration, Calibration | str | Path) else list(calibration))
    return [c if isinstance(c, Calibration) else load_calibration(c) for c in items]


class QlogPlanner:
    """Everything the wrapper decides, as I/O-free plans shared by the sync and async paths."""

    def __init__(self, calibrations: Sequence[Calibration], mode: Mode, top_n: int,
                 dfs: bool, flavor: Flavor, joins: bool = False,
                 join_weight: float | None = None, stats_ttl: float = 60.0,
                 stats: StatsSource = "auto",
                 script_df_fraction: float = DEFAULT_SCRIPT_DF_FRACTION,
                 rerank_in: RerankWhere = "engine") -> None:
        if rerank_in not in ("engine", "client"):
            raise UsageError(f"unknown rerank_in {rerank_in!r}", "use 'engine' or 'client'")
        self.rerank_in = rerank_in
        if stats not in STATS_SOURCES:
            raise UsageError(f"unknown stats source {stats!r}",
                             f"use one of {', '.join(STATS_SOURCES)}")
        if not 0.0 <= script_df_fraction <= 1.0:
            raise UsageError(f"script_df_fraction must be in [0, 1], got {script_df_fraction}",
                             "pass e.g. 0.01 (1.0 scripts every term)")
        self.script_df_fraction = script_df_fraction
        self.snapshots = _load_snapshots(calibrations, stats)
        self._snapshot_state: dict[str, tuple[bool, float]] = {}  # index -> (usable, next check)
        self.joins = joins
        self.join_weight = join_weight
        self.max_clauses: int | None = None  # the engine's clause limit (asked when joins)
        self.cache = StatsCache(stats_ttl) if stats_ttl > 0 else None
        if mode not in MODES:
            raise UsageError(f"unknown mode {mode!r}", f"use one of {', '.join(MODES)}")
        if top_n < 1:
            raise UsageError(f"top_n must be at least 1, got {top_n}", "pass e.g. top_n=100")
        self._field_settings: dict[str, dict[str, FieldCalibration]] = {}
        self.by_index: dict[str, list[Calibration]] = {}
        for cal in calibrations:
            self.by_index.setdefault(cal.index, []).append(cal)
        self.mode = mode
        self.top_n = top_n
        self.dfs = dfs
        self.flavor = flavor
        self.names = _LRU(CACHE_SIZE)
        self.targets = _LRU(CACHE_SIZE)
        self._pending: set[str] = set()
        self._pending_lock = threading.Lock()
        self.version: tuple[int, ...] | None = None
        self.script_ok: bool | None = None
        self.script_failure: BaseException | None = None
        self._warned = False

    # -- target resolution ---------------------------------------------------------------
    def target_plan(
        self, index: Any
    ) -> Generator[Request | Pause, Any, IndexTarget | None]:
        """The calibrated concrete index a search targets, or None (pass through).

        Finding shard routings takes a few requests once per index. When a cold wrapper
        meets a burst (200 concurrent tasks, say), one search does it and the others pause
        until it is cached, instead of all probing at once and queueing each other out.
        """
        if not isinstance(index, str) or not index or "," in index or "*" in index:
            return None
        name: str | None = self.names.get(index)
        if name is None:
            if index in self.by_index:
                name = index
            else:
                try:
                    info = yield from resolve_index_plan(index)
                except Exception:
                    return None
                name = info.name
            self.names.put(index, name)
        if name not in self.by_index:
            return None
        target: IndexTarget | None = self.targets.get(name)
        while target is None:
            if not self._claim(name):
                yield Pause(0.005)
                target = self.targets.get(name)
                continue
            try:
                shards = self.by_index[name][0].shards
                routings = yield from shard_routings_plan(name, shards)
                analysis = yield from search_analyses_plan(name, [
                    c.field for c in self.by_index[name]], {
                    c.field: c.standard_analysis for c in self.by_index[name]})
                target = IndexTarget(name, routings, shards, analysis)
                self.targets.put(name, target)
            finally:
                self._release(name)
        return target

    def _claim(self, name: str) -> bool:
        with self._pending_lock:
            if name in self._pending:
                return False
            self._pending.add(name)
            return True

    def _release(self, name: str) -> None:
        with self._pending_lock:
            self._pending.discard(name)

    # -- vocabulary snapshots ---------------------------------------------------------------
    def snapshot_check_plan(self, target: IndexTarget) -> Plan[None]:
        """Every minute, check the index still is the one its snapshots were taken of.

        The same index (UUID) with live documents within 10% of the snapshot's keeps the
        snapshot in use; otherwise searches go back to live statistics (one warning) until
        the index is calibrated again. One search per minute pays this request; a failure
        here never fails a search (the last answer stands, the next minute retries).
        """
        now = time.monotonic()
        usable, due = self._snapshot_state.get(target.index, (True, 0.0))
        # Each snapshot is judged by the calibration it was taken with: another field's
        # calibration of the same index may be older or newer.
        owners = [c for c in self.by_index.get(target.index, [])
                  if (c.index, c.field) in self.snapshots]
        if now < due or not owners:
            return
        self._snapshot_state[target.index] = (usable, now + SNAPSHOT_CHECK_SECONDS)
        try:  # one look at the index serves every snapshot of it
            uuid, live = yield from index_identity_plan(target.index)
        except Exception:
            return
        checks = [(owner, freshness_of(owner, uuid, live)) for owner in owners]
        cal, fresh = max(checks, key=lambda check: (not check[1].same_index, check[1].drift))
        fits = fresh.same_index and fresh.drift <= STALE_DRIFT
        if usable and not fits:
            warnings.warn(
                f"esqlog: index {target.index!r} changed by {fresh.drift:.0%} since its "
                f"vocabulary snapshot ({cal.created_at}); using live statistics until "
                f"esqlog calibrate --vocabulary runs again", RuntimeWarning, stacklevel=4)
        self._snapshot_state[target.index] = (fits, now + SNAPSHOT_CHECK_SECONDS)

    def snapshot_for(self, index: str, field_name: str) -> Vocabulary | None:
        """The field's vocabulary snapshot while it is usable, else None (live statistics)."""
        vocab = self.snapshots.get((index, field_name))
        if vocab is None or not self._snapshot_state.get(index, (True, 0.0))[0]:
            return None
        return vocab

    def field_settings(self, index: str) -> dict[str, FieldCalibration]:
        """Field -> its q and IDF form (validated once per index, not per search)."""
        found = self._field_settings.get(index)
        if found is None:
            found = {c.field: FieldCalibration(c.q, c.idf_form) for c in self.by_index[index]}
            self._field_settings[index] = found
        return found

    def effective_mode(self, mode: Mode | None) -> Mode:
        chosen = mode or self.mode
        if chosen == "auto":
            return "script" if self.script_ok is not False else "boost"
        return chosen

    # -- boost / script ------------------------------------------------------------------
    def resolve_plan(
        self, target: IndexTarget, query: Any
    ) -> Plan[tuple[dict[tuple[str, str], TextStats], list[tuple[str, str]]]]:
        """Terms and global statistics of every calibrated match text in the query.

        Standard-analyzed fields and ASCII text are analyzed here (esqlog.analysis), and
        terms whose df is cached need no request at all; anything else goes to the engine
        in one batched ``_mtermvectors`` round trip.
        """
        if self.joins and self.max_clauses is None:
            self.max_clauses = yield from max_clause_count_plan(self.flavor)
        fields = self.field_settings(target.index)
        texts = [key for key in collect_query_texts(query, fields)
                 if target.analysis.exact(key[0])]  # the others stay native
        local = {key: standard_terms(key[1]) if target.analysis.standard(key[0]) else None
                 for key in texts}
        cached = self.cache is not None or all(
            self.snapshot_for(target.index, f) is not None for f, _ in texts)
        if texts and cached and all(v is not None for v in local.values()):
            stats = yield from self._cached_stats_plan(target, local)
            return stats, texts
        extra = {key: proposed_candidates(key[1]) for key in texts} if self.joins else None
        stats = yield from texts_stats_plan(target.index, texts, target.routings,
                                            target.analysis.per_field(), extra_terms=extra)
        if self.cache is not None:
            now = time.monotonic()
            for (field_name, _), found in stats.items():
                self.cache.store(target.index, field_name, found.field,
                                 {**found.df, **found.extra_df}, now)
        return stats, texts

    def _cached_stats_plan(
        self, target: IndexTarget, local: Mapping[tuple[str, str], list[str] | None]
    ) -> Plan[dict[tuple[str, str], TextStats]]:
        now = time.monotonic()
        wanted: dict[str, list[str]] = {}
        candidates: dict[tuple[str, str], list[str]] = {}
        for key, terms in local.items():
            candidates[key] = join_candidates(terms or []) if self.joins else []
            wanted.setdefault(key[0], []).extend([*(terms or []), *candidates[key]])
        per_field: dict[str, tuple[FieldStats, dict[str, int]]] = {}
        for field_name, words in wanted.items():
            vocab = self.snapshot_for(target.index, field_name)
            if vocab is not None:  # no round trip at all
                per_field[field_name] = (FieldStats(vocab.doc_count, vocab.sum_ttf, 0),
                                         vocab.df_of(words))
                continue
            assert self.cache is not None
            fstats, df, missing = self.cache.lookup(target.index, field_name, words, now)
            if missing or fstats is None:
                fstats, fetched = yield from term_stats_plan(target.index, field_name, missing,
                                                             target.routings)
                self.cache.store(target.index, field_name, fstats, fetched, now)
                df.update(fetched)
            per_field[field_name] = (fstats, df)
        out: dict[tuple[str, str], TextStats] = {}
        for key, terms in local.items():
            fstats, df = per_field[key[0]]
            words = terms or []
            out[key] = TextStats(tuple(words), tuple(range(len(words))),
                                 {t: df.get(t, 0) for t in words}, fstats,
                                 {c: df.get(c, 0) for c in candidates[key]})
        return out

    def weight_of_joins(self, index: str) -> float | None:
        """w for identifier joins: the wrapper's, else the calibration's, else the default."""
        if not self.joins:
            return None
        if self.join_weight is not None:
            return self.join_weight
        recorded = [c.join_weight for c in self.by_index[index] if c.join_weight]
        return recorded[0] if recorded else DEFAULT_JOIN_WEIGHT

    def rewritten(self, target: IndexTarget, query: Any,
                  stats: Mapping[tuple[str, str], TextStats], mode: Mode) -> dict[str, Any]:
        resolved = {key: resolved_from_stats(s) for key, s in stats.items()}
        settings = RewriteSettings(self.field_settings(target.index),
                                   "script" if mode == "script" else "boost", TERM_SCRIPT_ID,
                                   self.weight_of_joins(target.index),
                                   script_df_fraction=self.script_df_fraction,
                                   max_clauses=self.max_clauses or DEFAULT_MAX_CLAUSES)
        return rewrite_query_shared(query, resolved, settings)

    def named_native(self, target: IndexTarget, query: Any,
                     stats: Mapping[tuple[str, str], TextStats],
                     names: Mapping[tuple[str, str], str]) -> dict[str, Any]:
        """The query with native scores (q = 1: every weight 1) and each term clause named,
        so one search returns the top-N and every term's own score for the rerank."""
        resolved = {key: resolved_from_stats(s) for key, s in stats.items()}
        fields = {f: FieldCalibration(1.0, "lucene") for f in self.field_settings(target.index)}
        settings = RewriteSettings(fields, "boost", TERM_SCRIPT_ID, None, term_names=names)
        return rewrite_query_shared(query, resolved, settings)

    def scored_texts(self, target: IndexTarget,
                     stats: Mapping[tuple[str, str], TextStats]) -> list[ScoredText]:
        fields = self.field_settings(target.index)
        weight = self.weight_of_joins(target.index)
        joins = joins_that_fit([(s.terms, confirmed_joins(s.terms, s.extra_df) if weight
                                 else ()) for s in stats.values()],
                               self.max_clauses or DEFAULT_MAX_CLAUSES)
        return [ScoredText(f, s, fields[f].q, fields[f].form, kept, weight or 0.0)
                for ((f, _), s), kept in zip(stats.items(), joins, strict=True)]

    def script_probe_plan(self) -> Plan[bool]:
        """Whether esqlog's stored script exists, asked once per wrapper.

        Script mode scripts only the rare terms, so without this a cluster lacking the
        script (or Painless) would fail, or fall back, only on queries that happen to carry
        one; asking first makes the first script-mode search decide, every time.
        """
        if self.script_ok is None:
            try:
                yield Request("GET", f"/_scripts/{quote_path(TERM_SCRIPT_ID)}")
            except Exception as exc:
                status = error_status(exc)
                if status in (401, 403):  # a search-only user may not read scripts:
                    self.script_ok = True  # let the search itself tell
                    return True
                if status != 404:
                    raise
                self.script_ok, self.script_failure = False, exc
            else:
                self.script_ok = True
        return bool(self.script_ok)

    def warn_fallback(self, exc: BaseException) -> None:
        self.script_ok = False
        if not self._warned:
            self._warned = True
            reason = (f"stored script {TERM_SCRIPT_ID} not found" if exc is self.script_failure
                      else error_reason(exc))
            warnings.warn(f"esqlog: the cluster cannot run the stored script ({reason}); "
                          "falling back to boost mode", RuntimeWarning, stacklevel=4)


def is_script_failure(exc: BaseException) -> bool:
    """A 400 whose reason says scripts are unavailable, disallowed or the script is missing."""
    if error_status(exc) not in (400, 404, 500):
        return False
    reason = error_reason(exc).lower()
    return any(sign in reason for sign in (
        "script_lang not supported", "cannot execute", "scripts of type", "unable to find script",
        "script_score", "stored script", "not allowed", "painless"))


# --- request shapes of both clients -----------------------------------------------------------

_URL_PARAMETERS = frozenset({"search_type", "include_named_queries_score"})


class _Call:
    """A search call normalised across the two clients' signatures, rebuilt on the way out."""

    def __init__(self, flavor: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self.flavor = flavor
        self.kwargs = dict(kwargs)
        if flavor == "opensearch" and args:
            names = ["body", "index", "params", "headers"]
            for name, value in zip(names, args, strict=False):
                self.kwargs[name] = value
        elif args:
            raise TypeError("search() takes keyword arguments only")
        # A shallow copy is enough: esqlog only ever replaces top-level keys of the body
        # (query, rescore, size, ...) and builds new clauses, never edits the caller's.
        self.body: dict[str, Any] | None = (
            dict(self.kwargs["body"]) if isinstance(self.kwargs.get("body"), Mapping)
            else None)

    @property
    def index(self) -> Any:
        return self.kwargs.get("index")

    def get(self, key: str) -> Any:
        """A search option wherever it was given: body, keyword or opensearch params."""
        if self.body is not None and key in self.body:
            return self.body[key]
        alias = "from_" if key == "from" else key
        if alias in self.kwargs:
            return self.kwargs[alias]
        params = self.kwargs.get("params") or {}
        return params.get(key)

    def set(self, key: str, value: Any) -> None:
        """Set a search option where this client takes it, dropping any other copy."""
        alias = "from_" if key == "from" else key
        params = self.kwargs.get("params")
        if isinstance(params, Mapping) and key in params:
            self.kwargs["params"] = {k: v for k, v in params.items() if k != key}
        if key in _URL_PARAMETERS:  # URL parameters for both clients
            self.kwargs[alias] = value
        elif self.body is not None:
            self.kwargs.pop(alias, None)
            self.body[key] = value
        else:
            self.kwargs[alias] = value

    @property
    def query(self) -> Any:
        return self.get("query")

    def final_kwargs(self) -> dict[str, Any]:
        out = dict(self.kwargs)
        if self.body is not None:
            out["body"] = self.body
        return out


def _response_like(original: Any, body: dict[str, Any]) -> Any:
    """A response of the client's own type carrying ``body``."""
    if isinstance(original, dict):
        return body
    return type(original)(body=body, meta=original.meta)


def _body(response: Any) -> dict[str, Any]:
    return dict(getattr(response, "body", response))


def _rerank_window(call: _Call) -> tuple[int, int] | None:
    """(from, size) of the page asked for, or None when rerank must not apply."""
    if call.get("search_after") is not None or call.get("sort") is not None:
        return None
    if call.get("scroll") is not None:
        return None
    size = call.get("size")
    start = call.get("from")
    window = int(start or 0), int(10 if size is None else size)
    if min(window) < 0:  # invalid: let the engine refuse it with the client's own error
        return None
    return window


def _rerank_response(native: dict[str, Any], hits: list[dict[str, Any]], start: int,
                     size: int) -> dict[str, Any]:
    body = copy.copy(native)
    hits_block = dict(body.get("hits", {}))
    page = hits[start:start + size]
    hits_block["hits"] = page
    hits_block["max_score"] = hits[0]["_score"] if hits else hits_block.get("max_score")
    body["hits"] = hits_block
    return body


# --- one search flow, driven by the sync or the async wrapper ---------------------------------

@dataclass(frozen=True)
class Pause:
    """A step of a search plan: wait (without blocking an event loop) and look again."""

    seconds: float


@dataclass(frozen=True)
class ClientSearch:
    """A step of a search plan: call the wrapped client's own ``search``."""

    args: tuple[Any, ...]
    kwargs: Mapping[str, Any]


SearchPlan = Generator[Request | ClientSearch | Pause, Any, Any]


def search_plan(planner: QlogPlanner, args: tuple[Any, ...], kwargs: dict[str, Any],
                esqlog_mode: Mode | None) -> SearchPlan:
    """Decide, fetch statistics, then search natively, rewritten, or with a rerank."""
    call = _Call(planner.flavor, args, kwargs)
    # opensearch-py >= 3 takes keywords only: pass positional arguments on by name, as the
    # rewritten paths do, so the wrapper accepts the same calls whichever path a search takes.
    untouched = ClientSearch((), call.final_kwargs()) if args else ClientSearch(args, kwargs)
    mode = planner.effective_mode(esqlog_mode)
    target = (yield from planner.target_plan(call.index)) if mode != "native" else None
    if target is None or call.query is None or filters_on_score(call.get("min_score"),
                                                                call.query):
        return (yield untouched)  # min_score thresholds native scores: nothing may move them
    yield from planner.snapshot_check_plan(target)
    stats, _ = yield from planner.resolve_plan(target, call.query)
    if not stats:
        return (yield untouched)
    if planner.dfs and target.shards > 1 and call.get("search_type") is None:
        call.set("search_type", "dfs_query_then_fetch")
    if mode == "rerank":
        return (yield from _rerank_plan(planner, call, target, stats))
    forced = esqlog_mode == "script" or (esqlog_mode is None and planner.mode == "script")
    if mode == "script" and not (yield from planner.script_probe_plan()):
        if forced:
            raise ScriptingUnavailable(
                f"script mode is not available on this cluster (stored script "
                f"{TERM_SCRIPT_ID} not found)",
                "use mode='boost' (same ranking, no scripts), or install the stored script "
                "with esqlog calibrate --install-script") from planner.script_failure
        if planner.script_failure is not None:
            planner.warn_fallback(planner.script_failure)
        mode = "boost"
    original = call.query  # the fallback must rewrite this, not the script rewrite
    call.set("query", planner.rewritten(target, original, stats, mode))
    try:
        return (yield ClientSearch((), call.final_kwargs()))
    except Exception as exc:
        if mode != "script" or not is_script_failure(exc):
            raise
        if forced:
            raise ScriptingUnavailable(
                f"script mode is not available on this cluster ({error_reason(exc)})",
                "use mode='boost' (same ranking, no scripts), or install the stored script "
                "with esqlog calibrate --install-script") from exc
        planner.warn_fallback(exc)
    call.set("query", planner.rewritten(target, original, stats, "boost"))
    return (yield ClientSearch((), call.final_kwargs()))


def _rerank_plan(planner: QlogPlanner, call: _Call, target: IndexTarget,
                 stats: Mapping[tuple[str, str], TextStats]) -> SearchPlan:
    window = _rerank_window(call)
    if window is None:
        return (yield ClientSearch((), call.final_kwargs()))
    start, size = window
    if planner.rerank_in == "engine" and call.get("collapse") is None:
        return (yield from _engine_rerank(planner, call, target, stats, start + size))
    call.set("from", 0)
    call.set("size", max(planner.top_n, start + size))
    texts = planner.scored_texts(target, stats)
    if planner.version is None:
        planner.version = yield from version_plan()
    named = supports_named_scores(planner.flavor, planner.version)
    if named and not any(t.joins for t in texts):
        return (yield from _one_search_rerank(planner, call, target, stats, texts, start, size))
    native = yield ClientSearch((), call.final_kwargs())
    body = _body(native)
    hits = list(body.get("hits", {}).get("hits", []))
    if named:
        scores = yield from term_scores_plan(target.index, hits, texts,
                                             call.get("search_type"))
        corrections = named_score_corrections(hits, scores, texts)
    else:  # older engines: term vectors generated on the fly, exact lengths
        vectors = yield from hit_vectors_plan(hits, sorted({t.field for t in texts}))
        corrections = score_corrections(hits, vectors, texts,
                                        bm25_scale(planner.flavor, planner.version))
    return _response_like(native, _rerank_response(body, reorder_hits(hits, corrections),
                                                   start, size))


def _engine_rerank(planner: QlogPlanner, call: _Call, target: IndexTarget,
                   stats: Mapping[tuple[str, str], TextStats], needed: int) -> SearchPlan:
    """Rerank inside the engine: the untouched query picks each shard's native top-N, then
    a query rescorer replaces their scores by q-log BM25 (the boost rewrite, query_weight 0).

    One round trip, and only the page asked for is fetched: a client-side rerank must fetch
    all N hits, which costs the engine more than the search itself. A rescore the caller
    already asked for runs after esqlog's, on the q-log scores.
    """
    qlog = planner.rewritten(target, call.query, stats, "boost")
    ours = {"window_size": max(planner.top_n, needed),
            "query": {"rescore_query": qlog, "query_weight": 0.0,
                      "rescore_query_weight": 1.0, "score_mode": "total"}}
    theirs = call.get("rescore")
    chain = [ours, *(theirs if isinstance(theirs, list) else [theirs] if theirs else [])]
    call.set("rescore", chain if len(chain) > 1 else ours)
    return (yield ClientSearch((), call.final_kwargs()))


def _one_search_rerank(planner: QlogPlanner, call: _Call, target: IndexTarget,
                       stats: Mapping[tuple[str, str], TextStats], texts: Sequence[ScoredText],
                       start: int, size: int) -> SearchPlan:
    """Rerank in one round trip: the native-scored query with every term clause named.

    The engine returns the native top-N and, per hit, each term's own BM25 score
    (include_named_queries_score); the q-log score is then a weighted sum computed here.
    esqlog's names are taken out of the hits again, so the response is what the client
    would have returned for its own query.
    """
    names = term_names(texts)
    asked_scores = call.get("include_named_queries_score")
    call.set("query", planner.named_native(target, call.query, stats, names))
    call.set("include_named_queries_score", True)
    native = yield ClientSearch((), call.final_kwargs())
    body = _body(native)
    hits = list(body.get("hits", {}).get("hits", []))
    scores = {(h["_index"], h["_id"]): dict(h.get("matched_queries") or {}) for h in hits}
    corrections = named_score_corrections(hits, scores, texts)
    hits = [_without_names(h, asked_scores is True or asked_scores == "true") for h in hits]
    return _response_like(native, _rerank_response(body, reorder_hits(hits, corrections),
                                                   start, size))


def _without_names(hit: dict[str, Any], keep_scores: bool) -> dict[str, Any]:
    """A hit's matched_queries as the caller's own query would have them (esqlog's dropped)."""
    matched = hit.get("matched_queries")
    if not isinstance(matched, Mapping):
        return hit
    own = {k: v for k, v in matched.items() if not k.startswith(NAME_PREFIX)}
    cleaned = dict(hit)
    if not own:
        cleaned.pop("matched_queries", None)
    else:
        cleaned["matched_queries"] = own if keep_scores else list(own)
    return cleaned


class QlogClient:
    """Sync wrapper of ``Elasticsearch`` / ``OpenSearch``."""

    def __init__(self, client: Any, planner: QlogPlanner) -> None:
        self._client = client
        self._engine = Engine(client)
        self.esqlog_planner = planner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def search(self, *args: Any, esqlog_mode: Mode | None = None, **kwargs: Any) -> Any:
        """The client's own ``search``, with calibrated match clauses scored by q-log BM25."""
        plan = search_plan(self.esqlog_planner, args, kwargs, esqlog_mode)
        try:
            step = plan.send(None)
            while True:
                try:
                    if isinstance(step, ClientSearch):
                        result = self._client.search(*step.args, **step.kwargs)
                    elif isinstance(step, Pause):
                        time.sleep(step.seconds)
                        result = None
                    else:
                        result = self._engine.perform(step)
                except Exception as exc:  # handed to the plan; unhandled ones propagate
                    step = plan.throw(exc)
                else:
                    step = plan.send(result)
        except StopIteration as done:
            return done.value


class AsyncQlogClient:
    """Async wrapper of ``AsyncElasticsearch`` / ``AsyncOpenSearch``."""

    def __init__(self, client: Any, planner: QlogPlanner) -> None:
        self._client = client
        self._engine = AsyncEngine(client)
        self.esqlog_planner = planner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    async def search(self, *args: Any, esqlog_mode: Mode | None = None, **kwargs: Any) -> Any:
        """The client's own ``search``, with calibrated match clauses scored by q-log BM25."""
        plan = search_plan(self.esqlog_planner, args, kwargs, esqlog_mode)
        try:
            step = plan.send(None)
            while True:
                try:
                    if isinstance(step, ClientSearch):
                        result = await self._client.search(*step.args, **step.kwargs)
                    elif isinstance(step, Pause):
                        await asyncio.sleep(step.seconds)
                        result = None
                    else:
                        result = await self._engine.perform(step)
                except Exception as exc:  # handed to the plan; unhandled ones propagate
                    step = plan.throw(exc)
                else:
                    step = plan.send(result)
        except StopIteration as done:
            return done.value


def wrap(
    client: Any,
    calibration: Calibration | str | Path | Iterable[Calibration | str | Path],
    mode: Mode = "boost",
    top_n: int = DEFAULT_TOP_N,
    dfs: bool = True,
    joins: bool = False,
    join_weight: float | None = None,
    stats_ttl: float = 60.0,
    stats: StatsSource = "auto",
    script_df_fraction: float = DEFAULT_SCRIPT_DF_FRACTION,
    rerank_in: RerankWhere = "engine",
) -> Any:
    """Wrap an Elasticsearch/OpenSearch client (sync or async) so its searches use q-log IDF.

    ``mode``: ``boost`` (per-term boosts; default, no scripts needed), ``script`` (stored
    Painless script; an error if the cluster cannot run it), ``auto`` (script, falling back
    to boost with one warning), ``rerank`` (native top-``top_n``, rescored client-side) or
    ``native`` (pass everything through). ``joins``: add identifier-join clauses
    (esqlog.joins) weighted ``join_weight``. ``stats_ttl``: seconds a term's global df may be
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
    """
    flavor = flavor_of(client)
    planner = QlogPlanner(_as_calibrations(calibration), mode, top_n, dfs, flavor, joins,
                          join_weight, stats_ttl, stats, script_df_fraction, rerank_in)
    if is_async_client(client) or inspect.iscoroutinefunction(getattr(client, "search", None)):
        return AsyncQlogClient(client, planner)
    return QlogClient(client, planner)
