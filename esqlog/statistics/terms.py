"""Term statistics from a live cluster, global across shards and exactly as Lucene counts them.

The method (proved against ``explain`` under ``dfs_query_then_fetch`` in the tests):
the term-vectors API, given an *artificial* document, analyzes it with the field's analyzer
and reports, for every resulting term, the document frequency and the field statistics
(``doc_count``, ``sum_ttf``) **of the one shard it was routed to**. Those numbers come from
the shard's Lucene index reader, so deleted-but-unmerged documents count, just as they do in
scoring. Sending one artificial document per shard (each with a routing value that the
cluster itself maps to that shard, from ``_search_shards``) in a single ``_mtermvectors``
request and summing gives the global N, sum_ttf and n(t) that a DFS query uses. One round
trip serves both the analysis of a query and its statistics.

All functions here are *plans* (see :mod:`esqlog.engine.client`): they yield requests and receive
responses, so the same code runs on sync and async clients of both engines.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from dataclasses import field as dc_field
from typing import Any

from esqlog.engine.failures import error_status
from esqlog.engine.paths import index_path
from esqlog.engine.steps import Plan, Request
from esqlog.errors import ClusterError, UsageError

MAX_ROUTING_PROBES = 5000
TEXT_TYPES = frozenset({"text", "match_only_text"})
#: Signs in an analyzer definition that identifiers are already split at index time.
IDENTIFIER_SPLITTERS = ("word_delimiter", "ngram", "edge_ngram", "pattern", "camel", "kuromoji")


@dataclass(frozen=True)
class IndexInfo:
    """A concrete index behind the name the user gave (alias names resolve to it)."""

    name: str
    uuid: str
    shards: int
    #: index.query.default_field: what a multi_match / query_string without fields searches
    default_fields: tuple[str, ...] = ("*",)


@dataclass(frozen=True)
class FieldInfo:
    """What the mapping says about the field esqlog scores."""

    name: str
    type: str
    analyzer: str
    search_analyzer: str
    similarity: str | None
    analyzer_definition: Mapping[str, Any] = dc_field(default_factory=dict)
    #: index and search analysis are both the built-in ``standard`` analyzer, so esqlog can
    #: analyze ASCII queries itself (esqlog.statistics.analysis) and skip a round trip
    standard: bool = False

    @property
    def splits_identifiers(self) -> bool:
        """True when the index-time analyzer already breaks camelCase/snake_case apart."""
        text = repr(self.analyzer_definition).lower()
        return any(sign in text for sign in IDENTIFIER_SPLITTERS)


@dataclass(frozen=True)
class FieldStats:
    """Global field statistics as Lucene's BM25 sees them (deleted documents included)."""

    doc_count: int  # N: documents that have the field
    sum_ttf: int  # all tokens of the field
    sum_doc_freq: int

    @property
    def avgdl(self) -> float:
        """Average field length, Lucene's avgdl = sum_ttf / N."""
        return self.sum_ttf / self.doc_count if self.doc_count else 0.0


@dataclass(frozen=True)
class TextStats:
    """A text analyzed by the field's search analyzer (see esqlog.statistics.analysis), with the
    global
    statistics of its terms."""

    terms: tuple[str, ...]  # in position order, duplicates kept
    positions: tuple[int, ...]
    df: Mapping[str, int]
    field: FieldStats
    extra_df: Mapping[str, int] = dc_field(default_factory=dict)  # asked-for exact terms

    def __post_init__(self) -> None:
        """Clamp every df to N: Lucene guarantees df <= N within one reader, but statistics
        read at different moments (a cached df, a vocabulary snapshot taken while documents
        were indexed, a merge since) can disagree. A weight from df = N is the right limit;
        refusing the search would turn a momentary race into an outage."""
        limit = self.field.doc_count
        if any(n > limit for n in self.df.values()):
            object.__setattr__(self, "df", {t: min(n, limit) for t, n in self.df.items()})
        if any(n > limit for n in self.extra_df.values()):
            object.__setattr__(
                self, "extra_df", {t: min(n, limit) for t, n in self.extra_df.items()}
            )


