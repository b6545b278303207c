"""Is a field code or prose? The one rule behind ``mode="auto"`` (wrapper and ``esqlog mcp``).

Why: the identifiers mode ranks code far better than boost (docs/identifiers.md) and costs
prose a little, so the default mode follows the field. The rule used to read the share of
all the field's tokens that are identifiers which split (camelCase, snake_case): a
repository that mixes code with its documentation and changelog then read as prose
(pallets/click: 17% of tokens split, on the threshold), although its code is what the
mode serves. So the share is measured on the code documents only:

* where the index has a ``language`` keyword field (``esqlog index`` writes one), on the
  documents whose language is not one of the documentation and data formats (markdown,
  rst, text, json, yaml ...): a filter in the sample's query;
* otherwise on the documents that look like code: the ones where at least
  :data:`CODE_DOC_SHARE` of the tokens split. A prose corpus has few of those, so a second
  floor asks that they hold at least :data:`CODE_DOC_FLOOR` of the sampled tokens.

The sample is :data:`SAMPLE_DOCS` documents drawn at random (a seeded ``random_score``,
one search), tokenized as the ``standard`` analyzer cuts ASCII, with the original casing
(esqlog.scoring.subwords). The thresholds were measured by scripts/bench/code_rule.py on
every corpus available (docs/benchmarks/code-rule.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from esqlog.engine.paths import index_path
from esqlog.engine.steps import Plan, Request
from esqlog.scoring.subwords import cased_tokens, split_identifier

#: documents sampled (one search; their text is read, nothing else)
SAMPLE_DOCS = 2000
#: identifiers mode where at least this share of the code documents' tokens split
#: (measured: docs/benchmarks/code-rule.md)
CODE_SHARE = 0.12
#: without a language field: a document looks like code where this share of its tokens split
CODE_DOC_SHARE = 0.10
#: ... and such documents must hold this share of the sample's tokens to decide for code
CODE_DOC_FLOOR = 0.50
#: the language field's values that are documentation or data, not code
#: (esqlog.indexing.languages names them)
NOT_CODE = ("markdown", "rst", "text", "json", "yaml", "toml", "xml", "html", "csv")
LANGUAGE_FIELD = "language"


@dataclass(frozen=True)
class CodeShare:
    """What the rule read: the split share of the documents it kept, and which those were."""

    share: float
    basis: str
    applies: bool


def split_counts(text: str) -> tuple[int, int]:
    """(tokens that split, tokens) of one text."""
    tokens = cased_tokens(text)
    return sum(1 for t in tokens if split_identifier(t)), len(tokens)


def share_of(texts: Iterable[str], has_language: bool) -> CodeShare:
    """The rule on sampled texts (already filtered to code documents when
    ``has_language``)."""
    counts = [split_counts(t) for t in texts]
    if has_language:
        split = sum(s for s, _ in counts)
        total = sum(n for _, n in counts)
        share = split / total if total else 0.0
        return CodeShare(
            share,
            f"{len(counts):,} sampled code documents (language field)",
            total > 0 and share >= CODE_SHARE,
        )
    everything = sum(n for _, n in counts)
    code = [(s, n) for s, n in counts if n and s / n >= CODE_DOC_SHARE]
    code_tokens = sum(n for _, n in code)
    share = sum(s for s, _ in code) / code_tokens if code_tokens else 0.0
    held = code_tokens / everything if everything else 0.0
    return CodeShare(
        share,
        f"{len(code):,} of {len(counts):,} sampled documents look like "
        f"code ({held:.0%} of the tokens)",
        held >= CODE_DOC_FLOOR and share >= CODE_SHARE,
    )


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def _field_value(source: Mapping[str, Any], field_name: str) -> Any:
    value: Any = source
    for part in field_name.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def has_language_plan(index: str) -> Plan[bool]:
    """Whether the index maps a ``language`` keyword field (esqlog index writes one)."""
    body = yield Request("GET", index_path(index, "_mapping", "field", LANGUAGE_FIELD))
    for entry in (body or {}).values() if isinstance(body, Mapping) else ():
        mapping = ((entry or {}).get("mappings") or {}).get(LANGUAGE_FIELD, {})
        leaf = (mapping.get("mapping") or {}).get(LANGUAGE_FIELD, {})
        if leaf.get("type") == "keyword":
            return True
    return False


def code_share_plan(
    index: str, field_name: str, seed: int = 42, size: int = SAMPLE_DOCS
) -> Plan[CodeShare]:
    """Sample the field's documents (the code ones where the index says which) and apply
    the rule. Read-only: one mapping request and one search."""
    has_language = yield from has_language_plan(index)
    query: dict[str, Any] = {"exists": {"field": field_name}}
    if has_language:
        query = {
            "bool": {"filter": [query], "must_not": [{"terms": {LANGUAGE_FIELD: list(NOT_CODE)}}]}
        }
    body = {
        "size": size,
        "_source": [field_name],
        "track_total_hits": False,
        "query": {
            "function_score": {
                "query": query,
                "boost_mode": "replace",
                "random_score": {"seed": seed, "field": "_seq_no"},
            }
        },
    }
    answer = yield Request("POST", index_path(index, "_search"), {}, body)
    hits = (answer.get("hits") or {}).get("hits") or [] if isinstance(answer, Mapping) else []
    texts = [
        t
        for h in hits
        if isinstance(h, Mapping)
        for t in _texts(_field_value(h.get("_source") or {}, field_name))
    ]
    return share_of(texts, has_language)
