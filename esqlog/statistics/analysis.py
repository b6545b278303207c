"""How the engine analyzes query text: the field's search analyzer, and a local twin of it.

A ``match`` query is analyzed with the field's *search* analyzer (the mapping's
``search_analyzer``, else the index's ``analysis.analyzer.default_search``, else the index
analyzer; the two engines even disagree on that order), not with the analyzer that built
the index. :func:`search_analyses_plan` asks the engine which analyzer that is, so the
rewrite analyzes exactly as the engine will, or leaves the clause alone when it cannot.

Client-side twin of the ``standard`` analyzer for ASCII text, to skip a round trip:

Most code indices this tool serves keep Elasticsearch's default ``standard`` analyzer
(Unicode UAX#29 word breaks, then lowercase). For ASCII text those word-break rules are
short enough to reproduce exactly, which lets the wrapper analyze a query locally and, when
the terms' statistics are already cached, send the rewritten search with no extra request.
Anything outside plain ASCII, or a token longer than the tokenizer's 255-character limit,
returns None and the engine analyzes instead. The test suite checks this function against
the engines' own ``_analyze`` on thousands of real query texts and random ASCII strings.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from esqlog.engine.paths import index_path
from esqlog.engine.steps import Plan, Request

MAX_TOKEN_LENGTH = 255

_LETTER, _DIGIT, _EXTEND, _MID_LETTER, _MID_NUM, _MID_NUM_LET, _OTHER = range(7)


def _char_class(c: str) -> int:
    if c.isascii() and c.isalpha():
        return _LETTER
    if c.isascii() and c.isdigit():
        return _DIGIT
    if c == "_":
        return _EXTEND  # ExtendNumLet
    if c == ":":
        return _MID_LETTER
    if c in ",;":
        return _MID_NUM
    if c in ".'":
        return _MID_NUM_LET  # MidNumLet and Single_Quote behave alike here
    return _OTHER


def _no_break(classes: list[int], i: int) -> bool:
    """UAX#29 rules WB5-WB13b: no word break between positions i-1 and i."""
    prev, cur = classes[i - 1], classes[i]
    nxt = classes[i + 1] if i + 1 < len(classes) else _OTHER
    before = classes[i - 2] if i >= 2 else _OTHER
    alnum = (_LETTER, _DIGIT)
    if prev in alnum and cur in alnum:  # WB5, WB8, WB9, WB10
        return True
    if prev == _LETTER and cur in (_MID_LETTER, _MID_NUM_LET) and nxt == _LETTER:  # WB6
        return True
    if before == _LETTER and prev in (_MID_LETTER, _MID_NUM_LET) and cur == _LETTER:  # WB7
        return True
    if prev == _DIGIT and cur in (_MID_NUM, _MID_NUM_LET) and nxt == _DIGIT:  # WB12
        return True
    if before == _DIGIT and prev in (_MID_NUM, _MID_NUM_LET) and cur == _DIGIT:  # WB11
        return True
    if prev in (_LETTER, _DIGIT, _EXTEND) and cur == _EXTEND:  # WB13a
        return True
    return prev == _EXTEND and cur in alnum  # WB13b


# The same segmentation as one regular expression (what standard_terms runs): runs of
# letters, digits and "_" (WB5, WB8-WB10, WB13a/b), continued across ":" "." "'" between two
# letters (WB6/WB7) and across "," ";" "." "'" between two digits (WB11/WB12). The rule-by-rule
# version above (segments_by_rules) is kept as the readable reference the tests compare with.
_TOKEN = re.compile(
    r"[A-Za-z0-9_]+(?:(?:(?<=[A-Za-z])[:.'](?=[A-Za-z])"
    r"|(?<=[0-9])[,;.'](?=[0-9]))[A-Za-z0-9_]+)*"
)
_HAS_ALNUM = re.compile(r"[A-Za-z0-9]")


def standard_terms(text: str) -> list[str] | None:
    """The ``standard`` analyzer's terms for ASCII ``text``, or None when unsure."""
    if not text.isascii():
        return None
    terms = [t.lower() for t in _TOKEN.findall(text) if _HAS_ALNUM.search(t)]
    if any(len(t) > MAX_TOKEN_LENGTH for t in terms):
        return None
    return terms


def standard_cuts(text: str) -> bool:
    """Whether :func:`standard_terms` knows ``text``'s terms (it is not None), without
    cutting the text when no term can be too long: a term is a piece of the text, so a text
    of at most MAX_TOKEN_LENGTH characters holds none longer. The identifiers mode asks this
    of every match text before it cuts the text itself (esqlog.wrapper.identifier_search)."""
    if not text.isascii():
        return False
    return len(text) <= MAX_TOKEN_LENGTH or standard_terms(text) is not None


def segments_by_rules(text: str) -> list[str] | None:
    """standard_terms computed rule by rule (UAX#29 WB5-WB13b): the reference for the tests."""
    if not text.isascii():
        return None
    classes = [_char_class(c) for c in text]
    terms: list[str] = []
    start = 0
    for i in range(1, len(text) + 1):
        if i < len(text) and _no_break(classes, i):
            continue
        segment = text[start:i]
        if any(classes[j] in (_LETTER, _DIGIT) for j in range(start, i)):
            if len(segment) > MAX_TOKEN_LENGTH:
                return None
            terms.append(segment.lower())
        start = i
    return terms


# --- the search analyzer ----------------------------------------------------------------------