# --- index and field ---------------------------------------------------------------------


def resolve_index_plan(name: str) -> Plan[IndexInfo]:
    """The single concrete index behind ``name``; several (wildcards, data streams) is an error."""
    if not name or name.strip() != name or name.startswith(("-", "_")):
        raise UsageError(f"invalid index name {name!r}", "pass the index or alias name")
    try:
        body = yield Request(
            "GET",
            index_path(name, "_settings", patterns=True),
            {
                "filter_path": "*.settings.index.uuid,*.settings.index.number_of_shards,"
                "*.settings.index.query.default_field"
            },
        )
    except Exception as exc:
        if error_status(exc) == 404:
            raise UsageError(
                f"no index or alias named {name!r}", "check the name with GET _cat/indices"
            ) from None
        raise
    indices = sorted((body or {}).keys())
    if not indices:
        raise UsageError(f"no index matches {name!r}", "check the name with GET _cat/indices")
    if len(indices) > 1:
        shown = ", ".join(indices[:5]) + (" ..." if len(indices) > 5 else "")
        raise UsageError(
            f"{name!r} matches {len(indices)} indices ({shown})",
            "calibrate one concrete index (or an alias of exactly one index)",
        )
    settings = body[indices[0]]["settings"]["index"]
    raw = (settings.get("query") or {}).get("default_field", "*")
    defaults = tuple(str(f) for f in (raw if isinstance(raw, list) else [raw]))
    return IndexInfo(
        indices[0], str(settings["uuid"]), int(settings["number_of_shards"]), defaults or ("*",)
    )


def field_info_plan(index: str, field_name: str) -> Plan[FieldInfo]:
    """Type, analyzers and similarity of a field, with the analyzer's custom definition if any."""
    # include_defaults: the analyzers the engine really uses (search_analyzer falls back to
    # default_search or the index analyzer, in an order the two engines do not agree on)
    mapping = yield Request(
        "GET",
        index_path(index, "_mapping", "field", field_name, patterns=True),
        {"include_defaults": "true"},
    )
    found = (mapping.get(index) or {}).get("mappings", {}).get(field_name)
    if not found:
        raise UsageError(
            f"index {index!r} has no field {field_name!r}",
            "pass --field with a text field of the mapping",
        )
    leaf = field_name.split(".")[-1]
    props = found.get("mapping", {}).get(leaf, {})
    ftype = str(props.get("type", "object"))
    if ftype not in TEXT_TYPES:
        raise UsageError(
            f"field {field_name!r} is of type {ftype!r}, not text",
            "q-log IDF applies to analyzed text fields; pass a text field with --field",
        )
    analyzer = str(props.get("analyzer", "default"))
    search_analyzer = str(props.get("search_analyzer", analyzer))
    settings = yield Request(
        "GET",
        index_path(index, "_settings", patterns=True),
        {"filter_path": "*.settings.index.analysis"},
    )
    analysis = (settings.get(index) or {}).get("settings", {}).get("index", {}).get("analysis", {})
    definition = _analyzer_definition(analysis, analyzer)
    custom = analysis.get("analyzer", {})
    standard = (
        analyzer in ("standard", "default")
        and search_analyzer == analyzer
        and not any(name in custom for name in ("default", "default_search"))
        and (analyzer == "default" or "standard" not in custom)
    )
    return FieldInfo(
        field_name, ftype, analyzer, search_analyzer, props.get("similarity"), definition, standard
    )


