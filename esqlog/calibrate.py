"""The calibration record: what esqlog learned about one field of one index, and its q.

A calibration is computed once (``esqlog calibrate``) from the cluster's own statistics,
written atomically as JSON (and optionally into esqlog's own ``esqlog-calibrations``
index, never the user's), and read back by the query side, which checks that it still
belongs to the index it is used on.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, replace
from dataclasses import field as dc_field
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

from esqlog import __version__
from esqlog.atomic import atomic_write
from esqlog.engine import Engine, Plan, Request, quote_path, with_retries
from esqlog.errors import UsageError
from esqlog.hapax import (
    DEFAULT_SAMPLE,
    MAX_SAMPLE,
    HapaxEstimate,
    exact_hapax_plan,
    sampled_hapax_plan,
)
from esqlog.identifier_stats import SplitCollector
from esqlog.qlog import (
    DEFAULT_PREDICTOR,
    CorpusFeatures,
    Predictor,
    get_predictor,
    validate_q,
)
from esqlog.stats import (
    FieldInfo,
    FieldStats,
    IndexInfo,
    field_info_plan,
    field_stats_plan,
    live_doc_count_plan,
    resolve_index_plan,
    shard_routings_plan,
)
from esqlog.vocabulary import (
    Vocabulary,
    VocabularyScan,
    save_vocabulary,
    scan_vocabulary_plan,
    vocabulary_from_scan,
)

SCHEMA_VERSION = 1
CALIBRATION_INDEX = "esqlog-calibrations"
TERM_SCRIPT_ID = "esqlog-qlog-term"
STALE_DRIFT = 0.10  # relative change in live documents that makes a calibration stale


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class Calibration:
    """Everything the query side needs, plus provenance for humans."""

    index: str
    index_uuid: str
    field: str
    q: float
    h_tok: float
    h_tok_low: float
    h_tok_high: float
    h_tok_method: str
    doc_count: int  # N as Lucene counts it (deleted docs included)
    live_docs: int
    sum_ttf: int
    avgdl: float
    shards: int
    analyzer: str
    splits_identifiers: bool
    predictor: str
    predictor_version: str
    engine: str
    engine_version: str
    idf_form: str = "lucene"
    join_weight: float | None = None
    #: index and search analysis are the built-in standard analyzer (see esqlog.analysis)
    standard_analysis: bool = False
    #: file name (beside the calibration file) of the vocabulary snapshot, if one was built
    vocabulary: str | None = None
    vocabulary_sha256: str | None = None
    vocabulary_terms: int = 0
    esqlog_version: str = __version__
    schema: int = SCHEMA_VERSION
    created_at: str = dc_field(default_factory=lambda: _now())
    #: folder of the file this record was read from (not stored): where its vocabulary lives
    location: str | None = dc_field(default=None, compare=False, repr=False)

    @property
    def regime(self) -> str:
        """A plain-words forecast of what q-log IDF will do on this field."""
        if self.splits_identifiers:
            return ("identifiers are already split at index time: q-log IDF adds little "
                    "here (q stays near 1)")
        if self.q <= 0.85:
            return "identifier-heavy code: expect a large gain"
        if self.q < 0.97:
            return "mixed code and prose: expect a moderate gain"
        return "prose-like: q ~ 1, little change"

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("location")
        return data

    def vocabulary_path(self) -> Path | None:
        """Where this record's vocabulary snapshot is, or None when it has none."""
        if not self.vocabulary:
            return None
        path = Path(self.vocabulary)
        return path if path.is_absolute() else Path(self.location or ".") / path

    @classmethod
    def from_json(cls, data: Mapping[str, Any], source: str = "calibration") -> Calibration:
        """Parse and validate a stored record, naming what is wrong with it."""
        if not isinstance(data, Mapping):
            raise UsageError(f"{source} is not a JSON object", "re-run esqlog calibrate")
        schema = data.get("schema")
        if schema is None:
            raise UsageError(f"{source} has no schema version (not an esqlog calibration?)",
                             "re-run esqlog calibrate")
        if not isinstance(schema, int) or schema > SCHEMA_VERSION:
            raise UsageError(
                f"{source} was written by a newer esqlog ({data.get('esqlog_version', '?')}, "
                f"schema {schema})", "upgrade esqlog or re-run esqlog calibrate with this version")
        names = {f.name for f in cls.__dataclass_fields__.values()} - {"location"}
        missing = [n for n in ("index", "index_uuid", "field", "q") if n not in data]
        if missing:
            raise UsageError(f"{source} lacks {', '.join(missing)}", "re-run esqlog calibrate")
        try:
            record = cls(**{k: v for k, v in data.items() if k in names})
            validate_q(record.q)
        except (TypeError, ValueError) as exc:
            raise UsageError(f"{source} is invalid ({exc})", "re-run esqlog calibrate") from None
        return record