#: Signs (in an analyzer's name or inlined definition) that it can emit a token graph:
#: tokens spanning several positions (multi-word synonyms, word_delimiter_graph catenations,
#: shingles, common-grams bigrams, kuromoji/nori compounds). The engine turns a graph into
#: phrase or span clauses, which a flat disjunction of terms cannot reproduce, so such fields
#: are left to the engine. (Tokens stacked at one position without a graph, as single-word
#: synonyms or edge_ngram filters give, are caught later by their shared positions.)
GRAPH_SIGNS = ("graph", "synonym", "shingle", "common_grams", "kuromoji", "nori")


@dataclass(frozen=True)
class SearchAnalysis:
    """How the engine analyzes a match query's text on one field."""

    field: str
    analyzer: str  # the search analyzer, as the engine's own mapping reports it
    index_analyzer: str
    #: the built-in ``standard`` analyzer: standard_terms is exact for ASCII text
    standard: bool
    #: no token graph is possible: the analyzed terms, one clause each, are the query
    flat: bool

    @property
    def per_field_analyzer(self) -> str | None:
        """The analyzer to name in a term-vectors request (None: the field's own)."""
        return None if self.analyzer == self.index_analyzer else self.analyzer


@dataclass(frozen=True)
class SearchAnalyses:
    """The search analysis of every calibrated field of one index (absent: leave it alone)."""

    by_field: Mapping[str, SearchAnalysis]

    def exact(self, field_name: str) -> bool:
        """Whether clauses on this field may be rewritten at all."""
        found = self.by_field.get(field_name)
        return found is not None and found.flat

    def standard(self, field_name: str) -> bool:
        """Whether ASCII text on this field may be analyzed here (esqlog.statistics.analysis)."""
        found = self.by_field.get(field_name)
        return found is not None and found.standard

    def per_field(self) -> dict[str, str | None]:
        """field -> per_field_analyzer for the statistics request."""
        return {f: a.per_field_analyzer for f, a in self.by_field.items()}


def _is_builtin_standard(name: str, custom: Mapping[str, Any]) -> bool:
    """``standard`` (or ``default`` left undefined) and not overridden by a custom analyzer."""
    return name in ("standard", "default") and name not in custom


def _can_emit_graph(name: str, analysis: Mapping[str, Any]) -> bool:
    """True when the analyzer's name or definition (tokenizer, filters inlined) shows a sign."""
    spec = (analysis.get("analyzer") or {}).get(name)
    if not isinstance(spec, Mapping):
        return any(sign in name.lower() for sign in GRAPH_SIGNS)
    parts: list[Any] = [name, spec]
    tokenizers, filters = analysis.get("tokenizer") or {}, analysis.get("filter") or {}
    tokenizer = spec.get("tokenizer")
    parts.append(tokenizers.get(tokenizer, tokenizer) if isinstance(tokenizer, str) else tokenizer)
    chain = spec.get("filter") or []
    for item in chain if isinstance(chain, list) else [chain]:
        parts.append(filters.get(item, item) if isinstance(item, str) else item)
    text = repr(parts).lower()
    return any(sign in text for sign in GRAPH_SIGNS)


def search_analyses_of(
    mapping: Mapping[str, Any], analysis: Mapping[str, Any], fields: Sequence[str]
) -> SearchAnalyses:
    """SearchAnalyses from a field-mapping answer (``include_defaults``) and the index's
    analysis settings; a field whose analyzers are not reported is left out."""
    custom = analysis.get("analyzer") or {}
    found: dict[str, SearchAnalysis] = {}
    for field_name in fields:
        entry = (mapping.get(field_name) or {}).get("mapping") or {}
        props = entry.get(field_name.split(".")[-1]) or {}
        index_analyzer, search = props.get("analyzer"), props.get("search_analyzer")
        if not isinstance(index_analyzer, str) or not isinstance(search, str):
            continue
        found[field_name] = SearchAnalysis(
            field_name,
            search,
            index_analyzer,
            _is_builtin_standard(search, custom),
            not _can_emit_graph(search, analysis),
        )
    return SearchAnalyses(found)


def search_analyses_plan(
    index: str, fields: Sequence[str], fallback_standard: Mapping[str, bool]
) -> Plan[SearchAnalyses]:
    """Each field's search analyzer as the engine reports it (two requests, once per index).

    When the mapping cannot be read (a search-only user), the calibration's record stands
    in: fields calibrated under the built-in standard analyzer keep being rewritten, the
    others are left to the engine; one warning says so. Never raises.
    """
    try:
        body = yield Request(
            "GET",
            index_path(index, "_mapping", "field", ",".join(fields), patterns=True),
            {"include_defaults": "true"},
        )
        settings = yield Request(
            "GET",
            index_path(index, "_settings", patterns=True),
            {"filter_path": "*.settings.index.analysis"},
        )
        mapping = ((body or {}).get(index) or {}).get("mappings") or {}
        analysis = (
            ((settings or {}).get(index) or {})
            .get("settings", {})
            .get("index", {})
            .get("analysis", {})
        )
        return search_analyses_of(mapping, analysis, fields)
    except Exception as exc:
        reason = type(exc).__name__
        warnings.warn(
            f"esqlog: cannot read the search analyzers of {index!r} ({reason}); "
            "rewriting only fields calibrated under the standard analyzer",
            RuntimeWarning,
            stacklevel=2,
        )
    return SearchAnalyses(
        {
            f: SearchAnalysis(f, "standard", "standard", True, True)
            for f, standard in fallback_standard.items()
            if standard
        }
    )
