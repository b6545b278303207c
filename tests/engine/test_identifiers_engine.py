"""The identifiers mode on real engines: the span mechanism, calibrate's statistics, the oracle.

3-shard indices of real Go functions, searched with ``dfs_query_then_fetch``; every score
is compared with tests/support/split_bm25 (independent of esqlog's identifiers code).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pytest

from esqlog.cli.identifiers_view import IdentifierContext, format_subword_rows
from esqlog.engine.client import Engine, bm25_scale
from esqlog.identifiers.calibrate import (
    IdentifierCalibration,
    calibrate_identifiers,
    identifier_report,
)
from esqlog.identifiers.query import plan_identifier_query
from esqlog.identifiers.settings import IdentifierSettings
from esqlog.identifiers.shards import shard_queries
from tests.support.engines import bulk_index, call, create_index
from tests.support.oracle import load_docs, load_query_texts
from tests.support.split_bm25 import SplitStreamBM25, oracle_from_engine

SHARDS = 3
N_DOCS = 1500
IDENT = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_]+")


@dataclass
class SplitCorpus:
    engine: Engine
    index: str
    found: IdentifierCalibration
    oracle: SplitStreamBM25
    scale: float


def _split_corpus(engine: Engine, docs: list[dict[str, Any]]) -> Iterator[SplitCorpus]:
    """A 3-shard index of ``docs``, calibrated, with its oracle; deleted afterwards."""
    index = create_index(engine, shards=SHARDS)
    bulk_index(engine, index, docs)
    found = calibrate_identifiers(engine, index, "body")
    oracle = oracle_from_engine(
        engine, index, [d["id"] for d in docs], SHARDS, found.stats.parts_of
    )
    yield SplitCorpus(engine, index, found, oracle, bm25_scale(engine.flavor, engine.version))
    call(engine, "DELETE", f"/{index}")


@pytest.fixture(scope="module")
def corpus(engine: Engine) -> Iterator[SplitCorpus]:
    yield from _split_corpus(
        engine, [{"id": d["id"], "body": d["body"]} for d in load_docs(N_DOCS)]
    )


def test_span_or_sums_idf_only_over_terms_on_the_scoring_shard(engine: Engine) -> None:
    """Why spans are grouped by shards: Lucene leaves a term absent from a shard out of the
    span's idf sum there, even under dfs_query_then_fetch."""
    index = create_index(engine, shards=2)
    try:
        routing = {}
        for i in range(100):
            shard = call(engine, "GET", f"/{index}/_search_shards", routing=f"r{i}")["shards"][0][
                0
            ]["shard"]
            routing.setdefault(shard, f"r{i}")
        for doc_id, shard, text in (
            ("a", 0, "readFile read"),
            ("b", 1, "read it"),
            ("c", 1, "write"),
        ):
            call(
                engine,
                "PUT",
                f"/{index}/_doc/{doc_id}",
                {"body": text},
                routing=routing[shard],
                refresh="true",
            )
        query = {
            "span_or": {
                "clauses": [{"span_term": {"body": "read"}}, {"span_term": {"body": "readfile"}}]
            }
        }
        hits = call(
            engine,
            "POST",
            f"/{index}/_search",
            {"query": query, "explain": True},
            search_type="dfs_query_then_fetch",
        )["hits"]["hits"]
        idf_sum = {h["_id"]: _find(h["_explanation"], "idf, sum of:") for h in hits}
        idf_one = {h["_id"]: _find(h["_explanation"], "idf, computed as") for h in hits}
        assert idf_sum["a"] is not None and idf_sum["b"] is None
        assert idf_one["b"] is not None and idf_one["b"] < idf_sum["a"] - 0.1
    finally:
        call(engine, "DELETE", f"/{index}")


def _find(node: dict[str, Any], prefix: str) -> float | None:
    if node["description"].startswith(prefix):
        return float(node["value"])
    for child in node.get("details", []):
        found = _find(child, prefix)
        if found is not None:
            return found
    return None


def _cased_split(
    engine: Engine, index: str, text: str, learned: dict[str, tuple[str, ...]]
) -> Counter[str]:
    """The query's split stream from the engine's own tokens and offsets (test-side split);
    a token whose own casing does not split takes the split learned for that term."""
    tokens = call(engine, "POST", f"/{index}/_analyze", {"field": "body", "text": text})
    out: Counter[str] = Counter()
    for tok in tokens["tokens"]:
        out[tok["token"]] += 1
        cased = text[tok["start_offset"] : tok["end_offset"]]
        parts = IDENT.findall(cased)
        if len(parts) > 1:
            out.update(p.lower() for p in parts)
        else:
            out.update(learned.get(tok["token"], ()))
    return out