def _analyzer_definition(analysis: Mapping[str, Any], analyzer: str) -> dict[str, Any]:
    """The analyzer's custom definition with its tokenizer and filters inlined."""
    analyzers = analysis.get("analyzer", {})
    name = analyzer if analyzer in analyzers else "default"
    spec = dict(analyzers.get(name, {}))
    if not spec:
        return {}
    tokenizer = spec.get("tokenizer")
    if isinstance(tokenizer, str) and tokenizer in analysis.get("tokenizer", {}):
        spec["tokenizer"] = analysis["tokenizer"][tokenizer]
    filters = analysis.get("filter", {})
    spec["filter"] = [
        filters.get(f, f) if isinstance(f, str) else f for f in spec.get("filter", [])
    ]
    return spec


# --- shard routing ------------------------------------------------------------------------


def shard_routings_plan(index: str, shards: int) -> Plan[tuple[str, ...]]:
    """One routing value per shard, found by asking the cluster where each value routes.

    Asking is exact whatever the routing hash or partition settings; it costs a few calls
    once per index (the caller caches the result).
    """
    found: dict[int, str] = {}
    # Routing hashes spread evenly, so ~shards * ln(shards) probes find them all; the cap
    # only stops a cluster that never reports some shard (a red index) from looping long.
    for probe in range(min(MAX_ROUTING_PROBES, 64 * max(shards, 1))):
        if len(found) == shards:
            break
        body = yield Request(
            "GET", index_path(index, "_search_shards", patterns=True), {"routing": str(probe)}
        )
        for group in body.get("shards", []):
            for copy in group:
                if copy.get("primary"):
                    found.setdefault(int(copy["shard"]), str(probe))
    if len(found) != shards:
        raise ClusterError(
            f"the cluster reports no primary for some shards of {index}",
            "check the index health with GET _cluster/health",
        )
    return tuple(found[s] for s in sorted(found))


# --- statistics ---------------------------------------------------------------------------


def _artificial_docs(
    index: str,
    field_name: str,
    text: str,
    routings: Sequence[str],
    analyzer: str | None,
    positions: bool,
) -> list[dict[str, Any]]:
    doc: dict[str, Any] = {
        "_index": index,
        "doc": {field_name: text},
        "fields": [field_name],
        "term_statistics": True,
        "field_statistics": True,
        "positions": positions,
        "offsets": False,
        "payloads": False,
    }
    if analyzer:
        doc["per_field_analyzer"] = {field_name: analyzer}
    return [{**doc, "routing": r} for r in routings]


def _sum_shard_vectors(
    docs: Iterable[Mapping[str, Any]], field_name: str
) -> tuple[FieldStats, dict[str, int], list[tuple[int, str]]]:
    """Add up per-shard field statistics and document frequencies."""
    n_docs = sum_ttf = sum_df = 0
    df: dict[str, int] = {}
    tokens: list[tuple[int, str]] = []
    for i, doc in enumerate(docs):
        if doc.get("error"):
            reason = doc["error"].get("reason") if isinstance(doc["error"], Mapping) else None
            raise ClusterError(
                f"term vectors failed on a shard ({reason or doc['error']})",
                "check the index health with GET _cluster/health",
            )
        vectors = (doc.get("term_vectors") or {}).get(field_name)
        if vectors is None:
            continue
        fstats = vectors.get("field_statistics") or {}
        n_docs += int(fstats.get("doc_count", 0))
        sum_ttf += int(fstats.get("sum_ttf", 0))
        sum_df += int(fstats.get("sum_doc_freq", 0))
        for term, info in (vectors.get("terms") or {}).items():
            df[term] = df.get(term, 0) + int(info.get("doc_freq") or 0)
            if i == 0:
                tokens.extend((int(tok.get("position", 0)), term) for tok in info.get("tokens", []))
    return FieldStats(n_docs, sum_ttf, sum_df), df, tokens


def text_stats_plan(
    index: str,
    field_name: str,
    text: str,
    routings: Sequence[str],
    search_analyzer: str | None = None,
) -> Plan[TextStats]:
    """Analyze ``text`` as the field would and return its terms with global statistics."""
    found = yield from texts_stats_plan(
        index, [(field_name, text)], routings, {field_name: search_analyzer}
    )
    return found[(field_name, text)]


