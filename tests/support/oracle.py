"""Shared helpers for the wrapper/mode engine tests: a real-code corpus index and an oracle.

The oracle is deliberately independent of esqlog's scoring code: the query's tokens come
from the engine's ``_analyze``, per-document term frequencies and lengths from the engine's
``_termvectors`` of the stored documents, and the score from ``tests/support/lucene_bm25`` (plain
formulas with Lucene's one-byte length-norm rounding). Only the global statistics (df, N,
avgdl, which must include deleted documents) come from esqlog.statistics.terms, as a DFS search
sees them.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from esqlog.calibration.calibrate import calibrate
from esqlog.calibration.cluster_store import install_script_plan
from esqlog.calibration.record import Calibration
from esqlog.engine.client import Engine
from esqlog.evaluation.corpus import read_jsonl
from esqlog.statistics.terms import field_stats_plan, shard_routings_plan, term_stats_plan
from tests.support.code_snippets import SNIPPETS
from tests.support.engines import bulk_index, call, create_index
from tests.support.lucene_bm25 import bm25_term, lucene_idf

ROOT = Path(__file__).resolve().parents[2]
DOCS_PATHS = (ROOT / "esqlog/data/sample_go_docs.jsonl.gz", ROOT / "data/corpora/go/docs.jsonl")
QUERIES_PATHS = (
    ROOT / "esqlog/data/sample_go_queries.jsonl",
    ROOT / "data/corpora/go/queries.jsonl",
)
N_DOCS = 2500
DELETE_EVERY = 97  # a few deleted, unmerged documents: N must still count them
SHARDS = 3

MAPPINGS: dict[str, Any] = {
    "properties": {
        "body": {"type": "text"},  # standard analyzer
        "title": {"type": "text"},  # the function name as text: a second scored field
        "name": {"type": "keyword"},
        "pkg": {"type": "keyword"},
        "seq": {"type": "integer"},
    }
}


def load_docs(limit: int = N_DOCS) -> list[dict[str, Any]]:
    """Real Go functions {id, body, title, name, pkg, seq}; code snippets as the last resort."""
    raw: list[dict[str, Any]] = []
    for path in DOCS_PATHS:
        if path.exists():
            for record in read_jsonl(path):
                if str(record.get("text", "")).strip():
                    raw.append(record)
                if len(raw) >= limit:
                    break
            break
    if not raw:
        raw = [
            {"id": f"s{i}", "text": t, "name": t.split("(")[0][-30:], "path": f"p{i % 5}/x"}
            for i, t in enumerate(SNIPPETS)
        ]
    docs = []
    for seq, record in enumerate(raw):
        path = str(record.get("path", "x/x"))
        pkg = path.rsplit("/", 2)[-2] if "/" in path else "root"
        name = str(record.get("name", ""))
        docs.append(
            {
                "id": str(record["id"]),
                "body": record["text"],
                "title": name,
                "name": name,
                "pkg": pkg,
                "seq": seq,
            }
        )
    return docs


def load_query_texts() -> list[str]:
    """Real natural-language query texts (docstrings of Go functions), unique, in file order."""
    for path in QUERIES_PATHS:
        if path.exists():
            texts = [str(r["text"]).strip() for r in read_jsonl(path)]
            return list(dict.fromkeys(t for t in texts if t))
    return [
        "read file",
        "write file error",
        "reader string delimiter",
        "marshal data",
        "server listen and serve",
        "copy buffer writer reader",
    ]


@dataclass
class Corpus:
    """One real engine's corpus index, its calibrations and everything the oracle needs."""

    engine: Engine
    index: str
    docs: dict[str, dict[str, Any]]  # live documents by id
    deleted: list[str]
    calibrations: dict[str, Calibration]  # by field
    routings: tuple[str, ...] = ()
    scale: float = 1.0
    _vectors: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)

    @property
    def flavor(self) -> str:
        return self.engine.flavor

    @property
    def has_painless(self) -> bool:
        return self.flavor == "opensearch"

    def cals(self, q: float, fields: Sequence[str] = ("body", "title")) -> list[Calibration]:
        """The computed calibrations with q forced to ``q``."""
        return [dataclasses.replace(self.calibrations[f], q=q) for f in fields]

    # -- oracle inputs, all from the engine ------------------------------------------------
    def analyze(self, field_name: str, text: str) -> list[str]:
        """Tokens of ``text`` by the field's analyzer, in order (duplicates kept)."""
        tokens = call(
            self.engine, "POST", f"/{self.index}/_analyze", {"field": field_name, "text": text}
        )["tokens"]
        return [t["token"] for t in tokens]

    def global_stats(
        self, field_name: str, terms: Sequence[str]
    ) -> tuple[int, float, dict[str, int]]:
        """(N, avgdl, df) across shards, deleted documents included (as DFS scoring sees them)."""
        fstats, df = self.engine.run(term_stats_plan(self.index, field_name, terms, self.routings))
        check = self.engine.run(field_stats_plan(self.index, field_name, self.routings))
        assert check.doc_count == fstats.doc_count
        return fstats.doc_count, fstats.sum_ttf / fstats.doc_count, df

    def vectors(self, field_name: str) -> dict[str, dict[str, int]]:
        """{doc id: {term: tf}} of every live document, from the engine's term vectors."""
        if field_name not in self._vectors:
            out: dict[str, dict[str, int]] = {}
            ids = sorted(self.docs)
            for start in range(0, len(ids), 500):
                docs = [
                    {
                        "_id": i,
                        "fields": [field_name],
                        "positions": False,
                        "offsets": False,
                        "term_statistics": False,
                        "field_statistics": False,
                    }
                    for i in ids[start : start + 500]
                ]
                body = call(self.engine, "POST", f"/{self.index}/_mtermvectors", {"docs": docs})
                for doc in body["docs"]:
                    assert doc.get("found"), doc
                    terms = (doc.get("term_vectors") or {}).get(field_name, {}).get("terms", {})
                    out[doc["_id"]] = {t: int(v["term_freq"]) for t, v in terms.items()}
            self._vectors[field_name] = out
        return self._vectors[field_name]