def test_calibrate_split_statistics_match_an_independent_count(corpus: SplitCorpus) -> None:
    stats, oracle = corpus.found.stats, corpus.oracle
    assert stats.split_docs == oracle.n_docs == N_DOCS
    subwords = [w for w in stats.words if stats.split_df(w)]
    assert len(subwords) > 500
    for w in subwords:
        assert stats.split_df(w) == oracle.split_df[w], w
    some = [w for w in subwords if len(stats.compounds_of(w)) > 3][:50]
    assert some
    for w in some:  # compounds: exactly the terms whose split holds w, by df descending
        comps = [stats.words[i] for i in stats.compounds_of(w)]
        assert set(comps) == {t for t, p in oracle.parts.items() if w in p and t != w}
        dfs = [oracle.df[c] for c in comps]
        assert dfs == sorted(dfs, reverse=True)
    assert 0.0 < stats.h_tok < 0.5 and 0.0 <= stats.q <= 1.0


@pytest.mark.parametrize(
    "case",
    [
        "uncapped",
        "capped",
        "default",
        "capped split",
        "own",
        "sum",
        "shard",
        "max",
        "auto all",
        "plain",
    ],
)
def test_engine_scores_equal_split_stream_bm25(corpus: SplitCorpus, case: str) -> None:
    """Uncapped (every compound listed), capped (budget 40) and default clause lists (common
    sub-words: their own term apart from a span of their compounds), the same capped, the
    old default (common sub-words by their own term only), shard-set groups summed instead
    of their best, one span per shard (``shard``: plain split-stream BM25, one
    saturation per word on every shard, no groups in the oracle), the best of the groups
    for every word (``max``; the default ``auto`` takes one span per shard for the words
    whose terms every shard holds are rare, ``auto all`` for more of them), and every query
    a plain one (``plain``: q = 1, the budget by score mass); 3 shards, dfs."""
    settings = {
        "uncapped": IdentifierSettings(budget=100_000, span_max_df=1.0),
        "capped": IdentifierSettings(budget=40, span_max_df=1.0),
        "default": IdentifierSettings(),
        "capped split": IdentifierSettings(budget=40, span_max_df=0.02),
        "own": IdentifierSettings(budget=300, span_max_df=0.01, common="own"),
        "sum": IdentifierSettings(shard_groups="sum"),
        "shard": IdentifierSettings(shard_groups="shard"),
        "max": IdentifierSettings(shard_groups="max"),
        "auto all": IdentifierSettings(shard_exact_df=0.5, shard_exact_clauses=10**6),
        "plain": IdentifierSettings(rare_word_df=0),
    }[case]
    checked, capped, kinds, exact, grouped = _check_scores(
        corpus, settings, load_query_texts()[:60]
    )
    assert checked > 200
    if case in ("default", "auto all"):  # both layouts occur, on several words each
        assert len(exact) > 5 and len(grouped) >= (5 if case == "default" else 1), (
            len(exact),
            len(grouped),
        )
    # every word of a query has df >= 1: rare_word_df=0 makes every query a plain one; the
    # other cases leave rare_word_df unset, and no df of these functions spikes (families)
    assert kinds == ({True} if case == "plain" else {False})
    if case == "uncapped":
        assert capped == 0
    else:
        assert capped > 10


class Checked(NamedTuple):
    """What :func:`_check_scores` compared."""

    hits: int
    capped: int  # queries whose compounds the budget capped
    kinds: set[bool]  # which of plain / not plain occurred
    exact: set[str]  # words scored in one saturation per shard (shard_groups "auto")
    grouped: set[str]  # words scored by their best shard-set group


