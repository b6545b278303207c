"""I/O-free logic behind issue 12 items 1, 2, 4 and 12: which analyzer, which searches stay
native, how many clauses, and statistics that disagree. Engine behaviour itself is tested
in tests/engine/test_adversarial_matchset.py."""

from __future__ import annotations

from typing import Any

import pytest

from esqlog.engine.steps import Request
from esqlog.scoring.clauses import UNBOUNDED, count_clauses, filters_on_score, max_clause_count_plan
from esqlog.scoring.rewrite import FieldCalibration, ResolvedText, RewriteSettings, rewrite_query
from esqlog.statistics.analysis import search_analyses_of
from esqlog.statistics.terms import FieldStats, TextStats


def _unknown(field: str, text: str) -> int | None:
    return None


# --- search analyzers ---------------------------------------------------------------------


def _mapping(**fields: tuple[str, str]) -> dict[str, Any]:
    return {
        f: {
            "full_name": f,
            "mapping": {f.split(".")[-1]: {"type": "text", "analyzer": a, "search_analyzer": s}},
        }
        for f, (a, s) in fields.items()
    }


def test_search_analyses_follow_what_the_engine_reports() -> None:
    analysis = {
        "analyzer": {
            "default_search": {"type": "standard", "stopwords": ["file"]},
            "syn": {"tokenizer": "standard", "filter": ["lowercase", "rf"]},
            "ws": {"tokenizer": "whitespace"},
        },
        "filter": {"rf": {"type": "synonym_graph", "synonyms": ["rf, read file"]}},
    }
    found = search_analyses_of(
        _mapping(
            plain=("default", "default"),
            std=("standard", "standard"),
            ds=("default", "default_search"),
            syn=("standard", "syn"),
            ws=("standard", "ws"),
            kuro=("standard", "kuromoji"),
        ),
        analysis,
        ["plain", "std", "ds", "syn", "ws", "kuro", "gone"],
    )
    assert [f for f in ("plain", "std", "ds", "syn", "ws") if found.standard(f)] == ["plain", "std"]
    assert [f for f in ("plain", "ds", "syn", "ws", "kuro", "gone") if found.exact(f)] == [
        "plain",
        "ds",
        "ws",
    ]
    assert found.per_field() == {
        "plain": None,
        "std": None,
        "ds": "default_search",
        "syn": "syn",
        "ws": "ws",
        "kuro": "kuromoji",
    }


def test_a_custom_analyzer_named_like_a_builtin_is_not_the_builtin() -> None:
    found = search_analyses_of(
        _mapping(a=("standard", "standard"), b=("default", "default")),
        {
            "analyzer": {
                "standard": {"tokenizer": "whitespace"},
                "default": {"tokenizer": "whitespace"},
            }
        },
        ["a", "b"],
    )
    assert not found.standard("a") and not found.standard("b")
    assert found.exact("a") and found.exact("b")


# --- min_score ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("min_score", "query", "expected"),
    [
        (None, {"match": {"f": "x"}}, False),
        (0.0, {"match": {"f": "x"}}, True),
        (None, {"function_score": {"query": {"match": {"f": "x"}}, "min_score": 1}}, True),
        (
            None,
            {
                "bool": {
                    "filter": [
                        {
                            "script_score": {
                                "query": {"match_all": {}},
                                "script": {"source": "1"},
                                "min_score": 2,
                            }
                        }
                    ]
                }
            },
            True,
        ),
        (None, {"function_score": {"query": {"match": {"f": "x"}}}}, False),
        (None, {"term": {"min_score": 3}}, False),  # a field named min_score is no threshold
    ],
)
def test_searches_filtering_on_scores_are_recognised(
    min_score: Any, query: Any, expected: bool
) -> None:
    assert filters_on_score(min_score, query) is expected


def test_a_function_score_min_score_subtree_is_never_rewritten() -> None:
    resolved = {("f", "a b"): ResolvedText(("a", "b"), (0, 1), {"a": 1, "b": 2}, 10)}
    settings = RewriteSettings({"f": FieldCalibration(0.5)})
    inner = {"function_score": {"query": {"match": {"f": "a b"}}, "min_score": 1.0}}
    query = {"bool": {"should": [inner, {"match": {"f": "a b"}}]}}
    out = rewrite_query(query, resolved, settings)
    assert out["bool"]["should"][0] == inner
    assert "bool" in out["bool"]["should"][1]  # the sibling is still rewritten


# --- clause counting and joins --------------------------------------------------------------


def test_clause_counts_bound_what_lucene_counts() -> None:
    query = {
        "bool": {
            "should": [{"term": {"f": "a"}}, {"match": {"g": "abc de"}}],
            "filter": [{"range": {"n": {"gte": 1}}}],
            "must_not": {"dis_max": {"queries": [{"term": {"f": "x"}}] * 3}},
        }
    }
    assert count_clauses(query, _unknown) == 1 + 6 + 1 + 3  # unknown text: one per char
    assert count_clauses(query, lambda f, t: 2) == 1 + 2 + 1 + 3
    assert (
        count_clauses({"multi_match": {"query": "ab", "fields": ["f", "g^2"]}}, lambda f, t: 2) == 4
    )
    assert count_clauses({"multi_match": {"query": "ab", "fields": ["f*"]}}, _unknown) == UNBOUNDED
    assert count_clauses({"query_string": {"query": "ab"}}, _unknown) == UNBOUNDED