def build_corpus(engine: Engine) -> Corpus:
    """Create, fill and calibrate a 3-shard corpus index with a few unmerged deletions."""
    docs = load_docs()
    index = create_index(engine, shards=SHARDS, mappings=MAPPINGS)
    try:
        bulk_index(engine, index, docs)
        deleted = [d["id"] for d in docs[::DELETE_EVERY]]
        lines = "".join(f'{{"delete": {{"_index": "{index}", "_id": "{i}"}}}}\n' for i in deleted)
        result = call(engine, "POST", "/_bulk", lines, refresh="true")
        assert not result.get("errors"), result
        if engine.flavor == "opensearch":
            engine.run(install_script_plan())
        cals = {f: calibrate(engine, index, f, sample=500) for f in ("body", "title")}
        routings = engine.run(shard_routings_plan(index, SHARDS))
    except BaseException:
        call(engine, "DELETE", f"/{index}")
        raise
    gone = set(deleted)
    live = {d["id"]: d for d in docs if d["id"] not in gone}
    return Corpus(engine, index, live, deleted, cals, routings, engine.bm25_scale)


def corpus_fixture(engine: Engine) -> Iterator[Corpus]:
    """Body of the module-scoped fixtures: build, yield, always delete."""
    corpus = build_corpus(engine)
    try:
        yield corpus
    finally:
        call(engine, "DELETE", f"/{corpus.index}")


# --- the oracle ------------------------------------------------------------------------------


def qlog_match_scores(
    corpus: Corpus,
    field_name: str,
    text: str,
    q: float,
    operator: str = "or",
    exact_length: bool = False,
) -> dict[str, float]:
    """q-log BM25 of ``match(field, text)`` for every live matching document.

    ``exact_length`` uses the exact token count instead of Lucene's quantised norm.
    """
    tokens = corpus.analyze(field_name, text)
    if not tokens:
        return {}
    N, avgdl, df = corpus.global_stats(field_name, tokens)
    unique = set(tokens)
    k1p1 = corpus.scale != 1.0
    out: dict[str, float] = {}
    for doc_id, tf in corpus.vectors(field_name).items():
        present = unique & tf.keys()
        if not present or (operator == "and" and present != unique):
            continue
        length = sum(tf.values())
        score = 0.0
        for term in tokens:
            if term not in tf:
                continue
            if exact_length:
                score += (
                    lucene_idf(df[term], N, q)
                    * _tf_norm_exact(tf[term], length, avgdl)
                    * corpus.scale
                )
            else:
                score += bm25_term(tf[term], length, avgdl, df[term], N, q, k1_plus_one=k1p1)
        out[doc_id] = score
    return out


def _tf_norm_exact(tf: int, length: int, avgdl: float, k1: float = 1.2, b: float = 0.75) -> float:
    return tf / (tf + k1 * (1 - b + b * length / avgdl))


class Recorder:
    """Stands in for the client's own ``search`` and keeps a copy of every call's kwargs."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.original = client.search
        self.calls: list[dict[str, Any]] = []

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls.append(copy.deepcopy(kwargs))
        return self.original(*args, **kwargs)

    def __enter__(self) -> Recorder:
        self.client.search = self
        return self

    def __exit__(self, *exc: object) -> None:
        del self.client.search


# --- comparing responses ---------------------------------------------------------------------


def body_of(response: Any) -> dict[str, Any]:
    return dict(getattr(response, "body", response))


def hits_of(response: Any) -> list[tuple[str, float]]:
    return [(h["_id"], float(h["_score"])) for h in body_of(response)["hits"]["hits"]]


def total_of(response: Any) -> int:
    total = body_of(response)["hits"]["total"]
    return int(total["value"] if isinstance(total, Mapping) else total)


def rel_close(a: float, b: float, rel: float) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-9)


def assert_same_ranking(
    expected: Sequence[tuple[str, float]],
    got: Sequence[tuple[str, float]],
    rel: float = 1e-4,
    context: Any = None,
) -> None:
    """Same scores position by position; the same ids within each group of (near-)tied scores.

    The last tie group may be cut by the page size, so only its scores are compared.
    """
    assert len(expected) == len(got), (context, expected, got)
    for (_, s1), (_, s2) in zip(expected, got, strict=True):
        assert rel_close(s1, s2, rel), (context, expected, got)
    start = 0
    while start < len(expected):
        end = start + 1
        while end < len(expected) and rel_close(expected[end][1], expected[start][1], 1e-6):
            end += 1
        if end < len(expected):  # a complete tie group (not cut by the page)
            assert {i for i, _ in expected[start:end]} == {i for i, _ in got[start:end]}, (
                context,
                start,
                expected,
                got,
            )
        start = end