def _check_scores(corpus: SplitCorpus, settings: IdentifierSettings, texts: list[str]) -> Checked:
    """Each query's engine scores against the oracle's."""
    stats, oracle = corpus.found.stats, corpus.oracle
    # independent of the plan: which words keep their own term apart (common ones)
    alone = {
        w
        for w, n in oracle.split_df.items()
        if n > settings.span_max_df * oracle.n_docs and oracle.df.get(w, 0) > 0
    }
    checked = capped = 0
    kinds: set[bool] = set()
    exact_words: set[str] = set()
    grouped_words: set[str] = set()
    for text in texts:
        plan = plan_identifier_query(text, stats, corpus.found.vocabulary.df_of, settings)
        if not plan.words or plan.clauses > 1000:
            continue  # over the engines' clause cap: the uncapped case needs a small list
        counts = _cased_split(corpus.engine, corpus.index, text, oracle.parts)
        words = [
            (w.word, w.count, list(dict.fromkeys(t for terms, _ in w.groups for t in terms)))
            for w in plan.words
        ]  # a term sits in several spans per shard: once here
        assert {w: c for w, c in counts.items() if oracle.split_df.get(w)} == {
            w: c for w, c, _ in words
        }, text
        capped += any(w.compounds_used < w.compounds_total for w in plan.words)
        # independent of the plan: a query without a word of split df <= rare_word_df is
        # scored at q = 1 (the plain split stream) ...
        own_df = [oracle.split_df.get(w) or oracle.df.get(w, 0) for w, _, _ in words]
        plain = settings.rare_word_df is not None and min(own_df) > settings.rare_word_df
        # ... and so is one holding a word of a generated family's df (family_excess)
        plain = plain or (
            settings.family_excess is not None
            and any(oracle.family_excess(n) >= settings.family_excess for n in own_df)
        )
        q = 1.0 if plain else (stats.q if settings.q is None else settings.q)
        assert plan.plain == plain and plan.q == q, text
        kinds.add(plain)
        body = {"query": plan.query("body", settings), "size": 20, "track_total_hits": True}
        found = call(
            corpus.engine,
            "POST",
            f"/{corpus.index}/_search",
            body,
            search_type="dfs_query_then_fetch",
        )["hits"]
        assert found["total"]["value"] == len(oracle.matching(words)), text
        # independent of the plan: the words "auto" scores in one saturation per shard
        exact = (
            oracle.exact_words(
                words, stats.shards, settings.shard_exact_df, settings.shard_exact_clauses, alone
            )
            if settings.shard_groups == "auto"
            else set()
        )
        exact_words.update(exact)
        grouped_words.update(w for w, _, _ in words if w not in exact)
        for hit in found["hits"]:
            expected = (
                oracle.score(
                    hit["_id"],
                    words,
                    q,
                    alone=alone,
                    grouped=settings.shard_groups != "shard",
                    shard_groups=settings.shard_groups,
                    exact=exact,
                )
                * corpus.scale
            )
            assert hit["_score"] == pytest.approx(expected, rel=1e-4), (text, hit["_id"])
            checked += 1
    return Checked(checked, capped, kinds, exact_words, grouped_words)


@pytest.mark.parametrize("case", ["uncapped", "capped", "default"])
def test_each_shards_own_query_equals_split_stream_bm25(corpus: SplitCorpus, case: str) -> None:
    """One request per shard without dfs (esqlog.identifiers.shards): each lists the terms
    its shard holds with boosts from that shard's own df and N, so every word is ONE
    saturation in the split stream on every shard, with the shard's own length norm.
    Engine scores equal the oracle's within 1e-4; the shards' totals add up to the
    oracle's match set."""
    settings = {
        "uncapped": IdentifierSettings(budget=100_000, span_max_df=1.0),
        "capped": IdentifierSettings(budget=40, span_max_df=1.0),
        "default": IdentifierSettings(),
    }[case]
    stats, oracle = corpus.found.stats, corpus.oracle
    assert stats.per_shard and stats.shard_docs.sum() == N_DOCS
    alone = {
        w
        for w, n in oracle.split_df.items()
        if n > settings.span_max_df * oracle.n_docs and oracle.df.get(w, 0) > 0
    }
    checked = capped = 0
    for text in load_query_texts()[:60]:
        plan = plan_identifier_query(text, stats, corpus.found.vocabulary.df_of, settings, 1)
        if not plan.words or plan.clauses > 1000:
            continue
        words = [(w.word, w.count, [t for terms, _ in w.groups for t in terms]) for w in plan.words]
        capped += any(w.compounds_used < w.compounds_total for w in plan.words)
        total = 0
        for shard, query in enumerate(shard_queries(plan, stats, "body", settings)):
            found = call(
                corpus.engine,
                "POST",
                f"/{corpus.index}/_search",
                {"query": query, "size": 10, "track_total_hits": True},
                preference=f"_shards:{shard}",
            )["hits"]
            total += found["total"]["value"]
            for hit in found["hits"]:
                assert oracle.shard_of[hit["_id"]] == shard
                expected = (
                    oracle.score(hit["_id"], words, plan.q, grouped=False, alone=alone, local=True)
                    * corpus.scale
                )
                assert hit["_score"] == pytest.approx(expected, rel=1e-4), (text, hit["_id"])
                checked += 1
        assert total == len(oracle.matching(words)), text
    assert checked > 300
    assert (capped == 0) if case == "uncapped" else (capped > 10)


