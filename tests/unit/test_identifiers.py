"""The identifiers mode's I/O-free parts: split statistics, the query builder, the file format.

Statistics come from a SplitCollector fed in memory (as the vocabulary scan would feed it);
their numbers are checked against counts made here by hand. Engine behaviour is in
tests/engine/test_identifiers_engine.py.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest

from esqlog.cli.identifiers_view import IdentifierContext, format_subword_rows
from esqlog.errors import UsageError
from esqlog.identifiers import node_plan
from esqlog.identifiers.files import load_identifier_stats, save_identifier_stats
from esqlog.identifiers.node_plan import node_clause
from esqlog.identifiers.query import plan_identifier_query, weigh_words
from esqlog.identifiers.scan import SplitCollector, absorb, shard_df
from esqlog.identifiers.settings import IdentifierSettings
from esqlog.identifiers.shard_task import merge_shards
from esqlog.identifiers.split_stats import IdentifierStats, build_identifier_stats
from esqlog.statistics.analysis import standard_terms
from esqlog.statistics.vocabulary import Vocabulary
from esqlog.statistics.vocabulary_scan import ShardScan
from tests.support.split_docs import DOCS, build, df_lookup

ALL_SPANS = IdentifierSettings(span_max_df=1.0)


def test_split_statistics_count_documents_holding_a_subword_anywhere() -> None:
    stats = build()
    assert stats.parts_of("readfile") == ("read", "file")
    assert stats.parts_of("handlewebsocketupgrade") == ("handle", "web", "socket", "upgrade")
    assert stats.parts_of("read_all") == ("read", "all")  # learned without any casing
    # "read": docs 0 (readFile), 1 (read), 3 (ReadFile, read_all), 5 (read, readDeadline)
    assert stats.split_df("read") == 4
    assert stats.split_df("socket") == 2  # doc 4 (handleWebSocketUpgrade, socket), doc 5
    assert stats.split_df("web") == 1  # only inside an identifier
    assert stats.split_df("readfile") is None  # a compound, no sub-word
    assert stats.split_docs == len(DOCS)
    comps = [stats.words[i] for i in stats.compounds_of("read")]
    assert set(comps) == {"readfile", "os.readfile", "read_all", "readdeadline", "setreaddeadline"}
    # ordered by df: readfile (docs 0 and 3) before the df-1 compounds
    assert comps[0] == "readfile"
    assert 0.0 < stats.h_tok < 1.0


def test_shard_masks_record_where_each_term_occurs() -> None:
    stats = build()
    mask = {w: int(stats.mask[i]) for i, w in enumerate(stats.words)}
    assert mask["readfile"] == 0b011  # docs 0 (shard 0) and 3 (shard 1)
    assert mask["socket"] == 0b100
    assert mask["web"] == 0  # not a term of the index


def test_weights_and_boosts_reproduce_split_stream_idf() -> None:
    stats = build(shards=1)
    plan = plan_identifier_query(
        "read the file", stats, df_lookup(stats), IdentifierSettings(q=0.8, span_max_df=1.0)
    )
    by_word = {w.word: w for w in plan.words}
    read = by_word["read"]
    n, big_n = 4, len(DOCS)
    x = 1 + (big_n - n + 0.5) / (n + 0.5)
    assert read.weight == pytest.approx((x**0.2 - 1) / 0.2, rel=1e-12)
    ((terms, boost),) = read.groups
    df = df_lookup(stats)(terms)
    idf_sum = sum(math.log(1 + (big_n - df[t] + 0.5) / (df[t] + 0.5)) for t in terms)
    assert boost * idf_sum == pytest.approx(read.weight, rel=1e-12)
    assert terms[0] == "read" and read.compounds_used == read.compounds_total == 5


def test_query_casing_splits_first_then_the_learned_split() -> None:
    stats = build()
    cased = plan_identifier_query("SetReadDeadline", stats, df_lookup(stats))
    assert cased.tokens == (("setreaddeadline", ("set", "read", "deadline")),)
    typed = plan_identifier_query("setreaddeadline", stats, df_lookup(stats))
    assert typed.tokens == cased.tokens


def test_budget_keeps_one_clause_per_word_then_the_score_mass() -> None:
    stats = build()
    full = plan_identifier_query("read file socket", stats, df_lookup(stats), ALL_SPANS)
    tight = plan_identifier_query(
        "read file socket",
        stats,
        df_lookup(stats),
        IdentifierSettings(budget=4, select="mass", span_max_df=1.0),
    )
    assert tight.clauses == 4 < full.clauses
    assert {w.word for w in tight.words} == {w.word for w in full.words}
    for w in tight.words:  # kept compounds are a most-frequent-first prefix
        listed = [t for terms, _ in w.groups for t in terms if t != w.word]
        assert listed == [stats.words[i] for i in stats.compounds_of(w.word)][: len(listed)]
    capped = plan_identifier_query(
        "read", stats, df_lookup(stats), IdentifierSettings(cap=2, span_max_df=1.0)
    )
    assert capped.words[0].compounds_used == 2


def test_multi_selection_prefers_compounds_holding_several_query_words() -> None:
    stats = build(shards=1)
    words = ("set", "read", "deadline")
    mass = plan_identifier_query(
        "set read deadline",
        stats,
        df_lookup(stats),
        IdentifierSettings(budget=6, select="mass", span_max_df=1.0),
    )
    multi = plan_identifier_query(
        "set read deadline",
        stats,
        df_lookup(stats),
        IdentifierSettings(budget=6, select="multi", span_max_df=1.0),
    )

    def listed(plan: Any) -> list[str]:
        read = next(w for w in plan.words if w.word == "read")
        return [t for terms, _ in read.groups for t in terms if t != "read"]

    assert "readfile" in listed(mass)  # the most frequent compound of "read"
    assert listed(multi) and set(listed(multi)) <= {"readdeadline", "setreaddeadline"}
    assert all(sum(p in words for p in stats.parts_of(t)) >= 2 for t in listed(multi))


@pytest.mark.parametrize("select", ["words", "cover"])
def test_compounds_holding_more_of_the_query_come_first(select: str) -> None:
    """ "set read deadline": setreaddeadline holds all three query words, readdeadline two.
    With room for two pairs, ``words`` and ``cover`` give both to setreaddeadline (in the
    lists of read and of deadline); ``multi`` orders the two compounds by mass alone."""
    stats = build(shards=1)
    settings = IdentifierSettings(budget=3 + 2, select=select, span_max_df=1.0)
    plan = plan_identifier_query("set read deadline", stats, df_lookup(stats), settings)
    by_word = {w.word: w for w in plan.words}
    assert plan.clauses == 5
    for word in ("read", "deadline"):
        listed = [t for terms, _ in by_word[word].groups for t in terms if t != word]
        assert listed == ["setreaddeadline"], (word, listed)
    multi = plan_identifier_query(
        "set read deadline",
        stats,
        df_lookup(stats),
        IdentifierSettings(budget=5, select="multi", span_max_df=1.0),
    )
    chosen = {
        t
        for w in multi.words
        if w.word != "set"
        for terms, _ in w.groups
        for t in terms
        if t != w.word
    }
    assert "readdeadline" in chosen


def test_spans_are_grouped_by_shards_on_multi_shard_indices() -> None:
    stats = build(shards=3)
    plan = plan_identifier_query(
        "read", stats, df_lookup(stats), replace(ALL_SPANS, shard_groups="max")
    )
    (read,) = plan.words
    masks = [{int(stats.mask[stats.word_id[t]]) for t in terms} for terms, _ in read.groups]
    assert all(len(m) == 1 for m in masks)  # one shard set per group
    assert len(read.groups) == len({next(iter(m)) for m in masks}) > 1


def test_auto_gives_one_span_per_shard_only_to_words_whose_shared_terms_are_rare() -> None:
    """shard_groups="auto": a word whose terms held by every shard sum to at most
    shard_exact_df of the documents, and whose spans per shard add at most
    shard_exact_clauses clauses, takes the exact per-shard spans; the others shard sets."""
    stats = build(
        shards=3,
        docs=[
            (0, "read readFile"),
            (1, "read readAll"),
            (2, "read readLine"),
            (0, "readDeadline now"),
        ],
    )
    df = df_lookup(stats)
    layouts = {
        mode: plan_identifier_query("read", stats, df, replace(ALL_SPANS, shard_groups=mode))
        for mode in ("max", "shard")
    }
    full = 0b111
    (read,) = layouts["max"].words
    listed = {t for terms, _ in read.groups for t in terms}
    shared = sum(
        df([t])[t]
        for t in listed
        if t not in stats.word_id or int(stats.mask[stats.word_id[t]]) in (0, full)
    )
    share = shared / stats.doc_count
    assert share > 0 and layouts["max"].words != layouts["shard"].words
    extra = layouts["shard"].clauses - layouts["max"].clauses  # the terms repeated per shard
    assert extra > 0
    for exact_df, clauses, want in (
        (share, extra, "shard"),
        (share * 0.99, extra, "max"),
        (1.0, extra, "shard"),
        (0.0, extra, "max"),
        (1.0, extra - 1, "max"),
        (1.0, 10**6, "shard"),
    ):
        auto = plan_identifier_query(
            "read",
            stats,
            df,
            replace(
                ALL_SPANS, shard_groups="auto", shard_exact_df=exact_df, shard_exact_clauses=clauses
            ),
        )
        assert auto.words == layouts[want].words, (exact_df, clauses, want)
    (exact,), (best,) = layouts["shard"].words, layouts["max"].words
    assert exact.exact and not best.exact  # and esqlog explain --identifiers says so:
    views = {
        mode: format_subword_rows(
            IdentifierContext(
                stats, cast(Vocabulary, None), layouts[mode], replace(ALL_SPANS, shard_groups=mode)
            )
        )
        for mode in layouts
    }
    assert f"({len(exact.groups)} spans, one per shard: exact)" in views["shard"]
    assert f"({len(best.groups)} spans by shard set: the best of them)" in views["max"]
    with pytest.raises(UsageError, match="shard_exact_df"):
        IdentifierSettings(shard_exact_df=1.5)
    with pytest.raises(UsageError, match="shard_exact_clauses"):
        IdentifierSettings(shard_exact_clauses=-1)


def test_shard_groups_combine_by_their_best_or_one_span_per_shard() -> None:
    """max: a word's shard-set spans under one dis_max; sum: side by side; shard: one span
    per shard holding every listed term that shard holds (exact: see identifier_groups)."""
    stats = build(shards=3)

    def mask(t: str) -> int:
        return int(stats.mask[stats.word_id[t]]) if t in stats.word_id else 0b111

    queries = {}
    for mode in ("max", "sum", "shard"):
        settings = IdentifierSettings(span_max_df=1.0, shard_groups=mode)
        plan = plan_identifier_query("read", stats, df_lookup(stats), settings)
        queries[mode] = (plan, plan.query("body", settings)["bool"]["should"])
    (read_max,), should_max = queries["max"][0].words, queries["max"][1]
    assert len(read_max.groups) > 1 and [next(iter(c)) for c in should_max] == ["dis_max"]
    assert len(queries["sum"][1]) == len(read_max.groups)  # the groups, added
    (read,) = queries["shard"][0].words
    listed = {t for terms, _ in read.groups for t in terms}
    for terms, _ in read.groups:
        shared = [k for k in range(3) if all(mask(t) >> k & 1 for t in terms)]
        assert any(set(terms) == {t for t in listed if mask(t) >> k & 1} for k in shared)
    assert sum(len(t) for t, _ in read.groups) > len(listed)  # a term on several shards


def test_operator_and_minimum_should_match_filter_without_scoring() -> None:
    stats = build()
    plan = plan_identifier_query("read socket", stats, df_lookup(stats), ALL_SPANS)
    plain = plan.query("body", IdentifierSettings())
    assert "filter" not in plain["bool"]
    both = plan.query("body", IdentifierSettings(operator="and"))
    assert both["bool"]["should"] == plain["bool"]["should"]
    read_filter = both["bool"]["filter"][0]["terms"]["body"]
    assert "read" in read_filter and "readfile" in read_filter and "socket" not in read_filter
    msm = plan.query("body", IdentifierSettings(minimum_should_match=1))
    assert msm["bool"]["filter"][0]["bool"]["minimum_should_match"] == 1
    none = plan_identifier_query("zzzz", stats, df_lookup(stats))
    assert none.query("body", IdentifierSettings()) == {"match_none": {}}


@pytest.mark.parametrize("shards", [1, 3])
@pytest.mark.parametrize("engine_query", ["span", "plugin"])
@pytest.mark.parametrize("shard_groups", ["max", "sum", "shard", "auto"])
def test_an_unfiltered_query_lists_exactly_the_plans_terms(
    shards: int, engine_query: str, shard_groups: str
) -> None:
    """The wrapper fits a query under the engine's clause limit by its plan's count
    (esqlog.wrapper.identifier_clauses.build_clauses): without an and/msm filter the query must list
    exactly that many terms; a filter lists more, so those queries are counted."""
    from esqlog.wrapper.identifier_clauses import terms_in as _terms_in

    stats = build(shards=shards)
    texts = [text for _, text in DOCS] + ["read socket", "web", "zzzz", "handle upgrade read"]
    for text in texts:
        for budget in (2, 300):
            settings = IdentifierSettings(
                span_max_df=1.0,
                budget=budget,
                engine_query=engine_query,  # type: ignore[arg-type]
                shard_groups=shard_groups,  # type: ignore[arg-type]
            )
            plan = plan_identifier_query(text, stats, df_lookup(stats), settings)
            assert _terms_in(plan.query("body", settings)) == plan.clauses, text
            if plan.clauses:
                filtered = replace(settings, operator="and")
                assert _terms_in(plan.query("body", filtered)) > plan.clauses


@pytest.mark.parametrize("engine_query", ["span", "plugin"])
@pytest.mark.parametrize("options", [{}, {"operator": "and"}, {"minimum_should_match": 1}])
def test_the_built_clause_fits_the_engines_clause_limit(
    engine_query: str, options: dict[str, Any]
) -> None:
    """Whatever the filter, the clause the wrapper builds lists no more terms than it is
    allowed (an and/msm filter lists each token's terms once more: counted, not assumed)."""
    from esqlog.scoring.matchspec import parse_match
    from esqlog.wrapper.identifier_clauses import build_clauses as _build
    from esqlog.wrapper.identifier_clauses import terms_in as _terms_in

    stats = build()
    vocab = cast(Any, type("Snapshot", (), {"df_of": staticmethod(df_lookup(stats))})())
    base = IdentifierSettings(span_max_df=1.0, engine_query=engine_query)  # type: ignore[arg-type]
    text = "read the file and upgrade the web socket handle"
    spec = parse_match({"body": {"query": text, **options}})
    assert spec is not None
    unbounded = _build(base, spec, stats, vocab, 10_000, False, "i", False, lambda *a: None)
    assert unbounded is not None
    needed = _terms_in(unbounded[0])
    for allowed in range(needed - 1, 3, -3):
        built = _build(base, spec, stats, vocab, allowed, False, "i", False, lambda *a: None)
        assert built is None or _terms_in(built[0]) <= allowed, allowed


def test_common_subwords_keep_their_own_term_apart_from_their_compounds() -> None:
    """span_max_df: a sub-word in more than that share of documents keeps its own term out
    of the span; its compounds form a span of their own with the same weight ("split"),
    or are dropped ("own")."""
    stats = build(shards=1)
    split = plan_identifier_query(
        "read web", stats, df_lookup(stats), IdentifierSettings(span_max_df=0.5)
    )
    read = {w.word: w for w in split.words}["read"]  # 4 of 6 documents: common
    (own, own_boost), (comps, comps_boost) = read.groups
    assert own == ("read",) and "read" not in comps and read.apart
    assert set(comps) == {stats.words[i] for i in stats.compounds_of("read")}
    df = df_lookup(stats)

    def idf(t: str) -> float:
        return math.log(1 + (len(DOCS) - df([t])[t] + 0.5) / (df([t])[t] + 0.5))

    assert own_boost * idf("read") == pytest.approx(read.weight, rel=1e-12)
    assert comps_boost * sum(idf(t) for t in comps) == pytest.approx(read.weight, rel=1e-12)
    query = split.query("body", IdentifierSettings(span_max_df=0.5))
    kinds = [next(iter(c)) for c in query["bool"]["should"]]
    assert kinds.count("term") >= 1 and kinds.count("span_or") >= 1
    dropped = plan_identifier_query(
        "read web", stats, df_lookup(stats), IdentifierSettings(span_max_df=0.5, common="own")
    )
    by_word = {w.word: w for w in dropped.words}
    assert by_word["read"].groups == ((("read",), own_boost),) and not by_word["read"].apart
    assert by_word["web"].compounds_used == 1  # rare and only inside identifiers


def test_rare_first_spends_the_budget_on_rarer_words_compounds() -> None:
    """Under a tight budget the common word's frequent compound waits for the rare word's:
    a rare word missing a compound loses the whole match of that document."""
    docs = [(0, "getName(x)")] * 7 + [
        (0, "get it"),
        (0, "fooBar here"),
        (0, "bar none"),
        (0, "other words"),
        (0, "more words"),
    ]
    stats = build(shards=1, docs=docs)
    df = Counter(t for _, text in docs for t in set(standard_terms(text) or []))

    def used(rare_first: bool, rare_word_df: int | None = None) -> dict[str, int]:
        plan = plan_identifier_query(
            "get bar",
            stats,
            lambda ts: {t: df[t] for t in ts},
            IdentifierSettings(
                budget=3,
                span_max_df=0.5,
                select="mass",
                rare_first=rare_first,
                rare_word_df=rare_word_df,
            ),
        )
        return {w.word: w.compounds_used for w in plan.words}

    # get: 8 of 12 documents (common), its compound getname in 7; bar: 2, foobar in 1
    assert used(False) == {"get": 1, "bar": 0}  # score mass: getname's 7 documents win
    assert used(True) == {"get": 0, "bar": 1}
    # a query without a word of df <= 1 is a plain one: the budget by score mass alone
    assert used(True, rare_word_df=1) == {"get": 1, "bar": 0}
    assert used(True, rare_word_df=2) == {"get": 0, "bar": 1}  # bar (df 2) is rare here


def test_queries_without_a_rare_word_are_scored_at_q_one() -> None:
    stats = build(shards=1)
    settings = IdentifierSettings(q=0.8, span_max_df=1.0, rare_word_df=2)
    lookup = df_lookup(stats)
    # "read" and "file" are each in 3 or more of the 6 documents: no word at or under df 2
    common = plan_identifier_query("read file", stats, lookup, settings)
    assert min(w.df for w in common.words) > 2 and common.q == 1.0 and common.plain
    read = {w.word: w for w in common.words}["read"]
    assert read.weight == pytest.approx(math.log(1 + (6 - 4 + 0.5) / (4 + 0.5)), rel=1e-12)
    # "upgrade" (df 1) is rare: the query keeps q = 0.8, and so does any query without the rule
    rare = plan_identifier_query("upgrade file", stats, lookup, settings)
    assert rare.q == 0.8 and not rare.plain
    assert (
        plan_identifier_query(
            "read file", stats, lookup, IdentifierSettings(q=0.8, span_max_df=1.0)
        ).q
        == 0.8
    )


FAMILY = ("apple", "banana", "cherry", "damson", "elder", "fig", "grape", "hazel", "kiwi", "lemon")
MEMBERS = (
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
)


def family_docs() -> list[tuple[int, str]]:
    """Twelve generated files (one per 'zone') with the same ten functions, and some prose."""
    funcs = " ".join(f"fmt{name.title()}()" for name in FAMILY)
    return [(0, f"zone_{m} {funcs}") for m in MEMBERS] + [
        (0, "read the whole file"),
        (0, "write the file back"),
        (0, "socket read deadline"),
        (0, "readFile and writeFile"),
        (0, "the socket upgrade"),
        (0, "one more line"),
    ]


def test_a_generated_family_shows_as_a_spike_in_words_per_df() -> None:
    stats = build(shards=1, docs=family_docs())
    # every member holds zone, fmt, the ten function names and their ten second parts
    family = {"zone", "fmt", *(f"fmt{n}" for n in FAMILY), *FAMILY}
    assert {
        w
        for w in stats.words
        if (stats.split_df(w) or 0) == len(MEMBERS)
        or stats.df_engine[stats.word_id[w]] == len(MEMBERS)
    } == family
    # nothing else has a df near 12 (9..16): the spike is its own count of words
    assert stats.family_excess(len(MEMBERS)) == pytest.approx(len(family))
    assert stats.family_excess(1) == 0.0  # a word of one document is no family
    assert stats.family_excess(2) < 3.0  # "read", "file", "socket", "the": few, no spike
    assert stats.family_excess(10**6) == 0.0


def test_queries_naming_a_generated_family_are_scored_at_q_one() -> None:
    docs = family_docs()
    stats = build(shards=1, docs=docs)
    df = Counter(t for _, text in docs for t in set(standard_terms(text) or []))

    def lookup(terms: list[str]) -> dict[str, int]:
        return {t: df[t] for t in terms}

    on = IdentifierSettings(q=0.8, span_max_df=1.0)  # family_excess 3, the default
    named = plan_identifier_query("fmtCherry for zone_golf", stats, lookup, on)
    assert named.plain and named.q == 1.0 and named.family in {"fmtcherry", "fmt", "cherry", "zone"}
    assert not plan_identifier_query("read the socket", stats, lookup, on).plain
    off = plan_identifier_query(
        "fmtCherry for zone_golf",
        stats,
        lookup,
        IdentifierSettings(q=0.8, span_max_df=1.0, family_excess=None),
    )
    assert off.q == 0.8 and not off.plain and off.family == ""


def test_a_plain_text_takes_every_compound_where_the_nodes_keep_whole_words() -> None:
    """On a client budget a plain text picks compounds by score mass; where the nodes keep
    each word's whole group it takes them all: the plain split stream itself."""
    docs = family_docs()
    stats = build(shards=1, docs=docs)
    df = Counter(t for _, text in docs for t in set(standard_terms(text) or []))

    def lookup(terms: list[str]) -> dict[str, int]:
        return {t: df[t] for t in terms}

    text = "fmtCherry for zone_golf"
    lists = "esqlog-words-0123456789abcdef"
    for select, sent in (("auto", "all"), ("all", "all"), ("cover", "mass"), ("mass", "mass")):
        settings = IdentifierSettings(q=0.8, span_max_df=1.0, engine_query="plugin", select=select)
        weighed = weigh_words(text, stats, lookup, settings)
        assert weighed.plain and weighed.settings.select == "mass"  # the client's budget
        clause = node_clause(weighed, "body", lists, 300)[node_plan.QUERY_NAME]
        assert clause["select"] == sent, select
        assert {w["tier"] for w in clause["words"]} == {1.0}  # rare_first off for plain texts
    # a text that is not plain sends what it always did
    settings = IdentifierSettings(q=0.8, span_max_df=1.0, engine_query="plugin", select="cover")
    weighed = weigh_words("read the socket", stats, lookup, settings)
    assert node_clause(weighed, "body", lists, 300)[node_plan.QUERY_NAME]["select"] == "cover"


def test_settings_are_validated() -> None:
    for bad in (
        {"budget": 0},
        {"cap": -1},
        {"operator": "xor"},
        {"span_max_df": 2.0},
        {"select": "best"},
        {"common": "some"},
        {"rare_word_df": -1},
        {"family_excess": 1.0},
    ):
        with pytest.raises(UsageError):
            IdentifierSettings(**bad)


def test_file_round_trip(tmp_path: Path) -> None:
    stats = build()
    path, size = save_identifier_stats(stats, tmp_path / "x.idents.npz", "abc")
    assert size == path.stat().st_size > 0
    loaded = load_identifier_stats(path, "abc")
    assert loaded.words == stats.words and loaded.q == pytest.approx(stats.q)
    assert np.array_equal(loaded.df_split, stats.df_split)
    assert loaded.compounds_of("read") == stats.compounds_of("read")


@pytest.mark.parametrize(
    "damage", ["missing", "truncated", "other", "directory", "foreign", "pointer"]
)
def test_bad_files_are_refused_with_one_line(tmp_path: Path, damage: str) -> None:
    stats = build()
    path, _ = save_identifier_stats(stats, tmp_path / "x.idents.npz", "abc")
    sha = "abc"
    if damage == "missing":
        path.unlink()
    elif damage == "truncated":
        path.write_bytes(path.read_bytes()[:300])
    elif damage == "other":
        sha = "def"
    elif damage == "directory":
        path.unlink()
        path.mkdir()
    elif damage == "foreign":
        np.savez(path.open("wb"), meta=np.frombuffer(b'{"format": "x"}', np.uint8))
    else:
        bad = IdentifierStats(
            **{**stats.__dict__, "parts_idx": stats.parts_idx + 10_000, "word_id": {}}
        )
        save_identifier_stats(bad, path, "abc")
    with pytest.raises(UsageError) as err:
        load_identifier_stats(path, sha)
    assert "\n" not in str(err.value) and "identifier statistics file" in str(err.value)


def test_prose_is_recognised_as_not_applying() -> None:
    prose = [
        (0, "the quick brown fox jumps over the lazy dog"),
        (1, "a manual page describes the command and its options"),
        (2, "see also the related commands for more details"),
    ]
    assert not build(docs=prose).applies
    assert build().applies and build().split_share > 0.2


def build_per_shard(docs: list[tuple[int, str]] = DOCS, shards: int = 3) -> IdentifierStats:
    """As the vocabulary scan feeds the collector: each term vector with its shard's df,
    each shard's field doc_count."""
    shard_df: Counter[tuple[int, str]] = Counter(
        (shard, t) for shard, text in docs for t in set(standard_terms(text) or [])
    )
    collector = SplitCollector("body")
    for shard, text in docs:
        counts = Counter(standard_terms(text))
        collector(
            shard,
            {"_source": {"body": text}},
            {t: {"term_freq": n, "doc_freq": shard_df[shard, t]} for t, n in counts.items()},
        )
    for shard in range(shards):
        collector.field_statistics(shard, sum(s == shard for s, _ in docs))
    df = Counter(t for _, text in docs for t in set(standard_terms(text) or []))
    return build_identifier_stats(
        collector,
        dict(df),
        index="i",
        index_uuid="u",
        field="body",
        shards=shards,
        doc_count=len(docs),
        created_at="now",
        predictor="esqlog-linear",
    )


def test_each_shards_own_statistics_are_recorded() -> None:
    stats = build_per_shard()
    assert stats.per_shard and stats.shard_docs.tolist() == [2, 2, 2]
    by_shard = [
        Counter(t for s, text in DOCS if s == k for t in set(standard_terms(text) or []))
        for k in range(3)
    ]
    spread = {t for t in set().union(*by_shard) if sum(t in c for c in by_shard) > 1}
    assert set(stats.local_terms) == spread and "read" in spread  # "read" on every shard
    for term in spread:
        assert stats.local_df[stats.local_row[term]].tolist() == [c[term] for c in by_shard]
    assert not build().per_shard  # no field statistics seen: no per-shard statistics


@pytest.mark.parametrize("read", [False, True], ids=["built", "read"])
@pytest.mark.parametrize("text", ["read the socket file", "read the error and return a string"])
def test_each_shards_query_lists_its_own_terms_with_its_own_idf(
    text: str, read: bool, tmp_path: Path
) -> None:
    """Per shard: only the terms the shard's documents hold, and every group's boost times
    the shard's idf sum of its terms is the word's weight (one exact saturation); also for
    plain words the split statistics do not hold that lie on several shards (error,
    return, string: their per-shard df). The statistics as calibrate builds them and as
    read from their file (terms found by hash, rows by the joined tables), with the plan's
    compounds remembered by position or looked up by name again."""
    from esqlog.identifiers.shards import shard_groups

    stats = build_per_shard()
    if read:
        stats = load_identifier_stats(save_identifier_stats(stats, tmp_path / "x.npz", "a")[0], "a")
    lookup = df_lookup(stats)
    plan = plan_identifier_query(text, stats, lookup, ALL_SPANS, 1)
    if read:
        assert len(stats.word_id._listed) > 3  # type: ignore[attr-defined]
        remembered = shard_groups(plan, stats)
        stats.word_id._listed.clear()  # type: ignore[attr-defined]
        assert shard_groups(plan, stats) == remembered
    assert all(len(w.groups) == 1 for w in plan.words)  # as on one shard
    held = [{t for s, text in DOCS if s == k for t in standard_terms(text) or []} for k in range(3)]
    global_df = lookup(sorted({t for w in plan.words for g, _ in w.groups for t in g}))
    listed_anywhere: set[str] = set()
    for k, per_word in enumerate(shard_groups(plan, stats)):
        n = int(stats.shard_docs[k])
        for w, groups in zip(plan.words, per_word, strict=True):
            for terms, boost in groups:
                listed_anywhere.update(terms)
                if not set(terms) <= held[k]:
                    # a plain word the split statistics do not hold (no sub-word, no split)
                    # is sent alone everywhere: a term clause matches nothing where absent
                    assert len(terms) == 1 and terms[0] not in stats.word_id
                    continue

                def local(t: str, k: int = k) -> int:
                    row = stats.local_row.get(t)
                    return int(stats.local_df[row, k]) if row is not None else global_df[t]

                idf = sum(math.log1p((n - local(t) + 0.5) / (local(t) + 0.5)) for t in terms)
                assert boost * idf == pytest.approx(w.weight, rel=1e-12)
    assert listed_anywhere == {t for w in plan.words for g, _ in w.groups for t in g}


def test_the_one_dfs_query_holds_the_per_shard_queries_terms_exactly() -> None:
    """The one query of a search that cannot go per shard lists exactly the terms of the
    per-shard queries (one match set); exact: on each shard, the span of that shard holds
    every listed term the shard holds, its boost times the index-wide idf sum of its terms
    is the word's weight; by shard set: each term once."""
    from esqlog.identifiers.shards import one_query_groups, shard_groups

    stats = build_per_shard()
    lookup = df_lookup(stats)
    plan = plan_identifier_query("read the socket file", stats, lookup, ALL_SPANS, 1)
    per_shard = shard_groups(plan, stats)
    n = stats.doc_count
    global_df = lookup(sorted({t for w in plan.words for g, _ in w.groups for t in g}))
    for exact in (True, False):
        groups = one_query_groups(plan, stats, exact)
        for k, w in enumerate(plan.words):
            mine = {t for terms, _ in groups[k] for t in terms}
            theirs = {t for shard in per_shard for terms, _ in shard[k] for t in terms}
            assert mine == theirs, w.word
            for terms, boost in groups[k]:
                idf = sum(
                    math.log1p((n - global_df[t] + 0.5) / (global_df[t] + 0.5)) for t in terms
                )
                assert boost * idf == pytest.approx(w.weight, rel=1e-12)
            if exact:
                for shard in per_shard:
                    for terms, _ in shard[k]:
                        assert tuple(terms) in {tuple(t) for t, _ in groups[k]}
            else:
                listed = [t for terms, _ in groups[k] for t in terms]
                assert len(listed) == len(set(listed))
    assert any(len(g) > 1 for g in one_query_groups(plan, stats))  # the layout is exercised


@pytest.mark.parametrize("older", ["esqlog-identifiers/1", "esqlog-identifiers/2"])
def test_per_shard_statistics_round_trip_and_older_files_are_refused(
    tmp_path: Path, older: str
) -> None:
    """Formats 1 and 2 have no checksum of their own: one line saying how to rewrite them."""
    stats = build_per_shard()
    path, _ = save_identifier_stats(stats, tmp_path / "x.idents.npz", "abc")
    loaded = load_identifier_stats(path, "abc")
    assert loaded.per_shard and loaded.local_terms == stats.local_terms
    assert np.array_equal(loaded.local_df, stats.local_df)
    assert np.array_equal(loaded.shard_docs, stats.shard_docs)
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    meta = json.loads(bytes(arrays["meta"]).decode())
    del meta["sha256"]
    arrays["meta"] = np.frombuffer(json.dumps({**meta, "format": older}).encode(), np.uint8)
    if older.endswith("/1"):  # format 1 had no per-shard arrays
        for key in ("local_words", "local_df", "shard_docs"):
            del arrays[key]
    np.savez(tmp_path / "old.npz", **arrays)
    with pytest.raises(UsageError) as err:
        load_identifier_stats(tmp_path / "old.npz", "abc")
    message = str(err.value)
    assert "\n" not in message and f"older format {older}" in message
    assert "recalibrate with esqlog calibrate --vocabulary --identifiers" in message


@pytest.mark.parametrize("damage", ["shape", "over", "counts"])
def test_bad_per_shard_statistics_are_refused(tmp_path: Path, damage: str) -> None:
    stats = build_per_shard()
    fields = dict(stats.__dict__)
    if damage == "shape":
        fields["local_df"] = stats.local_df[:, :2].copy()
    elif damage == "over":
        fields["local_df"] = stats.local_df + np.uint32(100)
    else:
        fields["shard_docs"] = -stats.shard_docs
    path, _ = save_identifier_stats(IdentifierStats(**fields), tmp_path / "x.npz", "abc")
    with pytest.raises(UsageError) as err:
        load_identifier_stats(path, "abc")
    assert "inconsistent" in str(err.value) and "\n" not in str(err.value)


def test_shards_collected_apart_and_absorbed_in_order_equal_one_collector() -> None:
    """What a scan in one process per shard does (esqlog.identifiers.processes): the merged
    collector gives the same statistics as one collector reading the shards in turn, even
    where a casing first appears in a document whose term differs ("os.ReadFile")."""
    docs = [
        (0, "see os.ReadFile for the details"),
        *DOCS,
        (0, "call net.DialTimeout here"),
        (1, "DialTimeout dials with a deadline"),
        (1, "ReadFile again; SetReadDeadline and readDeadline"),
        (2, "WebSocket upgrade: handleWebSocketUpgrade"),
    ]
    docs.sort(key=lambda d: d[0])  # a sequential scan reads shard after shard
    one = SplitCollector("body")
    apart = {k: SplitCollector("body") for k in range(3)}
    for shard, text in docs:
        counts = Counter(standard_terms(text))
        terms = {t: {"term_freq": n, "doc_freq": 1} for t, n in counts.items()}
        for collector in (one, apart[shard]):
            collector(shard, {"_source": {"body": text}}, terms)
            collector.field_statistics(shard, 1)
    merged = SplitCollector("body")
    for shard in range(3):
        absorb(merged, apart[shard])
    one.finish()
    assert merged.terms == one.terms and merged.splits == one.splits
    assert one.splits[one.term_id["readfile"]] == ("read", "file")
    # "net.DialTimeout" is one token "net.dialtimeout": its casing still splits the term
    # dialtimeout where a later document holds it, whichever collector reads that document
    assert one.splits[one.term_id["dialtimeout"]] == ("dial", "timeout")
    assert merged.docs == one.docs
    n = len(one.terms)
    for mine, theirs in zip(merged.totals.view(n)[:2], one.totals.view(n)[:2], strict=True):
        assert np.array_equal(mine, theirs)
    assert shard_df(merged).keys() == shard_df(one).keys()
    for shard, best in shard_df(one).items():
        assert np.array_equal(shard_df(merged)[shard], best), shard

    def postings(c: SplitCollector) -> tuple[list[int], list[int]]:
        chunks = list(c.postings.chunks(1 << 20))
        return (
            [t for ids, _ in chunks for t in ids.tolist()],
            [n for _, lengths in chunks for n in lengths.tolist()],
        )

    assert postings(merged) == postings(one)
    df = Counter(t for _, text in docs for t in set(standard_terms(text) or []))

    def stats_of(c: SplitCollector) -> IdentifierStats:
        return build_identifier_stats(
            c,
            dict(df),
            index="i",
            index_uuid="u",
            field="body",
            shards=3,
            doc_count=len(docs),
            created_at="now",
            predictor="esqlog-linear",
        )

    # the worker processes' path: each shard's collector as arrays, merged as arrays
    again = {k: SplitCollector("body") for k in range(3)}
    for shard, text in docs:
        counts = Counter(standard_terms(text))
        again[shard](
            shard,
            {"_source": {"body": text}},
            {t: {"term_freq": n, "doc_freq": 1} for t, n in counts.items()},
        )
        again[shard].field_statistics(shard, 1)
    from_tables = SplitCollector("body")
    merge_shards(
        {k: (ShardScan({}, {}), c.tables()) for k, c in again.items()}, 3, from_tables, "i", "body"
    )
    a, b, c = stats_of(one), stats_of(merged), stats_of(from_tables)
    for other in (b, c):
        assert a.words == other.words and a.local_terms == other.local_terms
        for name in (
            "df_engine",
            "df_split",
            "mask",
            "parts_ptr",
            "parts_idx",
            "local_df",
            "shard_docs",
        ):
            assert np.array_equal(getattr(a, name), getattr(other, name)), name
    assert a.parts_of("readfile") == c.parts_of("readfile") == ("read", "file")
    merged.discard()  # absorb wrote the shards' postings to disk: delete them
    from_tables.discard()
    assert not merged.postings.segments and not from_tables.postings.segments


def test_errors_keep_problem_and_fix_across_processes() -> None:
    import pickle

    from esqlog.errors import ClusterError

    error = pickle.loads(pickle.dumps(ClusterError("the shard failed", "try again")))
    assert isinstance(error, ClusterError)
    assert (error.problem, error.fix) == ("the shard failed", "try again")


@pytest.mark.parametrize("key", ["df_split", "df_engine"])
def test_df_above_the_document_count_is_refused(tmp_path: Path, key: str) -> None:
    """A file rewritten with its checksums recomputed but a df above N would silently give
    those words no weight (an empty result): it is refused in one line."""
    stats = build_per_shard()
    fields = dict(stats.__dict__)
    df = getattr(stats, key).copy()
    df[0] = np.uint32(stats.doc_count + 1)
    fields[key] = df
    path, _ = save_identifier_stats(IdentifierStats(**fields), tmp_path / "x.npz", "abc")
    with pytest.raises(UsageError) as err:
        load_identifier_stats(path, "abc")
    message = str(err.value)
    assert "inconsistent" in message and key in message and "\n" not in message