# --- files --------------------------------------------------------------------------------

def save_calibration(calibration: Calibration, path: str | Path) -> Path:
    """Write the record as JSON atomically (esqlog.atomic): old file or new, never partial."""
    payload = json.dumps(calibration.to_json(), indent=2, sort_keys=True) + "\n"
    return atomic_write(path, payload.encode("utf-8"))


def load_calibration(path: str | Path) -> Calibration:
    """Read a calibration file with a one-line error for every way it can be wrong."""
    source = Path(path)
    if not source.exists():
        raise UsageError(f"calibration file {str(source)!r} does not exist",
                         "run esqlog calibrate --out FILE first")
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise UsageError(f"calibration file {str(source)!r} is not UTF-8 text",
                         "re-run esqlog calibrate") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"calibration file {str(source)!r} is truncated or corrupt "
                         f"(line {exc.lineno})", "re-run esqlog calibrate") from None
    record = Calibration.from_json(data, f"calibration file {str(source)!r}")
    return replace(record, location=str(source.parent))


# --- checks against the live index ----------------------------------------------------------

@dataclass(frozen=True)
class Freshness:
    """How a calibration relates to the index it is about to be used on."""

    same_index: bool
    drift: float  # relative change of live documents since calibration

    @property
    def stale(self) -> bool:
        return self.drift > STALE_DRIFT


def freshness_plan(calibration: Calibration, index: str) -> Plan[Freshness]:
    """Compare UUID and live document count with the index as it is now."""
    uuid, live = yield from index_identity_plan(index)
    return freshness_of(calibration, uuid, live)


def index_identity_plan(index: str) -> Plan[tuple[str, int]]:
    """(UUID, live documents) of the index as it is now: what freshness is judged by."""
    info = yield from resolve_index_plan(index)
    live = yield from live_doc_count_plan(info.name)
    return info.uuid, live


def freshness_of(calibration: Calibration, uuid: str, live: int) -> Freshness:
    """How a calibration relates to an index with this UUID and live document count."""
    base = max(calibration.live_docs, 1)
    return Freshness(uuid == calibration.index_uuid, abs(live - calibration.live_docs) / base)


def check_calibration_plan(calibration: Calibration, index: str) -> Plan[Freshness]:
    """Refuse a calibration of another index; report drift for the caller to warn about."""
    fresh = yield from freshness_plan(calibration, index)
    if not fresh.same_index:
        raise UsageError(
            f"the calibration is for index {calibration.index!r} (uuid "
            f"{calibration.index_uuid}), not for {index!r} as it exists now",
            f"run esqlog calibrate --index {index} --field {calibration.field}")
    return fresh


def stale_warning(calibration: Calibration, fresh: Freshness) -> str | None:
    """The warning text for a stale calibration, or None."""
    if not fresh.stale:
        return None
    return (f"warning: the index changed by {fresh.drift:.0%} of its documents since it was "
            f"calibrated ({calibration.created_at}); re-run esqlog calibrate --index "
            f"{calibration.index} --field {calibration.field}")


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
) -> Calibration:
    """Compute a field's statistics, h_tok and q. Reads only; writes nothing anywhere.

    Every read plan is retried as a whole on overload, unavailability and network failures
    (:func:`esqlog.engine.with_retries`: capped, jittered exponential backoff); the last
    failure propagates for the caller to describe.
    """
    record, _ = _calibrate(engine, index, field_name, exact, sample, seed, predictor,
                           progress_factory, timings, with_vocabulary=False)
    return record