#: A generated family in the shape of go-playground/locales: every locale's file holds the
#: same functions, its receiver named after the language (one function per document).
LOCALES = (
    "af_ZA",
    "af_NA",
    "en_ZA",
    "en_GB",
    "en_US",
    "en_AU",
    "de_DE",
    "de_AT",
    "de_CH",
    "fr_FR",
    "fr_CA",
    "fr_BE",
    "es_ES",
    "es_MX",
    "es_AR",
    "it_IT",
    "it_CH",
    "nl_NL",
    "nl_BE",
    "pt_BR",
    "pt_PT",
    "sv_SE",
    "fi_FI",
    "da_DK",
    "nb_NO",
    "pl_PL",
    "cs_CZ",
    "sk_SK",
    "hu_HU",
    "ro_RO",
    "bg_BG",
    "el_GR",
    "tr_TR",
    "ru_RU",
    "uk_UA",
    "zu_ZA",
)
LOCALE_FUNCS = {  # function -> the locale field it formats with
    "FmtNumber": "decimal",
    "FmtPercent": "percent",
    "FmtCurrency": "currencies",
    "FmtAccounting": "currencyNegativePrefix",
    "FmtDateShort": "daysAbbreviated",
    "FmtDateMedium": "monthsAbbreviated",
    "FmtDateLong": "monthsWide",
    "FmtDateFull": "daysWide",
    "FmtTimeShort": "timeSeparator",
    "FmtTimeMedium": "periodsAbbr",
    "FmtTimeLong": "timezones",
    "FmtTimeFull": "periodsWide",
    "MonthAbbreviated": "monthsAbbr",
    "MonthNarrow": "monthsNarrow",
    "WeekdayWide": "daysWide",
    "PluralsOrdinal": "pluralsOrd",
}


def _locale_doc(loc: str, func: str, field: str) -> dict[str, str]:
    recv = loc.split("_")[0]
    body = (
        f"func ({recv} *{loc}) {func}(num float64, v uint64) string {{\n"
        f"\ts := strconv.FormatFloat(math.Abs(num), 'f', int(v), 64)\n"
        f"\tb := make([]byte, 0, len(s)+len({recv}.{field}))\n"
        f"\tb = append(b, {recv}.{field}...)\n\treturn string(b)\n}}"
    )
    return {"id": f"{loc}.{func}", "body": body}


@pytest.fixture(scope="module")
def family_corpus(engine: Engine) -> Iterator[SplitCorpus]:
    docs = [{"id": d["id"], "body": d["body"]} for d in load_docs(400)]
    docs += [_locale_doc(loc, f, field) for loc in LOCALES for f, field in LOCALE_FUNCS.items()]
    yield from _split_corpus(engine, docs)


def test_a_generated_family_is_found_and_its_queries_scored_plain(
    family_corpus: SplitCorpus, tmp_path: Path
) -> None:
    """Calibrate sees the family as a df spike in the engine's own statistics (the oracle,
    counting from term vectors, sees the same), and the default scores a query naming it
    as the plain split stream, at q = 1, with the engine equal to the oracle."""
    stats, oracle = family_corpus.found.stats, family_corpus.oracle
    family = len(LOCALES)  # every function name is in one document per locale
    assert stats.family_excess(family) >= 3.0
    assert stats.family_excess(family) == pytest.approx(oracle.family_excess(family))
    _, note = identifier_report(family_corpus.found, tmp_path / "cal.json")  # calibrate says
    # the functions (df 36, one per locale) and the locale codes (df 16, one per function)
    assert "generated families (many words of one df): " in note
    assert f"df {family:,} (" in note and f"df {len(LOCALE_FUNCS):,} (" in note
    texts = [
        f"{f} returns the {field} representation of 'num' for '{loc}'"
        for (f, field), loc in zip(list(LOCALE_FUNCS.items())[:8], LOCALES, strict=False)
    ]
    texts += load_query_texts()[:12]
    checked, _, kinds, _, _ = _check_scores(family_corpus, IdentifierSettings(), texts)
    assert checked > 100 and kinds == {True, False}
    # esqlog explain --identifiers says which word marked the family, and how strongly
    settings = IdentifierSettings()
    plan = plan_identifier_query(texts[0], stats, family_corpus.found.vocabulary.df_of, settings)
    shown = format_subword_rows(
        IdentifierContext(stats, family_corpus.found.vocabulary, plan, settings)
    )
    df = {w.word: w.df for w in plan.words}[plan.family]
    assert stats.family_excess(df) >= 3.0
    assert (
        f"'{plan.family}' names a generated family ({stats.family_excess(df):.1f}x the "
        f"words of df {df:,} around it)"
    ) in shown.splitlines()[0]


