"""The calibration record (:class:`Calibration`) and every field's type and range, in one place.

Why a module of its own: calibration files (and records kept in the cluster) are untrusted
input. They are edited by hand, truncated, copied between machines, or crafted; each field
ends up somewhere that assumes its type (a URL path, a format string, a loop bound, an IDF
formula), so a wrong type must stop here with one line naming the field, not become a
traceback three modules later. The checks are plain data below so that a new field cannot
be added to :class:`esqlog.calibration.record.Calibration` without a rule (a test compares the two).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import MISSING, asdict, dataclass
from dataclasses import field as dc_field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from esqlog.errors import UsageError
from esqlog.scoring.qlog import IDF_FUNCTIONS
from esqlog.version import __version__

SCHEMA_VERSION = 1
MAX_SHARDS = 1024  # the engines' own limit on number_of_shards
MAX_TEXT = 4096  # characters of any text field (index names are at most 255 bytes)
_INDEX_FORBIDDEN = set('\\/*?"<>| ,#:') | {"\x00"}
_SHA256 = re.compile(r"[0-9a-f]{64}")
#: a plugin version as the nodes API reports it (1.3.0, 1.3.0-SNAPSHOT), or "" for absent
_PLUGIN_VERSION = re.compile(r"(?:[0-9][0-9A-Za-z.+-]{0,63})?")
_WORD_LISTS = re.compile(r"esqlog-words-[0-9a-f]{16}")

Check = Callable[[Any], str | None]  # None when valid, else what is wrong


def _integer(low: int, high: int | None = None) -> Check:
    def check(value: Any) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int):
            return f"must be an integer, got {_shown(value)}"
        if value < low or (high is not None and value > high):
            bound = f"between {low:,} and {high:,}" if high is not None else f">= {low:,}"
            return f"must be {bound}, got {value:,}"
        return None

    return check


def _number(low: float, high: float | None = None) -> Check:
    def check(value: Any) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f"must be a number, got {_shown(value)}"
        if not math.isfinite(value) or value < low or (high is not None and value > high):
            bound = f"between {low:g} and {high:g}" if high is not None else f">= {low:g}"
            return f"must be a number {bound}, got {value!r}"
        return None

    return check


def _text(required: bool = False) -> Check:
    def check(value: Any) -> str | None:
        if not isinstance(value, str):
            return f"must be a string, got {_shown(value)}"
        if required and not value:
            return "must not be empty"
        if len(value) > MAX_TEXT or "\x00" in value:
            return f"must be at most {MAX_TEXT} characters without NUL"
        return None

    return check


def _flag(value: Any) -> str | None:
    return None if isinstance(value, bool) else f"must be true or false, got {_shown(value)}"


def _index_name(value: Any) -> str | None:
    wrong = _text(required=True)(value)
    if wrong:
        return wrong
    if (
        value in (".", "..")
        or value.startswith(("-", "_", "+"))
        or (set(value) & _INDEX_FORBIDDEN)
        or len(value.encode("utf-8")) > 255
    ):
        return f"is not a valid index name: {_shown(value)}"
    return None


def _idf_form(value: Any) -> str | None:
    if value not in IDF_FUNCTIONS:
        return f"must be one of {', '.join(sorted(IDF_FUNCTIONS))}, got {_shown(value)}"
    return None


def _optional(check: Check) -> Check:
    return lambda value: None if value is None else check(value)


def _word_lists(value: Any) -> str | None:
    wrong = _index_name(value)
    if wrong:
        return wrong
    if not _WORD_LISTS.fullmatch(value):
        return f"must name an esqlog-words-<16 hex digits> index, got {_shown(value)}"
    return None


def _plugin_version(value: Any) -> str | None:
    if not isinstance(value, str) or not _PLUGIN_VERSION.fullmatch(value):
        return (
            f"must be a version such as 1.3.0, or empty for a cluster without the "
            f"plugin, got {_shown(value)}"
        )
    return None


def _sha256(value: Any) -> str | None:
    if not isinstance(value, str) or not _SHA256.fullmatch(value):
        return f"must be 64 lowercase hex digits, got {_shown(value)}"
    return None


_PROBABILITY = _number(0.0, 1.0)
_COUNT = _integer(0)

#: field -> its check; the Calibration dataclass has exactly these fields (tested)
FIELDS: dict[str, Check] = {
    "index": _index_name,
    "index_uuid": _text(required=True),
    "field": _text(required=True),
    "q": _number(0.0, 2.0),
    "h_tok": _PROBABILITY,
    "h_tok_low": _PROBABILITY,
    "h_tok_high": _PROBABILITY,
    "h_tok_method": _text(),
    "doc_count": _COUNT,
    "live_docs": _COUNT,
    "sum_ttf": _COUNT,
    "avgdl": _number(0.0),
    "shards": _integer(1, MAX_SHARDS),
    "analyzer": _text(),
    "splits_identifiers": _flag,
    "predictor": _text(),
    "predictor_version": _text(),
    "engine": _text(),
    "engine_version": _text(),
    "idf_form": _idf_form,
    "join_weight": _optional(_number(0.0, 1.0)),
    "standard_analysis": _flag,
    "search_analyzer": _optional(_text(required=True)),
    # any path: the loader reads it only as a bounded regular file (esqlog.atomic)
    "vocabulary": _optional(_text(required=True)),
    "vocabulary_sha256": _optional(_sha256),
    "vocabulary_terms": _COUNT,
    "identifiers_applies": _optional(_flag),
    "code_share": _optional(_PROBABILITY),
    "code_basis": _optional(_text(required=True)),
    "terms_plugin": _optional(_plugin_version),
    "word_lists": _optional(_word_lists),
    "refreshed_docs": _COUNT,
    "index_operations": _optional(_COUNT),
    "esqlog_version": _text(),
    "schema": _integer(1),
    "created_at": _text(),
}


def _shown(value: Any, limit: int = 40) -> str:
    """A short rendering of a bad value for the message (long or nested values cut)."""
    text = repr(value)
    kind = type(value).__name__
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return f"{text} ({kind})" if not isinstance(value, str) else text


def problems(data: Mapping[str, Any], required: set[str]) -> list[str]:
    """Every rule ``data`` breaks, as ``field must ...`` phrases (empty when valid).

    Fields not in FIELDS are ignored (a later esqlog of the same schema may add some);
    ``required`` are the fields without a default.
    """
    found = [f"lacks {name}" for name in FIELDS if name in required and name not in data]
    for name, check in FIELDS.items():
        if name in data:
            wrong = check(data[name])
            if wrong:
                found.append(f"field {name!r} {wrong}")
    return found


def utc_now() -> str:
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
    #: index and search analysis are the built-in standard analyzer (see esqlog.statistics.analysis)
    standard_analysis: bool = False
    #: the field's search analyzer when it differs from ``analyzer`` (else None)
    search_analyzer: str | None = None
    #: file name (beside the calibration file) of the vocabulary snapshot, if one was built
    vocabulary: str | None = None
    vocabulary_sha256: str | None = None
    vocabulary_terms: int = 0
    #: with the identifiers statistics beside the snapshot: whether the field is code enough
    #: for that mode (esqlog.identifiers.split_stats.APPLIES_SHARE); None without them
    identifiers_applies: bool | None = None
    #: the share of tokens that are identifiers which split, in the documents the code/prose
    #: rule reads (esqlog.identifiers.code_rule: the code documents where the index has a
    #: language field), and which documents those were; None when not measured
    code_share: float | None = None
    code_basis: str | None = None
    #: the esqlog-terms plugin version every data node runs ("" when a data node lacks
    #: it); None when not checked (older calibrations, or the nodes API was refused):
    #: IdentifierSettings(engine_query="auto") then uses spans (esqlog.calibration.plugin)
    terms_plugin: str | None = None
    #: the esqlog-owned index calibrate wrote each sub-word's compounds into, where the
    #: esqlog-terms plugin (1.9.0 and later) plans identifiers queries on the node
    #: (esqlog.identifiers.word_lists); None when it wrote none
    word_lists: str | None = None
    #: documents written or deleted by esqlog index's incremental refreshes of the snapshot
    #: since the last full scan (esqlog.indexing.refresh): h_tok and q are as old as that scan
    refreshed_docs: int = 0
    #: the index's write operations (sum of max_seq_no + 1) when esqlog index last brought
    #: the record up to date; a different count means writes it has not seen
    index_operations: int | None = None
    esqlog_version: str = __version__
    schema: int = SCHEMA_VERSION
    created_at: str = dc_field(default_factory=lambda: utc_now())
    #: folder of the file this record was read from (not stored): where its vocabulary lives
    location: str | None = dc_field(default=None, compare=False, repr=False)

    @property
    def regime(self) -> str:
        """A plain-words forecast of what q-log IDF will do on this field."""
        if self.splits_identifiers:
            return (
                "identifiers are already split at index time: expect a smaller gain "
                f"than q {self.q:.3f} alone suggests"
            )
        if self.q <= 0.85:
            return "identifier-heavy code: expect a large gain"
        if self.q < 0.97:
            return "mixed code and prose: expect a moderate gain"
        return "prose-like: q ~ 1, little change"

    @property
    def analysis_warning(self) -> str | None:
        """Why queries on this field are analyzed differently from its documents, or None."""
        if not self.search_analyzer:
            return None
        return (
            f"field {self.field!r} is searched with analyzer {self.search_analyzer!r} but "
            f"indexed with {self.analyzer!r}: wrapped searches analyze queries with "
            f"{self.search_analyzer!r} as the engine does, and leave clauses whose search "
            "analyzer can emit token graphs (synonyms, shingles) to the engine"
        )

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
        fix = "re-run esqlog calibrate"
        if not isinstance(data, Mapping):
            raise UsageError(f"{source} is not a JSON object", fix)
        schema = data.get("schema")
        if schema is None:
            raise UsageError(f"{source} has no schema version (not an esqlog calibration?)", fix)
        if type(schema) is int and schema > SCHEMA_VERSION:
            version = data.get("esqlog_version")
            shown = version if isinstance(version, str) and len(version) < 40 else "?"
            raise UsageError(
                f"{source} was written by a newer esqlog ({shown}, schema {schema})",
                "upgrade esqlog or re-run esqlog calibrate with this version",
            )
        fields = cls.__dataclass_fields__.values()
        required = {f.name for f in fields if f.default is MISSING and f.default_factory is MISSING}
        wrong = problems(data, required)
        if wrong:
            more = f" (and {len(wrong) - 1} more)" if len(wrong) > 1 else ""
            raise UsageError(f"{source} is invalid: {wrong[0]}{more}", fix)
        names = {f.name for f in fields} - {"location"}
        return cls(**{k: v for k, v in data.items() if k in names})
