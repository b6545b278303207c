"""Shared by several test modules (from tests/test_wrapper_identifiers.py):
no test module imports another."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from esqlog.engine.client import Engine, bm25_scale
from esqlog.identifiers.calibrate import calibrate_identifiers, save_identifier_calibration
from esqlog.identifiers.query import plan_identifier_query
from esqlog.identifiers.settings import IdentifierSettings
from esqlog.identifiers.split_stats import IdentifierStats
from esqlog.statistics.vocabulary import Vocabulary
from tests.support.engines import bulk_index, call, create_index, wait_green
from tests.support.oracle import load_docs, load_query_texts
from tests.support.split_bm25 import SplitStreamBM25, oracle_from_engine

SHARDS = 3


N_DOCS = 1000


IDENT = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_]+")


UNCAPPED = IdentifierSettings(budget=100_000, span_max_df=1.0, engine_query="span")


@dataclass
class Wrapped:
    engine: Engine
    index: str
    path: Path  # the saved calibration (with its .vocab and .idents files)
    stats: IdentifierStats
    vocab: Vocabulary
    oracle: SplitStreamBM25
    scale: float

    def plan_words(
        self, text: str, settings: IdentifierSettings
    ) -> list[tuple[str, int, list[str]]]:
        """The plan's words as the wrapper lays them out: one query per shard (fan-out,
        as on one shard) or one grouped by shard sets (``fan_out=False``)."""
        plan = plan_identifier_query(
            text, self.stats, self.vocab.df_of, settings, 1 if settings.fan_out else None
        )
        return [
            (w.word, w.count, list(dict.fromkeys(t for terms, _ in w.groups for t in terms)))
            for w in plan.words
        ]  # a term sits in several spans per shard: once here

    def exact_words(
        self, words: list[tuple[str, int, list[str]]], settings: IdentifierSettings
    ) -> set[str]:
        """The words shard_groups="auto" scores in one saturation per shard, found by the
        oracle's own rule, independent of the plan."""
        return self.oracle.exact_words(
            words,
            self.stats.shards,
            settings.shard_exact_df,
            settings.shard_exact_clauses,
            self.common_words(settings),
        )

    def token_words(self, text: str) -> list[set[str]]:
        """Per query token (the engine's own, with offsets): the token and its sub-words
        (its own casing's split, else the split calibrate learned for that term)."""
        tokens = call(
            self.engine, "POST", f"/{self.index}/_analyze", {"field": "body", "text": text}
        )["tokens"]
        out = []
        for tok in tokens:
            cased = text[tok["start_offset"] : tok["end_offset"]]
            parts = IDENT.findall(cased)
            split = (
                [p.lower() for p in parts]
                if len(parts) > 1
                else list(self.oracle.parts.get(tok["token"], ()))
            )
            out.append({tok["token"], *split})
        return out

    def common_words(self, settings: IdentifierSettings) -> set[str]:
        """Words whose own term scores apart from their compounds' span (common='split'),
        found from the oracle's split stream, independent of the plan."""
        o = self.oracle
        return {
            s
            for s, n in o.split_df.items()
            if n > settings.span_max_df * o.n_docs and o.df.get(s, 0) > 0
        }

    def satisfied(self, doc: str, words: set[str]) -> bool:
        """Whether a document holds one of ``words`` as a term or inside a term's split."""
        parts = self.oracle.parts
        return any(
            t in words or words.intersection(parts.get(t, ())) for t in self.oracle.vectors[doc]
        )


def wrapped_fixture(
    engine: Engine,
    tmp_path_factory: pytest.TempPathFactory,
    shards: int = SHARDS,
    replicas: int = 0,
) -> Iterator[Wrapped]:
    """An identifiers-calibrated index of real code and its oracle (also used on the
    three-node cluster, tests/test_cluster_engine.py); always deleted."""
    index = create_index(engine, shards=shards, settings={"number_of_replicas": replicas})
    try:
        if replicas:
            wait_green(engine, index)
        docs = [{"id": d["id"], "body": d["body"]} for d in load_docs(N_DOCS)]
        bulk_index(engine, index, docs)
        found = calibrate_identifiers(engine, index, "body")
        path = tmp_path_factory.mktemp("identifiers") / "code.qlog.json"
        save_identifier_calibration(found, path)
        oracle = oracle_from_engine(
            engine, index, [d["id"] for d in docs], shards, found.stats.parts_of
        )
        yield Wrapped(
            engine,
            index,
            path,
            found.stats,
            found.vocabulary,
            oracle,
            bm25_scale(engine.flavor, engine.version),
        )
    finally:
        call(engine, "DELETE", f"/{index}")


def texts(w: Wrapped, count: int, settings: IdentifierSettings = UNCAPPED) -> list[str]:
    """Query texts whose plan fits the engines' clause limit unchanged (so the wrapper
    sends exactly that plan) and matches something."""
    out = []
    for text in load_query_texts():
        if not text.isascii():
            continue
        words = w.plan_words(text, settings)
        listed = sum(len(terms) for _, _, terms in words)
        if words and 2 * listed + len(w.token_words(text)) < 900:
            out.append(text)
        if len(out) == count:
            break
    return out


def search(client: Any, w: Wrapped, query: dict[str, Any], size: int = 20) -> Any:
    return client.search(
        index=w.index,
        body={"query": query, "size": size, "track_total_hits": True, "_source": False},
    )