def test_one_shard_is_plain_split_stream_bm25(engine: Engine) -> None:
    """With one shard every sub-word is one span: exactly split-stream BM25 (no grouping)."""
    index = create_index(engine, shards=1)
    try:
        docs = [{"id": d["id"], "body": d["body"]} for d in load_docs(600)]
        bulk_index(engine, index, docs)
        found = calibrate_identifiers(engine, index, "body")
        body = call(
            engine,
            "POST",
            f"/{index}/_mtermvectors",
            {
                "docs": [
                    {
                        "_id": d["id"],
                        "fields": ["body"],
                        "term_statistics": False,
                        "field_statistics": False,
                        "positions": False,
                        "offsets": False,
                    }
                    for d in docs
                ]
            },
        )
        vectors = {
            d["_id"]: {
                t: int(v["term_freq"]) for t, v in d["term_vectors"]["body"]["terms"].items()
            }
            for d in body["docs"]
        }
        parts = {t: found.stats.parts_of(t) for tfs in vectors.values() for t in tfs}
        oracle = SplitStreamBM25(
            vectors, dict.fromkeys(vectors, 0), {t: p for t, p in parts.items() if p}
        )
        scale = bm25_scale(engine.flavor, engine.version)
        checked = 0
        one_span = IdentifierSettings(span_max_df=1.0)  # no common word kept apart
        for text in load_query_texts()[:30]:
            plan = plan_identifier_query(text, found.stats, found.vocabulary.df_of, one_span)
            if not plan.words or plan.clauses > 1000:
                continue
            assert all(len(w.groups) == 1 for w in plan.words)
            words = [(w.word, w.count, list(w.groups[0][0])) for w in plan.words]
            hits = call(
                engine,
                "POST",
                f"/{index}/_search",
                {"query": plan.query("body", one_span), "size": 10},
            )
            for hit in hits["hits"]["hits"]:
                expected = oracle.score(hit["_id"], words, plan.q, grouped=False) * scale
                assert hit["_score"] == pytest.approx(expected, rel=1e-4)
                checked += 1
        assert checked > 100
    finally:
        call(engine, "DELETE", f"/{index}")