def calibrate_with_vocabulary(
    engine: Engine,
    index: str,
    field_name: str,
    predictor: str = DEFAULT_PREDICTOR,
    progress_factory: Callable[[str, int], Callable[[int], None]] | None = None,
    timings: CalibrationTimings | None = None,
    scan_hook: SplitCollector | None = None,
) -> tuple[Calibration, Vocabulary]:
    """Calibrate from one exact pass that also snapshots every term's global df.

    The snapshot lets the query side skip the statistics round trip (esqlog.vocabulary);
    h_tok comes from the same pass, exactly. Reads only; the caller saves both files.
    ``scan_hook`` also sees every document with its ``_source`` (the identifiers mode's
    statistics, esqlog.identifier_stats); it is restarted whenever the scan is retried.
    """
    record, vocab = _calibrate(engine, index, field_name, True, DEFAULT_SAMPLE, 42, predictor,
                               progress_factory, timings, with_vocabulary=True,
                               scan_hook=scan_hook)
    assert vocab is not None
    return record, vocab


def _calibrate(
    engine: Engine, index: str, field_name: str, exact: bool, sample: int, seed: int,
    predictor: str, progress_factory: Callable[[str, int], Callable[[int], None]] | None,
    timings: CalibrationTimings | None, with_vocabulary: bool,
    scan_hook: SplitCollector | None = None,
) -> tuple[Calibration, Vocabulary | None]:
    chosen: Predictor = get_predictor(predictor)
    started = time.perf_counter()

    def read(make_plan: Callable[[], Plan[Any]]) -> Any:
        return with_retries(lambda: engine.run(make_plan()))

    info: IndexInfo = read(lambda: resolve_index_plan(index))
    # The live count first: it is cheap and the first read that needs the shards, so an index
    # whose shards are unavailable fails here with the engine's 503 (OpenSearch answers the
    # field-mapping API of such an index with an empty 404).
    live: int = read(lambda: live_doc_count_plan(info.name))
    finfo: FieldInfo = read(lambda: field_info_plan(info.name, field_name))
    routings: tuple[str, ...] = read(lambda: shard_routings_plan(info.name, info.shards))
    fstats: FieldStats = read(lambda: field_stats_plan(info.name, field_name, routings))
    if live == 0 or fstats.doc_count == 0 or fstats.sum_ttf == 0:
        raise UsageError(f"field {field_name!r} of index {info.name!r} has no indexed text",
                         "index documents first, or pass a field that has text")
    stats_done = time.perf_counter()
    vocab: Vocabulary | None = None
    if with_vocabulary:
        progress = (progress_factory("term vectors (vocabulary)", live)
                    if progress_factory else None)

        def scan_plan() -> Plan[VocabularyScan]:
            if scan_hook is not None:
                scan_hook.restart()
            return scan_vocabulary_plan(info.name, field_name, info.shards, progress=progress,
                                        on_doc=scan_hook)

        scan: VocabularyScan = read(scan_plan)
        hapax = scan.hapax()
        vocab = vocabulary_from_scan(
            scan, index=info.name, index_uuid=info.uuid, field=field_name,
            doc_count=fstats.doc_count, sum_ttf=fstats.sum_ttf, live_docs=live,
            created_at=_now())
    else:
        hapax = read(lambda: _hapax_plan(info, field_name, routings, exact, sample, seed, live,
                                         progress_factory))
    hapax_done = time.perf_counter()
    features = CorpusFeatures(h_tok=hapax.h_tok, doc_count=fstats.doc_count, avgdl=fstats.avgdl)
    q = chosen.predict(features)
    if timings is not None:
        timings.stages = {"statistics": stats_done - started, "hapax": hapax_done - stats_done}
        timings.total = time.perf_counter() - started
    record = Calibration(
        index=info.name, index_uuid=info.uuid, field=field_name, q=round(q, 4),
        h_tok=hapax.h_tok, h_tok_low=hapax.low, h_tok_high=hapax.high, h_tok_method=hapax.method,
        doc_count=fstats.doc_count, live_docs=live, sum_ttf=fstats.sum_ttf, avgdl=fstats.avgdl,
        shards=info.shards, analyzer=finfo.analyzer, splits_identifiers=finfo.splits_identifiers,
        standard_analysis=finfo.standard,
        predictor=chosen.name, predictor_version=chosen.version, engine=engine.flavor,
        engine_version=".".join(map(str, engine.version)),
        vocabulary_terms=len(vocab) if vocab is not None else 0,
    )
    return record, vocab