def term_stats_plan(
    index: str, field_name: str, terms: Iterable[str], routings: Sequence[str]
) -> Plan[tuple[FieldStats, dict[str, int]]]:
    """Global document frequency of exact terms (already analyzed), plus field statistics.

    The terms travel as one whitespace-separated artificial document analyzed with the
    ``whitespace`` analyzer, so each comes back exactly as given; absent terms get 0.
    """
    wanted = [t for t in dict.fromkeys(terms) if t and not any(c.isspace() for c in t)]
    text = " ".join(wanted) if wanted else ""
    body = yield Request(
        "POST",
        index_path(index, "_mtermvectors", patterns=True),
        body={"docs": _artificial_docs(index, field_name, text, routings, "whitespace", False)},
    )
    fstats, df, _ = _sum_shard_vectors(body.get("docs", []), field_name)
    return fstats, {t: df.get(t, 0) for t in wanted}


def field_stats_plan(index: str, field_name: str, routings: Sequence[str]) -> Plan[FieldStats]:
    """N, sum_ttf and sum_doc_freq of the field (an empty artificial document per shard)."""
    fstats, _ = yield from term_stats_plan(index, field_name, ["esqlog"], routings)
    return fstats


def live_doc_count_plan(index: str) -> Plan[int]:
    """Documents visible to search now (deleted ones excluded): used for staleness checks."""
    body = yield Request("GET", index_path(index, "_count", patterns=True))
    return int(body.get("count", 0))


def texts_stats_plan(
    index: str,
    texts: Sequence[tuple[str, str]],
    routings: Sequence[str],
    search_analyzers: Mapping[str, str | None] | None = None,
    extra_terms: Mapping[tuple[str, str], Sequence[str]] | None = None,
) -> Plan[dict[tuple[str, str], TextStats]]:
    """:func:`text_stats_plan` for several ``(field, text)`` pairs in ONE round trip.

    ``extra_terms`` asks, in the same request, for the global df of exact terms per text
    (identifier-join candidates), returned as ``TextStats.extra_df``.
    """
    if not texts:
        return {}
    analyzers = search_analyzers or {}
    extras = extra_terms or {}
    docs: list[dict[str, Any]] = []
    extra_slots: list[tuple[tuple[str, str], list[str]]] = []
    for field_name, text in texts:
        docs.extend(
            _artificial_docs(index, field_name, text, routings, analyzers.get(field_name), True)
        )
    for key in texts:
        wanted = [
            t for t in dict.fromkeys(extras.get(key, ())) if t and not any(c.isspace() for c in t)
        ]
        if wanted:
            extra_slots.append((key, wanted))
            docs.extend(
                _artificial_docs(index, key[0], " ".join(wanted), routings, "whitespace", False)
            )
    body = yield Request(
        "POST", index_path(index, "_mtermvectors", patterns=True), body={"docs": docs}
    )
    answers = body.get("docs", [])
    per_text = len(routings)
    out: dict[tuple[str, str], TextStats] = {}
    for i, (field_name, text) in enumerate(texts):
        fstats, df, tokens = _sum_shard_vectors(
            answers[i * per_text : (i + 1) * per_text], field_name
        )
        tokens.sort()
        out[(field_name, text)] = TextStats(
            terms=tuple(t for _, t in tokens),
            positions=tuple(p for p, _ in tokens),
            df={t: df.get(t, 0) for _, t in tokens},
            field=fstats,
        )
    offset = len(texts) * per_text
    for j, (key, wanted) in enumerate(extra_slots):
        chunk = answers[offset + j * per_text : offset + (j + 1) * per_text]
        _, df, _ = _sum_shard_vectors(chunk, key[0])
        out[key] = replace(out[key], extra_df={t: df.get(t, 0) for t in wanted})
    return out