def test_cli_calibrate_explain_and_search(corpus: SplitCorpus, tmp_path: Path) -> None:
    """calibrate --identifiers writes the statistics; explain lists each sub-word with its
    split df; search --mode identifiers returns the engine's ranking of the same query."""
    from click.testing import CliRunner

    from esqlog.cli import main
    from tests.support.engines import ENGINE_URLS

    url = ENGINE_URLS[corpus.engine.flavor]
    out = tmp_path / "cal.json"
    runner = CliRunner()
    done = runner.invoke(
        main,
        [
            "calibrate",
            "--url",
            url,
            "--index",
            corpus.index,
            "--field",
            "body",
            "--vocabulary",
            "--identifiers",
            "--out",
            str(out),
        ],
    )
    assert done.exit_code == 0, done.output
    (snapshot,) = tmp_path.glob("cal.vocab.*.npz")
    (split_file,) = tmp_path.glob("cal.idents.*.npz")  # named by the same snapshot checksum
    assert split_file.name == snapshot.name.replace(".vocab.", ".idents.")
    # the CLI scans the 3 shards in 3 worker processes (esqlog.identifiers.processes): the
    # statistics equal those of the library's one-process scan (the corpus fixture's)
    from esqlog.calibration.files import load_calibration
    from esqlog.identifiers.files import load_for_calibration

    record = load_calibration(out)
    cli_stats = load_for_calibration(record.vocabulary_path(), record.vocabulary_sha256)
    one = corpus.found.stats
    assert cli_stats.words == one.words and cli_stats.local_terms == one.local_terms
    for name in (
        "df_engine",
        "df_split",
        "mask",
        "parts_ptr",
        "parts_idx",
        "shard_docs",
        "local_df",
    ):
        assert np.array_equal(getattr(cli_stats, name), getattr(one, name)), name
    assert (cli_stats.q, cli_stats.h_tok, record.h_tok) == (
        one.q,
        one.h_tok,
        corpus.found.record.h_tok,
    )
    assert "sub-words" in done.output
    text = "ReadFile reads the named file and returns its contents"
    shown = runner.invoke(
        main,
        [
            "explain",
            "--url",
            url,
            corpus.index,
            text,
            "--calibration",
            str(out),
            "--identifiers",
            "--json",
        ],
    )
    assert shown.exit_code == 0, shown.output
    rows = {r["word"]: r for r in json.loads(shown.output)["subwords"]}
    assert rows["read"]["df"] == corpus.oracle.split_df["read"]
    assert 0 <= rows["read"]["compounds"] <= rows["read"]["compounds_total"]
    assert rows["read"]["compounds_total"] > 0 and rows["read"]["weight"] > 0
    found = runner.invoke(
        main,
        [
            "search",
            "--url",
            url,
            corpus.index,
            text,
            "--calibration",
            str(out),
            "--mode",
            "identifiers",
            "--json",
            "--size",
            "5",
        ],
    )
    assert found.exit_code == 0, found.output
    hits = json.loads(found.output)["hits"]
    # the CLI sends each shard its own query (calibrate recorded each shard's statistics)
    stats = corpus.found.stats
    plan = plan_identifier_query(text, stats, corpus.found.vocabulary.df_of, None, 1)
    direct = sorted(
        (
            h
            for shard, query in enumerate(shard_queries(plan, stats, "body", IdentifierSettings()))
            for h in call(
                corpus.engine,
                "POST",
                f"/{corpus.index}/_search",
                {"query": query, "size": 5},
                preference=f"_shards:{shard}",
            )["hits"]["hits"]
        ),
        key=lambda h: -h["_score"],
    )[:5]
    assert [h["id"] for h in hits] == [h["_id"] for h in direct]
    for mine, theirs in zip(hits, direct, strict=True):
        assert mine["score"] == pytest.approx(theirs["_score"], rel=1e-6)
    bad = runner.invoke(
        main,
        [
            "calibrate",
            "--url",
            url,
            "--index",
            corpus.index,
            "--field",
            "body",
            "--identifiers",
            "--out",
            str(out),
        ],
    )
    assert bad.exit_code == 2 and "--identifiers needs --vocabulary" in bad.output


def test_a_killed_save_leaves_the_old_triple_whole(
    corpus: SplitCorpus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """calibration, snapshot and split statistics switch together: a save killed before the
    calibration is renamed leaves the old calibration loading its own snapshot and split
    statistics (named by that snapshot's checksum); a finished save leaves one of each."""
    from esqlog.calibration import files as calibration_files
    from esqlog.calibration.files import load_calibration
    from esqlog.identifiers.calibrate import save_identifier_calibration
    from esqlog.identifiers.files import load_for_calibration

    out = tmp_path / "cal.json"
    save_identifier_calibration(corpus.found, out)
    old = load_calibration(out)

    def killed(*_: Any, **__: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(calibration_files, "save_calibration", killed)
    with pytest.raises(KeyboardInterrupt):
        save_identifier_calibration(corpus.found, out)
    monkeypatch.undo()
    still = load_calibration(out)
    assert (still.vocabulary, still.vocabulary_sha256) == (old.vocabulary, old.vocabulary_sha256)
    stats = load_for_calibration(still.vocabulary_path(), still.vocabulary_sha256)
    assert stats.split_docs == corpus.found.stats.split_docs
    (tmp_path / "cal.vocab.0123456789abcdef.npz").write_bytes(b"left by a killed run")
    (tmp_path / "cal.idents.0123456789abcdef.npz").write_bytes(b"left by a killed run")
    save_identifier_calibration(corpus.found, out)  # a whole run removes the leftovers
    assert len(list(tmp_path.glob("cal.vocab.*.npz"))) == 1
    assert len(list(tmp_path.glob("cal.idents.*.npz"))) == 1
