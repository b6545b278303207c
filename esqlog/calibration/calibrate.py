"""Computing a calibration: what esqlog learns about one field of one index, and its q.

A calibration is computed once (``esqlog calibrate``) from the cluster's own statistics; this
module only reads. The record is written to disk by esqlog.calibration.files (and optionally
into esqlog's own ``esqlog-calibrations`` index by esqlog.calibration.cluster_store, never the
user's), and read back by the query side, which checks that it still belongs to the index it
is used on (esqlog.calibration.freshness).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Any

from esqlog.calibration.plugin import PluginFinding, terms_plugin_plan
from esqlog.calibration.record import Calibration, utc_now
from esqlog.engine.client import Engine
from esqlog.engine.failures import with_retries
from esqlog.engine.paths import index_path
from esqlog.engine.shard_scan import DEFAULT_PARALLEL
from esqlog.engine.steps import Plan, Request
from esqlog.errors import UsageError
from esqlog.scoring.qlog import (
    DEFAULT_PREDICTOR,
    CorpusFeatures,
    Predictor,
    get_predictor,
)
from esqlog.statistics.hapax import (
    DEFAULT_SAMPLE,
    MAX_SAMPLE,
    HapaxEstimate,
    exact_hapax,
    sampled_hapax_plan,
)
from esqlog.statistics.terms import (
    FieldInfo,
    FieldStats,
    IndexInfo,
    field_info_plan,
    field_stats_plan,
    live_doc_count_plan,
    resolve_index_plan,
    shard_routings_plan,
)
from esqlog.statistics.vocabulary import (
    Vocabulary,
    VocabularyScan,
    vocabulary_from_scan,
)
from esqlog.statistics.vocabulary_scan import ScanHook, scan_vocabulary

# --- computing one ------------------------------------------------------------------------


@dataclass
class CalibrationTimings:
    """Wall-clock split of a calibrate run, for the benchmark."""

    total: float = 0.0
    stages: dict[str, float] = dc_field(default_factory=dict)


def calibrate(
    engine: Engine,
    index: str,
    field_name: str,
    exact: bool = False,
    sample: int = DEFAULT_SAMPLE,
    seed: int = 42,
    predictor: str = DEFAULT_PREDICTOR,
    progress_factory: Callable[[str, int], Callable[[int], None]] | None = None,
    timings: CalibrationTimings | None = None,
    parallel: int = DEFAULT_PARALLEL,
) -> Calibration:
    """Compute a field's statistics, h_tok and q. Reads only; writes nothing anywhere.

    Every read plan is retried as a whole on overload, unavailability and network failures
    (:func:`esqlog.engine.failures.with_retries`: capped, jittered exponential backoff); the last
    failure propagates for the caller to describe.
    """
    record, _ = _calibrate(
        engine,
        index,
        field_name,
        exact,
        sample,
        seed,
        predictor,
        progress_factory,
        timings,
        with_vocabulary=False,
        parallel=parallel,
    )
    return record


#: A vocabulary scan of (index, field, shards, progress): what calibrate_with_vocabulary runs
#: instead of its own when given one (the identifiers scan in processes)
Scanner = Callable[[str, str, int, "Callable[[int], None] | None"], VocabularyScan]


def calibrate_with_vocabulary(
    engine: Engine,
    index: str,
    field_name: str,
    predictor: str = DEFAULT_PREDICTOR,
    progress_factory: Callable[[str, int], Callable[[int], None]] | None = None,
    timings: CalibrationTimings | None = None,
    scan_hook: ScanHook | None = None,
    parallel: int = DEFAULT_PARALLEL,
    scanner: Scanner | None = None,
    created_at: str | None = None,
) -> tuple[Calibration, Vocabulary]:
    """Calibrate from one exact pass that also snapshots every term's global df.

    The snapshot lets the query side skip the statistics round trip (esqlog.statistics.vocabulary);
    h_tok comes from the same pass, exactly. Reads only; the caller saves both files.
    ``scan_hook`` also sees every document with its ``_source`` (the identifiers mode's
    statistics, esqlog.identifiers.split_stats); it is restarted whenever the scan is retried.
    ``scanner`` replaces the scan itself (esqlog.identifiers.processes). ``created_at``
    (default: now) stamps the record and the snapshot: two runs given the same one over
    the same index write the same bytes.
    """
    record, vocab = _calibrate(
        engine,
        index,
        field_name,
        True,
        DEFAULT_SAMPLE,
        42,
        predictor,
        progress_factory,
        timings,
        with_vocabulary=True,
        scan_hook=scan_hook,
        parallel=parallel,
        scanner=scanner,
        created_at=created_at,
    )
    assert vocab is not None
    return record, vocab


def _calibrate(
    engine: Engine,
    index: str,
    field_name: str,
    exact: bool,
    sample: int,
    seed: int,
    predictor: str,
    progress_factory: Callable[[str, int], Callable[[int], None]] | None,
    timings: CalibrationTimings | None,
    with_vocabulary: bool,
    scan_hook: ScanHook | None = None,
    parallel: int = DEFAULT_PARALLEL,
    scanner: Scanner | None = None,
    created_at: str | None = None,
) -> tuple[Calibration, Vocabulary | None]:
    chosen: Predictor = get_predictor(predictor)
    stamp = created_at or utc_now()  # the record's and the snapshot's: one moment
    started = time.perf_counter()
    reads = _read_field(engine, index, field_name)
    info, live, fstats = reads.info, reads.live, reads.fstats
    stats_done = time.perf_counter()
    vocab: Vocabulary | None = None
    if with_vocabulary:
        progress = progress_factory("term vectors (vocabulary)", live) if progress_factory else None

        def run_scan() -> VocabularyScan:
            if scan_hook is not None:
                scan_hook.restart()
            if scanner is not None:
                return scanner(info.name, field_name, info.shards, progress)
            return scan_vocabulary(
                engine,
                info.name,
                field_name,
                info.shards,
                parallel,
                progress=progress,
                on_doc=scan_hook,
            )

        scan: VocabularyScan = with_retries(run_scan)
        hapax = scan.hapax()
        vocab = vocabulary_from_scan(
            scan,
            index=info.name,
            index_uuid=info.uuid,
            field=field_name,
            doc_count=fstats.doc_count,
            sum_ttf=fstats.sum_ttf,
            live_docs=live,
            created_at=stamp,
        )
    else:
        hapax = with_retries(
            lambda: _hapax(
                engine,
                info,
                field_name,
                reads.routings,
                exact,
                sample,
                seed,
                live,
                progress_factory,
                parallel,
            )
        )
    hapax_done = time.perf_counter()
    features = CorpusFeatures(h_tok=hapax.h_tok, doc_count=fstats.doc_count, avgdl=fstats.avgdl)
    q = chosen.predict(features)
    if timings is not None:
        timings.stages = {"statistics": stats_done - started, "hapax": hapax_done - stats_done}
        timings.total = time.perf_counter() - started
    return _record(engine, reads, field_name, chosen, q, hapax, vocab, stamp), vocab


@dataclass(frozen=True)
class _FieldReads:
    """What the statistics reads found: everything the record needs besides h_tok and q."""

    info: IndexInfo
    live: int
    finfo: FieldInfo
    routings: tuple[str, ...]
    fstats: FieldStats
    plugin: PluginFinding


def _read_field(engine: Engine, index: str, field_name: str) -> _FieldReads:
    """The index, field and statistics reads, each retried on its own, in the order that
    makes the first failure the one that names the real problem."""

    def read(make_plan: Callable[[], Plan[Any]]) -> Any:
        return with_retries(lambda: engine.run(make_plan()))

    info: IndexInfo = read(lambda: resolve_index_plan(index))
    # The live count first: it is cheap and the first read that needs the shards, so an index
    # whose shards are unavailable fails here with the engine's 503 (OpenSearch answers the
    # field-mapping API of such an index with an empty 404).
    live: int = read(lambda: live_doc_count_plan(info.name))
    finfo: FieldInfo = read(lambda: field_info_plan(info.name, field_name))
    if "." in field_name:
        read(lambda: check_field_path_plan(info.name, field_name))
    routings: tuple[str, ...] = read(lambda: shard_routings_plan(info.name, info.shards))
    fstats: FieldStats = read(lambda: field_stats_plan(info.name, field_name, routings))
    plugin: PluginFinding = read(terms_plugin_plan)  # engine_query="auto" reads it
    if live == 0 or fstats.doc_count == 0 or fstats.sum_ttf == 0:
        raise UsageError(
            f"field {field_name!r} of index {info.name!r} has no indexed text",
            "index documents first, or pass a field that has text",
        )
    return _FieldReads(info, live, finfo, routings, fstats, plugin)


def _record(
    engine: Engine,
    reads: _FieldReads,
    field_name: str,
    chosen: Predictor,
    q: float,
    hapax: HapaxEstimate,
    vocab: Vocabulary | None,
    stamp: str,
) -> Calibration:
    """The record of one run: what was read, what was estimated, and what produced it."""
    info, finfo, fstats = reads.info, reads.finfo, reads.fstats
    return Calibration(
        index=info.name,
        index_uuid=info.uuid,
        field=field_name,
        q=round(q, 4),
        h_tok=hapax.h_tok,
        h_tok_low=hapax.low,
        h_tok_high=hapax.high,
        h_tok_method=hapax.method,
        doc_count=fstats.doc_count,
        live_docs=reads.live,
        sum_ttf=fstats.sum_ttf,
        avgdl=fstats.avgdl,
        shards=info.shards,
        analyzer=finfo.analyzer,
        splits_identifiers=finfo.splits_identifiers,
        standard_analysis=finfo.standard,
        search_analyzer=finfo.search_analyzer if finfo.search_analyzer != finfo.analyzer else None,
        predictor=chosen.name,
        predictor_version=chosen.version,
        engine=engine.flavor,
        engine_version=".".join(map(str, engine.version)),
        vocabulary_terms=len(vocab) if vocab is not None else 0,
        created_at=stamp,
        terms_plugin=reads.plugin.version,
    )


def check_field_path_plan(index: str, field_name: str) -> Plan[None]:
    """Refuse a multi-field (``content.code``) or a field inside a nested object, by name.

    esqlog reads a query's statistics by analyzing it as an artificial document with the
    field set; such a document cannot set a subfield, and nested fields live in hidden
    documents the field statistics do not count. Without this check both fail later with a
    message about shards or empty fields that sends the user to the wrong place.
    """
    mapping = yield Request("GET", index_path(index, "_mapping"))
    node: Any = ((mapping or {}).get(index) or {}).get("mappings") or {}
    parts = field_name.split(".")
    for depth, part in enumerate(parts):
        props = node.get("properties") or {} if isinstance(node, Mapping) else {}
        here = ".".join(parts[: depth + 1])
        if part not in props and isinstance(node, Mapping) and part in (node.get("fields") or {}):
            parent = ".".join(parts[:depth])
            raise UsageError(
                f"field {field_name!r} is a multi-field (subfield) of {parent!r}: esqlog "
                "analyzes queries through an artificial document, which cannot set a subfield",
                "calibrate a top-level text field, or map this text as a field of its own",
            )
        node = props.get(part) or {}
        if depth < len(parts) - 1 and node.get("type") == "nested":
            raise UsageError(
                f"field {field_name!r} is inside the nested object {here!r}, whose documents "
                "field statistics and match queries do not see",
                "calibrate a field outside nested objects (or copy_to a top-level field)",
            )


def _hapax(
    engine: Engine,
    info: IndexInfo,
    field_name: str,
    routings: tuple[str, ...],
    exact: bool,
    sample: int,
    seed: int,
    live: int,
    progress_factory: Callable[[str, int], Callable[[int], None]] | None,
    parallel: int,
) -> HapaxEstimate:
    if exact:
        progress = progress_factory("term vectors (exact)", live) if progress_factory else None
        return exact_hapax(engine, info.name, field_name, routings, parallel, progress)
    size = min(sample, live)
    check_sample(sample)
    progress = progress_factory("term vectors (sample)", size) if progress_factory else None
    return engine.run(
        sampled_hapax_plan(info.name, field_name, routings, size, live, seed, progress=progress)
    )


def check_sample(sample: int) -> int:
    """The sample size, or a one-line error whose fix points the right way."""
    if not 1 <= sample <= MAX_SAMPLE:
        direction = "a larger" if sample < 1 else "a smaller"
        raise UsageError(
            f"--sample must be between 1 and {MAX_SAMPLE}, got {sample}",
            f"pass {direction} --sample, or --exact to read every document",
        )
    return sample