def _joined(n_terms: int, joins: int, cap: int) -> dict[str, Any]:
    terms = tuple(f"t{i}" for i in range(n_terms))
    df = dict.fromkeys(terms, 1)
    found = tuple((f"j{i}", 2) for i in range(joins))
    text = " ".join(terms)
    resolved = {("f", text): ResolvedText(terms, tuple(range(n_terms)), df, 100, found)}
    settings = RewriteSettings({"f": FieldCalibration(0.5)}, join_weight=0.5, max_clauses=cap)
    return rewrite_query({"match": {"f": text}}, resolved, settings)


@pytest.mark.parametrize(
    ("n_terms", "joins", "cap", "kept"),
    [
        (10, 4, 1024, 4),
        (1020, 8, 1024, 4),
        (1024, 8, 1024, 0),
        (1030, 8, 1024, 0),
        (5, 3, 6, 1),
    ],
)
def test_joins_are_added_only_while_the_query_fits(
    n_terms: int, joins: int, cap: int, kept: int
) -> None:
    out = _joined(n_terms, joins, cap)
    clauses = out["bool"]["should"]
    assert len(clauses) == n_terms + kept
    assert count_clauses(out, _unknown) <= max(cap, n_terms)


def _drive(plan: Any, answer: Any) -> Any:
    request = next(plan)
    assert isinstance(request, Request) and request.path == "/_cluster/settings"
    try:
        if isinstance(answer, Exception):
            plan.throw(answer)
        plan.send(answer)
    except StopIteration as done:
        return done.value
    raise AssertionError("the plan asked for more")


def test_the_clause_limit_is_never_raised_above_1024() -> None:
    def setting(value: Any) -> dict[str, Any]:
        return {"indices": {"query": {"bool": {"max_clause_count": value}}}}

    assert _drive(max_clause_count_plan("elasticsearch"), {"defaults": setting("4096")}) == 1024
    assert _drive(max_clause_count_plan("opensearch"), {"defaults": setting("1024")}) == 1024
    assert _drive(max_clause_count_plan("opensearch"), {"defaults": setting("512")}) == 512
    assert (
        _drive(
            max_clause_count_plan("elasticsearch"),
            {"persistent": setting("300"), "defaults": setting("4096")},
        )
        == 300
    )
    assert _drive(max_clause_count_plan("opensearch"), {"transient": setting(9000)}) == 1024
    assert _drive(max_clause_count_plan("opensearch"), {"transient": setting("x")}) == 1024
    assert _drive(max_clause_count_plan("opensearch"), PermissionError("403")) == 1024


# --- statistics read at different moments -------------------------------------------------------


def test_text_stats_clamp_df_to_the_document_count() -> None:
    stats = TextStats(
        ("a", "b"), (0, 1), {"a": 7, "b": 3}, FieldStats(5, 50, 9), {"ab": 9, "a_b": 1}
    )
    assert stats.df == {"a": 5, "b": 3}
    assert stats.extra_df == {"ab": 5, "a_b": 1}


def test_a_snapshot_with_a_negative_count_is_refused_in_one_line(tmp_path: Any) -> None:
    import numpy as np

    from esqlog.errors import UsageError
    from esqlog.statistics.term_keys import build_bloom
    from esqlog.statistics.vocabulary import Vocabulary, load_vocabulary, save_vocabulary

    vocab = Vocabulary(
        "i",
        "u",
        "body",
        -3,
        10,
        1,
        "t",
        np.array([1], dtype=np.uint64),
        np.array([1], dtype=np.uint32),
        build_bloom(["a"]),
    )
    path, _ = save_vocabulary(vocab, tmp_path / "v.npz")
    with pytest.raises(UsageError, match="incomplete metadata"):
        load_vocabulary(path)


def test_unreadable_search_analyzers_fall_back_to_the_calibration_with_one_warning() -> None:
    from esqlog.statistics.analysis import search_analyses_plan

    plan = search_analyses_plan("idx", ["a", "b"], {"a": True, "b": False})
    request = next(plan)
    assert isinstance(request, Request) and request.params == {"include_defaults": "true"}
    with pytest.warns(RuntimeWarning, match="cannot read the search analyzers of 'idx'"):
        try:
            plan.throw(PermissionError("403 forbidden"))
        except StopIteration as done:
            found = done.value
    assert found.standard("a") and found.exact("a")
    assert not found.exact("b")  # unknown search analyzer: left to the engine


def test_client_rerank_joins_are_cut_to_the_clause_limit() -> None:
    from esqlog.scoring.joins import joins_that_fit

    joins = (("ab", 1), ("a_b", 1), ("bc", 2))
    assert joins_that_fit([(("a", "b", "c"), joins)], 1024) == [joins]
    assert joins_that_fit([(("a", "b", "c"), joins)], 6) == [joins[:2]]  # 3 + 1 ids + 2
    assert joins_that_fit([(("a", "a", "b"), joins), (("c",), joins)], 7) == [joins[:3], ()]
    assert joins_that_fit([(tuple(f"t{i}" for i in range(1030)), joins)], 1024) == [()]