def save_with_vocabulary(record: Calibration, vocab: Vocabulary, path: str | Path) -> Calibration:
    """Write the snapshot beside the calibration (``NAME.vocab.npz``), then the record.

    The snapshot goes first and the record names it with its checksum, so a reader never
    sees a record pointing at a missing or half-written file, nor at another run's snapshot.
    """
    target = Path(path)
    vocab_path = target.with_name(target.name.removesuffix(".json") + ".vocab.npz")
    _, digest = save_vocabulary(vocab, vocab_path)
    linked = replace(record, vocabulary=vocab_path.name, vocabulary_sha256=digest,
                     vocabulary_terms=len(vocab), location=str(target.parent))
    save_calibration(linked, target)
    return linked


def _hapax_plan(
    info: IndexInfo, field_name: str, routings: tuple[str, ...], exact: bool, sample: int,
    seed: int, live: int, progress_factory: Callable[[str, int], Callable[[int], None]] | None,
) -> Plan[HapaxEstimate]:
    if exact:
        progress = progress_factory("term vectors (exact)", live) if progress_factory else None
        return (yield from exact_hapax_plan(info.name, field_name, routings, progress=progress))
    size = min(sample, live)
    if not 1 <= sample <= MAX_SAMPLE:
        raise UsageError(f"--sample must be between 1 and {MAX_SAMPLE}, got {sample}",
                         "pass a smaller --sample, or --exact to read every document")
    progress = progress_factory("term vectors (sample)", size) if progress_factory else None
    return (yield from sampled_hapax_plan(info.name, field_name, routings, size, live, seed,
                                          progress=progress))


# --- cluster-side storage (esqlog's own index and stored script only) -----------------------

def painless_source(name: str) -> str:
    """A Painless source shipped in painless/ (installed as a stored script)."""
    return (resources.files("esqlog") / "painless" / f"{name}.painless").read_text("utf-8")


def install_script_plan(script_id: str = TERM_SCRIPT_ID) -> Plan[None]:
    """Store the per-term rescaling script under a fixed id (constant source, params only)."""
    yield Request("PUT", f"/_scripts/{script_id}", body={
        "script": {"lang": "painless", "source": painless_source(script_id)}})


def store_in_cluster_plan(calibration: Calibration) -> Plan[str]:
    """Keep the record in esqlog's own index, one document per index+field."""
    doc_id = f"{calibration.index}:{calibration.field}"
    yield Request("PUT", f"/{CALIBRATION_INDEX}/_doc/{quote_path(doc_id)}",
                  {"refresh": "true"}, calibration.to_json())
    return doc_id


def load_from_cluster_plan(index: str, field_name: str) -> Plan[Calibration]:
    """Read a calibration kept with --store-in-cluster."""
    doc_id = quote_path(f"{index}:{field_name}")
    try:
        body = yield Request("GET", f"/{CALIBRATION_INDEX}/_doc/{doc_id}")
    except Exception as exc:
        from esqlog.engine import error_status

        if error_status(exc) == 404:
            raise UsageError(f"no calibration stored in the cluster for {index}/{field_name}",
                             "run esqlog calibrate --store-in-cluster") from None
        raise
    return Calibration.from_json(body.get("_source", {}), f"stored calibration {doc_id}")


