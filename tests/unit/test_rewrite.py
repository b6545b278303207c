"""Tests for esqlog.scoring.rewrite: clause shapes, pass-through rules, and properties over random
bodies.

The property tests include a tiny BM25 evaluator: the original body scored with q-log IDF on
calibrated fields must give the same matching documents and the same scores as the rewritten
body scored with the engine's native IDF. That is the module's whole promise.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy as Strategy

from esqlog.scoring import qlog
from esqlog.scoring.matchspec import collect_body_texts, collect_query_texts
from esqlog.scoring.rewrite import (
    FieldCalibration,
    ResolvedText,
    RewriteSettings,
    rewrite_body,
    rewrite_query,
)

N_DOCS = 1000
DF = {"parse": 3, "json": 40, "read": 500, "file": 900, "alpha": 1, "beta": 2, "gamma": 7}


def resolved_for(field: str, text: str, positions: tuple[int, ...] | None = None) -> ResolvedText:
    """Whitespace analysis with the fixed DF table (unknown words get df 10)."""
    terms = tuple(text.lower().split())
    pos = tuple(range(len(terms))) if positions is None else positions
    return ResolvedText(terms, pos, {t: DF.get(t, 10) for t in terms}, N_DOCS)


def weight(term: str, q: float = 0.5, form: str = "lucene") -> float:
    return float(qlog.boost_weight(DF.get(term, 10), N_DOCS, q, form))


def close(value: float) -> Any:
    """A float expectation with a tolerance: the rewrite computes weights with ``math``
    (qlog.boost_weights), the tests with numpy (qlog.boost_weight); on some CPUs the two
    differ in the last bit, so an exact comparison fails on one machine and not another."""
    return pytest.approx(value, rel=1e-12, abs=1e-15)


CAL = {"code": FieldCalibration(0.5), "title": FieldCalibration(0.8, "rsj")}
BOOST = RewriteSettings(CAL)
SCRIPT = RewriteSettings(CAL, mode="script", script_id="my-script")
TEXTS = ["parse json", "json", "read read file", "alpha beta gamma", "alpha beta", "Parse"]
RESOLVED = {(f, t): resolved_for(f, t) for f in CAL for t in TEXTS}


def rq(
    query: dict[str, Any],
    s: RewriteSettings = BOOST,
    resolved: Mapping[tuple[str, str], ResolvedText] | None = None,
) -> dict[str, Any]:
    return rewrite_query(query, RESOLVED if resolved is None else resolved, s)


def term(field: str, value: str, boost: float) -> dict[str, Any]:
    return {"term": {field: {"value": value, "boost": close(boost)}}}


# ----------------------------------------------------------------------------- match shapes


def test_short_form_single_term_becomes_boosted_term() -> None:
    assert rq({"match": {"code": "json"}}) == term("code", "json", weight("json"))


def test_short_form_several_terms_become_should_with_msm_1() -> None:
    out = rq({"match": {"code": "parse json"}})
    assert out == {
        "bool": {
            "should": [
                term("code", "parse", weight("parse")),
                term("code", "json", weight("json")),
            ],
        }
    }


def test_long_form_or_keeps_msm_verbatim_boost_and_name() -> None:
    spec = {"query": "parse json", "minimum_should_match": "75%", "boost": 2.0, "_name": "m"}
    out = rq({"match": {"code": spec}})
    assert out["bool"]["minimum_should_match"] == "75%"
    assert out["bool"]["boost"] == 2.0
    assert out["bool"]["_name"] == "m"
    assert len(out["bool"]["should"]) == 2


@pytest.mark.parametrize("op", ["and", "AND", "And"])
def test_operator_and_becomes_must_and_keeps_msm(op: str) -> None:
    """The engines apply msm to match's all-MUST query too (issue 12 item 3): keep it."""
    spec = {"query": "parse json", "operator": op, "minimum_should_match": 2}
    out = rq({"match": {"code": spec}})
    assert out == {
        "bool": {
            "must": [term("code", "parse", weight("parse")), term("code", "json", weight("json"))],
            "minimum_should_match": 2,
        }
    }


def test_explicit_or_operator_and_boost_one_are_omitted_from_wrapper() -> None:
    out = rq({"match": {"code": {"query": "parse json", "operator": "or", "boost": 1}}})
    assert set(out["bool"]) == {"should"}


def test_duplicate_terms_give_one_clause_each() -> None:
    out = rq({"match": {"code": "read read file"}})
    values = [c["term"]["code"]["value"] for c in out["bool"]["should"]]
    assert values == ["read", "read", "file"]


def test_single_term_match_boost_multiplies_into_term_boost_and_carries_name() -> None:
    out = rq({"match": {"code": {"query": "json", "boost": 3.0, "_name": "n", "operator": "and"}}})
    expected = {"value": "json", "boost": close(weight("json") * 3.0), "_name": "n"}
    assert out == {"term": {"code": expected}}


def test_single_term_ignores_msm_like_lucene_termquery() -> None:
    out = rq({"match": {"code": {"query": "json", "minimum_should_match": 5}}})
    assert out == term("code", "json", weight("json"))


def test_form_and_q_come_from_the_field_calibration() -> None:
    out = rq({"match": {"title": "alpha beta gamma"}})
    boosts = [c["term"]["title"]["boost"] for c in out["bool"]["should"]]
    assert boosts == [close(weight(t, 0.8, "rsj")) for t in ("alpha", "beta", "gamma")]


def test_weights_equal_boost_weight_and_are_python_floats() -> None:
    out = rq({"match": {"code": "alpha beta gamma"}})
    for clause in out["bool"]["should"]:
        spec = clause["term"]["code"]
        expected = qlog.boost_weight(DF[spec["value"]], N_DOCS, 0.5, "lucene")
        assert type(spec["boost"]) is float
        assert spec["boost"] == close(float(expected))
    json.dumps(out, allow_nan=False)


def test_q_one_lucene_weights_are_exactly_one() -> None:
    s = RewriteSettings({"code": FieldCalibration(1.0)})
    out = rq({"match": {"code": "alpha beta gamma"}}, s)
    assert [c["term"]["code"]["boost"] for c in out["bool"]["should"]] == [1.0, 1.0, 1.0]


# ----------------------------------------------------------------------------- script mode


def script_clause(field: str, value: str, q: float = 0.5, form: str = "lucene") -> dict[str, Any]:
    params = {"q": q, "n": DF.get(value, 10), "N": N_DOCS, "form": form}
    return {
        "script_score": {
            "query": {"term": {field: {"value": value}}},
            "script": {"id": "my-script", "params": params},
        }
    }


def test_script_mode_single_term_puts_boost_and_name_on_script_score() -> None:
    out = rq({"match": {"code": {"query": "json", "boost": 2.5, "_name": "x"}}}, SCRIPT)
    expected = script_clause("code", "json")
    expected["script_score"].update({"boost": 2.5, "_name": "x"})
    assert out == expected


def test_script_mode_several_terms_and_params_carry_q_n_big_n() -> None:
    out = rq({"match": {"title": {"query": "alpha beta", "operator": "and"}}}, SCRIPT)
    assert out == {
        "bool": {
            "must": [
                script_clause("title", "alpha", 0.8, "rsj"),
                script_clause("title", "beta", 0.8, "rsj"),
            ]
        }
    }
    params = out["bool"]["must"][0]["script_score"]["script"]["params"]
    assert type(params["n"]) is int and type(params["N"]) is int and type(params["q"]) is float
    assert "source" not in out["bool"]["must"][0]["script_score"]["script"]


def test_script_mode_without_boost_has_no_boost_key() -> None:
    assert rq({"match": {"code": "json"}}, SCRIPT) == script_clause("code", "json")


def hybrid(fraction: float) -> RewriteSettings:
    return RewriteSettings(CAL, mode="script", script_id="my-script", script_df_fraction=fraction)


def applied_weight(clause: Mapping[str, Any]) -> float:
    """The factor a clause multiplies its term's native BM25 by: the term boost, or what the
    stored script computes from its params (the same boost_weight, see esqlog-qlog-term)."""
    if "term" in clause:
        (spec,) = clause["term"].values()
        return float(spec["boost"])
    params = clause["script_score"]["script"]["params"]
    return float(qlog.boost_weight(params["n"], params["N"], params["q"], params["form"]))


def test_script_mode_scripts_rare_terms_and_boosts_frequent_ones_with_the_same_weights() -> None:
    """A script_score clause hides its maximum score from Lucene, so only terms in at most
    script_df_fraction of the documents are scripted; the frequent ones (most of the work)
    get the boost mode's term clause. Both must apply exactly the boost mode's weights."""
    text = "parse json read file gamma unknown"  # df 3, 40, 500, 900, 7, 10 of N = 1000
    resolved = {(f, text): resolved_for(f, text) for f in CAL}
    for field, (q, form) in {"code": (0.5, "lucene"), "title": (0.8, "rsj")}.items():
        query = {"match": {field: text}}
        out = rq(query, hybrid(0.01), resolved)  # at most 10 documents: scripted
        assert out == {
            "bool": {
                "should": [
                    script_clause(field, "parse", q, form),
                    term(field, "json", weight("json", q, form)),
                    term(field, "read", weight("read", q, form)),
                    term(field, "file", weight("file", q, form)),
                    script_clause(field, "gamma", q, form),
                    script_clause(field, "unknown", q, form),  # df 10 = 1% of 1000: still scripted
                ]
            }
        }
        boosted = rq(query, BOOST, resolved)["bool"]["should"]
        for mode_clause, boost_clause in zip(out["bool"]["should"], boosted, strict=True):
            assert applied_weight(mode_clause) == close(applied_weight(boost_clause))
        # 1.0 scripts every term (the behaviour before the hybrid); 0.0 scripts only df 0
        every = rq(query, hybrid(1.0), resolved)["bool"]["should"]
        assert [next(iter(c)) for c in every] == ["script_score"] * 6
        assert every == rq(query, SCRIPT, resolved)["bool"]["should"]
        assert all("term" in c for c in rq(query, hybrid(0.0), resolved)["bool"]["should"])
    absent = {
        ("code", "zzz json"): ResolvedText(("zzz", "json"), (0, 1), {"zzz": 0, "json": 40}, N_DOCS)
    }
    assert [
        next(iter(c))
        for c in rq({"match": {"code": "zzz json"}}, hybrid(0.0), absent)["bool"]["should"]
    ] == ["script_score", "term"]


def test_script_mode_boosted_lone_term_carries_match_boost_and_name_like_boost_mode() -> None:
    resolved = {("code", w): resolved_for("code", w) for w in ("file", "alpha")}
    query = {"match": {"code": {"query": "file", "boost": 2.5, "_name": "x"}}}
    assert (
        rq(query, hybrid(0.01), resolved)
        == rq(query, BOOST, resolved)
        == {"term": {"code": {"value": "file", "boost": close(weight("file") * 2.5), "_name": "x"}}}
    )
    rare = {"match": {"code": {"query": "alpha", "boost": 2.5, "_name": "x"}}}
    expected = script_clause("code", "alpha")
    expected["script_score"].update({"boost": 2.5, "_name": "x"})
    assert rq(rare, hybrid(0.01), resolved) == expected


@pytest.mark.parametrize("fraction", [-0.1, 1.5, math.nan])
def test_rewrite_settings_rejects_script_df_fraction_outside_0_1(fraction: float) -> None:
    with pytest.raises(ValueError, match="script_df_fraction"):
        hybrid(fraction)


# ----------------------------------------------------------------------------- match pass-through

UNSUPPORTED = {
    "fuzziness": "AUTO",
    "analyzer": "standard",
    "cutoff_frequency": 0.01,
    "zero_terms_query": "all",
    "prefix_length": 1,
    "max_expansions": 10,
    "fuzzy_transpositions": False,
    "fuzzy_rewrite": "constant_score",
    "lenient": True,
    "some_future_option": 1,
}


@pytest.mark.parametrize("option", sorted(UNSUPPORTED))
def test_match_with_unsupported_option_passes_through(option: str) -> None:
    clause = {"match": {"code": {"query": "parse json", option: UNSUPPORTED[option]}}}
    assert rq(clause) == clause


@pytest.mark.parametrize(
    "clause",
    [
        {"match": {"path": "parse json"}},  # uncalibrated field
        {"match": {"code": "not resolved"}},  # no resolved entry
        {"match": {"code": {"query": 42}}},  # non-string query
        {"match": {"code": 42}},
        {"match": {"code": {"operator": "and"}}},  # no query at all
        {"match": {"code": {"query": "json", "operator": "xor"}}},
        {"match": {"code": {"query": "json", "boost": "2"}}},
        {"match": {"code": {"query": "json", "boost": -1.0}}},
        {"match": {"code": "json", "title": "json"}},  # malformed: two fields
        {"match": "json"},
    ],
)
def test_match_not_rewritable_passes_through(clause: dict[str, Any]) -> None:
    assert rq(clause) == clause


def test_match_with_zero_terms_passes_through() -> None:
    resolved = {("code", "the"): ResolvedText((), (), {}, N_DOCS)}
    clause = {"match": {"code": "the"}}
    assert rq(clause, resolved=resolved) == clause


def test_match_with_synonyms_at_one_position_passes_through() -> None:
    resolved = {("code", "json"): ResolvedText(("json", "jsn"), (0, 0), {"json": 1, "jsn": 1}, 9)}
    clause = {"match": {"code": "json"}}
    assert rq(clause, resolved=resolved) == clause


def test_position_gaps_are_fine() -> None:
    resolved = {("code", "a b"): ResolvedText(("a", "b"), (0, 2), {"a": 1, "b": 1}, 9)}
    assert "bool" in rq({"match": {"code": "a b"}}, resolved=resolved)


# ----------------------------------------------------------------------------- multi_match


def test_multi_match_best_fields_expands_to_dis_max_with_field_boosts() -> None:
    clause = {"multi_match": {"query": "json", "fields": ["code", "title^2"]}}
    assert rq(clause) == {
        "dis_max": {
            "queries": [
                term("code", "json", weight("json")),
                term("title", "json", weight("json", 0.8, "rsj") * 2.0),
            ],
            "tie_breaker": 0.0,
        }
    }


def test_multi_match_most_fields_uses_tie_breaker_one_and_keeps_options_per_field() -> None:
    spec = {
        "query": "parse json",
        "fields": ["code^1.5", "path"],
        "type": "most_fields",
        "operator": "and",
        "minimum_should_match": "1",
        "boost": 4.0,
        "_name": "mm",
    }
    out = rq({"multi_match": spec})
    code_clause = {
        "bool": {
            "must": [term("code", "parse", weight("parse")), term("code", "json", weight("json"))],
            "minimum_should_match": "1",  # as the engine applies it to each field's match
            "boost": 1.5,
        }
    }
    native = {
        "match": {"path": {"query": "parse json", "operator": "and", "minimum_should_match": "1"}}
    }
    assert out == {
        "dis_max": {
            "queries": [code_clause, native],
            "tie_breaker": 1.0,
            "boost": 4.0,
            "_name": "mm",
        }
    }


def test_multi_match_uncalibrated_field_keeps_native_match_with_field_boost() -> None:
    out = rq({"multi_match": {"query": "parse json", "fields": ["path^3", "code"]}})
    assert out["dis_max"]["queries"][0] == {
        "match": {"path": {"query": "parse json", "boost": 3.0}}
    }
    assert "minimum_should_match" not in out["dis_max"]["queries"][1]["bool"]  # default: 1


def test_multi_match_explicit_tie_breaker_is_kept() -> None:
    clause = {"multi_match": {"query": "json", "fields": ["code"], "tie_breaker": 0.3}}
    assert rq(clause)["dis_max"]["tie_breaker"] == 0.3


def test_multi_match_fields_as_single_string() -> None:
    out = rq({"multi_match": {"query": "json", "fields": "code"}})
    assert out == {
        "dis_max": {"queries": [term("code", "json", weight("json"))], "tie_breaker": 0.0}
    }


def test_multi_match_unresolvable_calibrated_field_falls_back_to_native_match() -> None:
    resolved = {("code", "json"): RESOLVED[("code", "json")]}
    out = rq({"multi_match": {"query": "json", "fields": ["code", "title"]}}, resolved=resolved)
    assert out["dis_max"]["queries"][1] == {"match": {"title": {"query": "json"}}}


@pytest.mark.parametrize(
    "spec",
    [
        {"query": "json", "fields": ["code", "tit*"]},
        {"query": "json", "fields": ["*"]},
        {"query": "json"},
        {"query": "json", "fields": []},
        {"query": "json", "fields": ["code", "code^2"]},
        {"query": "json", "fields": ["code^x"]},
        {"query": "json", "fields": ["path", "body"]},
        {"query": "json", "fields": ["code"], "type": "cross_fields"},
        {"query": "json", "fields": ["code"], "type": "phrase"},
        {"query": "json", "fields": ["code"], "type": "phrase_prefix"},
        {"query": "json", "fields": ["code"], "type": "bool_prefix"},
        {"query": "json", "fields": ["code"], "type": "nonsense"},
        {"query": "json", "fields": ["code"], "fuzziness": 1},
        {"query": "json", "fields": ["code"], "slop": 1},
        {"query": "json", "fields": ["code"], "analyzer": "x"},
        {"query": "json", "fields": ["code"], "lenient": True},
        {"query": 3, "fields": ["code"]},
    ],
)
def test_multi_match_not_rewritable_passes_through(spec: dict[str, Any]) -> None:
    clause = {"multi_match": spec}
    assert rq(clause) == clause


# ----------------------------------------------------------------------------- recursion


def test_recurses_into_scoring_children_only() -> None:
    match = {"match": {"code": "json"}}
    rewritten = term("code", "json", weight("json"))
    query = {
        "function_score": {
            "query": {
                "bool": {
                    "must": match,
                    "should": [match, {"dis_max": {"queries": [match], "tie_breaker": 0.1}}],
                    "filter": [match],
                    "must_not": match,
                    "minimum_should_match": 1,
                }
            },
            "functions": [{"filter": match, "weight": 2}],
        }
    }
    out = rq(query)
    inner = out["function_score"]["query"]["bool"]
    assert inner["must"] == rewritten
    assert inner["should"] == [rewritten, {"dis_max": {"queries": [rewritten], "tie_breaker": 0.1}}]
    assert inner["filter"] == [match]
    assert inner["must_not"] == match
    assert inner["minimum_should_match"] == 1
    assert out["function_score"]["functions"] == [{"filter": match, "weight": 2}]


@pytest.mark.parametrize(
    "query",
    [
        {"constant_score": {"filter": {"match": {"code": "json"}}}},
        {"nested": {"path": "x", "query": {"match": {"code": "json"}}}},
        {"match_phrase": {"code": "parse json"}},
        {"term": {"code": "json"}},
        {"bool": {"filter": {"match": {"code": "json"}}}},
    ],
)
def test_non_scoring_and_unknown_clauses_are_untouched(query: dict[str, Any]) -> None:
    assert rq(query) == query


def test_boosting_rewrites_positive_and_leaves_negative_a_plain_match_test() -> None:
    """boosting scores positive x negative_boost when negative matches: only positive scores."""
    negative = {"match": {"code": "json"}}
    query = {
        "boosting": {
            "positive": {"match": {"code": "parse json"}},
            "negative": negative,
            "negative_boost": 0.2,
        }
    }
    out = rq(query)["boosting"]
    assert out["negative"] == negative and out["negative_boost"] == 0.2
    assert out["positive"] == rq({"match": {"code": "parse json"}})
    assert out["positive"] != {"match": {"code": "parse json"}}


def test_body_keys_other_than_query_are_identical_and_input_not_mutated() -> None:
    body = {
        "query": {"bool": {"should": [{"match": {"code": "parse json"}}]}},
        "aggs": {"langs": {"terms": {"field": "lang"}}},
        "sort": ["_score", {"date": "desc"}],
        "highlight": {"fields": {"code": {}}},
        "from": 10,
        "size": 5,
        "search_after": [1.5, "x"],
        "_source": ["path"],
        "post_filter": {"match": {"code": "json"}},
        "rescore": {"query": {"rescore_query": {"match": {"code": "json"}}}},
        "knn": {"field": "v", "query_vector": [0.1], "k": 3, "num_candidates": 9},
    }
    before = copy.deepcopy(body)
    out = rewrite_body(body, RESOLVED, BOOST)
    assert body == before
    assert set(out) == set(body)
    for key in body:
        if key != "query":
            assert out[key] == body[key]
    assert out["query"] != body["query"]
    # The result shares nothing with the input: mutating it leaves the input alone.
    out["aggs"]["langs"]["terms"]["field"] = "changed"
    out["sort"].append("x")
    out["query"]["bool"]["should"].clear()
    assert body == before


def test_body_without_query_is_a_copy() -> None:
    body = {"size": 0, "aggs": {"a": {"terms": {"field": "f"}}}}
    out = rewrite_body(body, RESOLVED, BOOST)
    assert out == body and out is not body and out["aggs"] is not body["aggs"]


def test_rewrite_query_does_not_mutate_or_alias_input() -> None:
    query = {"bool": {"must": [{"term": {"path": "x"}}, {"match": {"code": "json"}}]}}
    before = copy.deepcopy(query)
    out = rq(query)
    assert query == before
    assert out["bool"]["must"][0] is not query["bool"]["must"][0]


# ----------------------------------------------------------------------------- collect_body_texts


def test_collect_texts_unique_first_seen_order_and_scoring_only() -> None:
    body = {
        "query": {
            "bool": {
                "should": [
                    {"match": {"title": "b"}},
                    {"match": {"code": {"query": "a", "operator": "and"}}},
                    {"match": {"title": "b"}},
                    {"match": {"path": "c"}},
                    {"match": {"code": {"query": "z", "fuzziness": 1}}},
                    {"multi_match": {"query": "m", "fields": ["path", "code^2", "title"]}},
                    {"multi_match": {"query": "x", "fields": ["code"], "type": "cross_fields"}},
                ],
                "filter": {"match": {"code": "f"}},
                "must": {"dis_max": {"queries": [{"match": {"code": "a"}}]}},
            }
        },
        "post_filter": {"match": {"code": "p"}},
    }
    assert collect_body_texts(body, CAL) == [
        ("code", "a"),
        ("title", "b"),
        ("code", "m"),
        ("title", "m"),
    ]


def test_collect_texts_without_query_or_fields() -> None:
    assert collect_body_texts({"size": 3}, CAL) == []
    assert collect_body_texts({"query": {"match": {"code": "a"}}}, []) == []
    assert collect_query_texts({"match": {"code": "a"}}, {"code"}) == [("code", "a")]


# ----------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    "args",
    [
        (("a",), (0, 1), {"a": 1}, 5),
        (("a",), (0,), {}, 5),
        (("a",), (0,), {"a": 6}, 5),
        (("a",), (0,), {"a": -1}, 5),
        (("a",), (0,), {"a": 1.5}, 5),
        (("a",), (0,), {"a": 1}, -1),
    ],
)
def test_resolved_text_rejects_inconsistent_statistics(args: tuple[Any, ...]) -> None:
    with pytest.raises(ValueError):
        ResolvedText(*args)


def test_resolved_text_accepts_numpy_integers() -> None:
    res = ResolvedText(("a",), (0,), {"a": np.int64(2)}, np.int64(5))  # type: ignore[dict-item, arg-type]
    out = rewrite_query({"match": {"code": "a"}}, {("code", "a"): res}, SCRIPT)
    json.dumps(out)


@pytest.mark.parametrize("q", [-0.1, 2.5, float("nan"), float("inf")])
def test_field_calibration_rejects_bad_q(q: float) -> None:
    with pytest.raises(ValueError):
        FieldCalibration(q)


def test_field_calibration_rejects_unknown_form_and_normalises_q() -> None:
    with pytest.raises(ValueError):
        FieldCalibration(0.5, "bm15")
    assert type(FieldCalibration(1).q) is float


def test_rewrite_settings_rejects_bad_mode_and_script_id() -> None:
    with pytest.raises(ValueError):
        RewriteSettings(CAL, mode="painless")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        RewriteSettings(CAL, script_id="")


# ============================================================================= properties

CALIBRATED = ("code", "title")
UNCALIBRATED = ("path", "body")
ALL_FIELDS = CALIBRATED + UNCALIBRATED
# Texts the analyzer resolves normally, one with synonyms, one with no terms, one not resolved.
POOL = ["parse json", "json", "read read file", "alpha beta gamma", "json parse json"]
SYNONYM_TEXT, EMPTY_TEXT, MISSING_TEXT = "syn", "the", "missing"
TEXT_POOL = [*POOL, SYNONYM_TEXT, EMPTY_TEXT, MISSING_TEXT]


def make_resolved() -> dict[tuple[str, str], ResolvedText]:
    resolved = {(f, t): resolved_for(f, t) for f in CALIBRATED for t in POOL}
    for f in CALIBRATED:
        resolved[(f, SYNONYM_TEXT)] = ResolvedText(
            ("syn", "alias"), (0, 0), {"syn": 1, "alias": 2}, 9
        )
        resolved[(f, EMPTY_TEXT)] = ResolvedText((), (), {}, N_DOCS)
    return resolved


PROP_RESOLVED = make_resolved()
SAFE_OPTIONS = {"operator", "minimum_should_match", "boost", "_name"}

texts = st.sampled_from(TEXT_POOL)
msms = st.one_of(st.integers(-3, 4), st.sampled_from(["1", "2", "-1", "50%", "75%", "-25%"]))
boosts = st.sampled_from([0.5, 1, 1.0, 2.0, 3])


@st.composite
def match_options(draw: st.DrawFn, allow_unsupported: bool = True) -> dict[str, Any]:
    opts: dict[str, Any] = {}
    if draw(st.booleans()):
        opts["operator"] = draw(st.sampled_from(["or", "and", "OR", "AND"]))
    if draw(st.booleans()):
        opts["minimum_should_match"] = draw(msms)
    if draw(st.booleans()):
        opts["boost"] = draw(boosts)
    if draw(st.booleans()):
        opts["_name"] = draw(st.sampled_from(["a", "b"]))
    if allow_unsupported and draw(st.integers(0, 4)) == 0:
        key = draw(st.sampled_from(sorted(UNSUPPORTED)))
        opts[key] = UNSUPPORTED[key]
    return opts


@st.composite
def match_clause(
    draw: st.DrawFn, allow_unsupported: bool = True, text_pool: Strategy[str] = texts
) -> dict[str, Any]:
    field = draw(st.sampled_from(ALL_FIELDS))
    text = draw(text_pool)
    if draw(st.booleans()):
        return {"match": {field: text}}
    return {"match": {field: {"query": text, **draw(match_options(allow_unsupported))}}}


@st.composite
def multi_match_clause(
    draw: st.DrawFn, allow_unsupported: bool = True, text_pool: Strategy[str] = texts
) -> dict[str, Any]:
    names = draw(st.lists(st.sampled_from(ALL_FIELDS), min_size=1, max_size=4, unique=True))
    fields = [n if draw(st.booleans()) else f"{n}^{draw(st.sampled_from([2, 0.5]))}" for n in names]
    spec = {"query": draw(text_pool), "fields": fields, **draw(match_options(allow_unsupported))}
    kinds = ["best_fields", "most_fields"] + (
        ["cross_fields", "phrase"] if allow_unsupported else []
    )
    if draw(st.booleans()):
        spec["type"] = draw(st.sampled_from(kinds))
    if draw(st.booleans()):
        spec["tie_breaker"] = draw(st.sampled_from([0.0, 0.3, 1.0]))
    return {"multi_match": spec}


other_leaves = st.sampled_from(
    [
        {"term": {"code": "json"}},
        {"term": {"path": {"value": "src", "boost": 2.0}}},
        {"range": {"size": {"gte": 3}}},
        {"match_all": {}},
        {"match_phrase": {"code": "parse json"}},
        {"constant_score": {"filter": {"match": {"code": "json"}}, "boost": 2}},
        {"exists": {"field": "title"}},
    ]
)


def one_or_list(children: Strategy[Any]) -> Strategy[Any]:
    return st.one_of(children, st.lists(children, min_size=1, max_size=3))


def compound(children: Strategy[Any]) -> Strategy[dict[str, Any]]:
    bool_spec = st.fixed_dictionaries(
        {},
        optional={
            "must": one_or_list(children),
            "should": one_or_list(children),
            "filter": one_or_list(children),
            "must_not": one_or_list(children),
            "minimum_should_match": st.sampled_from([1, "1"]),
            "boost": boosts,
        },
    )
    return st.one_of(
        bool_spec.map(lambda spec: {"bool": spec}),
        st.lists(children, min_size=1, max_size=3).map(
            lambda qs: {"dis_max": {"queries": qs, "tie_breaker": 0.2}}
        ),
        children.map(lambda q: {"function_score": {"query": q, "boost_mode": "sum"}}),
    )


leaves = st.one_of(match_clause(), multi_match_clause(), other_leaves)
queries = st.recursive(leaves, compound, max_leaves=8)
bodies = st.fixed_dictionaries(
    {"query": queries},
    optional={
        "aggs": st.just({"by_lang": {"terms": {"field": "lang"}}}),
        "sort": st.just(["_score", {"path": "asc"}]),
        "size": st.integers(0, 50),
        "post_filter": match_clause(),
        "highlight": st.just({"fields": {"code": {}}}),
    },
)
PROP_SETTINGS_CAL = {"code": FieldCalibration(0.3), "title": FieldCalibration(0.7, "rsj")}


def prop_settings(mode: str) -> RewriteSettings:
    return RewriteSettings(PROP_SETTINGS_CAL, mode=mode)  # type: ignore[arg-type]


class RecordingMapping(Mapping[tuple[str, str], ResolvedText]):
    """A read-only mapping that remembers which keys were asked for."""

    def __init__(self, data: Mapping[tuple[str, str], ResolvedText]) -> None:
        self.data = data
        self.asked: set[tuple[str, str]] = set()

    def __getitem__(self, key: tuple[str, str]) -> ResolvedText:
        self.asked.add(key)
        return self.data[key]

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)


def match_is_rewritable(inner: dict[str, Any]) -> bool:
    """Independent oracle for a generated match clause."""
    ((field, spec),) = inner.items()
    text = spec if isinstance(spec, str) else spec["query"]
    if isinstance(spec, dict) and not set(spec) - {"query"} <= SAFE_OPTIONS:
        return False
    res = PROP_RESOLVED.get((field, text))
    return field in CALIBRATED and res is not None and res.rewritable


def count_terms(node: Any) -> int:
    if isinstance(node, dict):
        return int("term" in node) + sum(count_terms(v) for v in node.values())
    if isinstance(node, list):
        return sum(count_terms(v) for v in node)
    return 0


def check_parallel(original: Any, out: Any) -> None:
    """Walk input and output together; check (c) unchanged parts and (e) term clause counts."""
    ((kind, inner),) = original.items()
    if kind == "match":
        if match_is_rewritable(inner):
            ((field, spec),) = inner.items()
            text = spec if isinstance(spec, str) else spec["query"]
            assert count_terms(out) == len(PROP_RESOLVED[(field, text)].terms)
        else:
            assert out == original
        return
    if kind == "multi_match":
        names = {f.split("^")[0] for f in inner["fields"]}
        if not names & set(CALIBRATED):
            assert out == original
        return
    if kind not in ("bool", "dis_max", "function_score"):
        assert out == original
        return
    ((out_kind, out_inner),) = out.items()
    assert out_kind == kind and set(out_inner) == set(inner)
    for key, value in inner.items():
        if key in ("must", "should", "queries", "query"):
            if isinstance(value, list):
                assert isinstance(out_inner[key], list) and len(out_inner[key]) == len(value)
                for a, b in zip(value, out_inner[key], strict=True):
                    check_parallel(a, b)
            else:
                check_parallel(value, out_inner[key])
        else:
            assert out_inner[key] == value  # filter, must_not, msm, boost, ...


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(body=bodies, mode=st.sampled_from(["boost", "script"]))
def test_property_structure(body: dict[str, Any], mode: str) -> None:
    s = prop_settings(mode)
    before = copy.deepcopy(body)
    out = rewrite_body(body, PROP_RESOLVED, s)
    assert body == before  # input untouched
    assert set(out) == set(body)
    for key in body:  # (a)
        if key != "query":
            assert out[key] == body[key]
    json.dumps(out, allow_nan=False)  # (b)
    check_parallel(body["query"], out["query"])  # (c), (e)
    # (d): nothing rewritable -> identical
    assert rewrite_body(body, PROP_RESOLVED, RewriteSettings({}, mode=mode)) == body  # type: ignore[arg-type]
    if not any(
        PROP_RESOLVED.get(p, resolved_for("", "")).rewritable
        for p in collect_body_texts(body, PROP_SETTINGS_CAL)
    ):
        assert out == body
    # every pair the rewrite looked up was announced by collect_body_texts
    recorder = RecordingMapping(PROP_RESOLVED)
    rewrite_body(body, recorder, s)
    assert recorder.asked <= set(collect_body_texts(body, PROP_SETTINGS_CAL))


# ----------------------------------------------------------------------------- mini evaluator
# Scores a query over a few documents the way Lucene does (BM25 with Lucene's idf, tf part
# without the constant (k1+1)); "original" mode uses q-log idf for calibrated fields.

Doc = dict[str, list[str]]
Score = float | None

DOC_TOKENS = ["parse", "json", "read", "file", "alpha", "beta", "gamma", "zeta"]
EVAL_POOL = ["parse json", "json", "read read file", "alpha beta gamma", "json parse json", "zeta"]


def field_stats(docs: list[Doc], field: str) -> tuple[int, float]:
    lengths = [len(d.get(field, [])) for d in docs]
    with_field = [n for n in lengths if n]
    return len(with_field), (sum(with_field) / len(with_field) if with_field else 1.0)


def calc_msm(optional: int, spec: Any) -> int:
    """Lucene/ES calculateMinShouldMatch for integers and percentages."""
    spec = str(spec).strip()
    calc = int(optional * int(spec[:-1]) / 100) if spec.endswith("%") else int(spec)
    result = optional + calc if calc < 0 else calc
    return min(optional, max(result, 0))


class Evaluator:
    """Match set and score of a clause for one document (None = no match)."""

    def __init__(self, docs: list[Doc], s: RewriteSettings, qlog_idf: bool) -> None:
        self.docs, self.s, self.qlog_idf = docs, s, qlog_idf

    def term_score(
        self, doc: Doc, field: str, value: str, boost: float = 1.0, from_match: bool = False
    ) -> Score:
        tokens = doc.get(field, [])
        tf = tokens.count(value)
        if tf == 0:
            return None
        n_with, avgdl = field_stats(self.docs, field)
        n = sum(value in d.get(field, []) for d in self.docs)
        cal = self.s.fields.get(field)
        # Only match analysis is q-log in the original; explicit term queries stay native.
        if from_match and self.qlog_idf and cal is not None:
            idf = float(qlog.idf(n, n_with, cal.q, cal.form))
        else:
            idf = float(qlog.idf(n, n_with))
        return boost * idf * float(qlog.bm25_tf_norm(tf, len(tokens), avgdl))

    def combine_bool(
        self, must: list[Score], should: list[Score], msm_spec: Any, boost: float
    ) -> Score:
        required = [s for s in must if s is not None]
        if len(required) < len(must):
            return None
        matched = [s for s in should if s is not None]
        need = 0 if msm_spec is None else calc_msm(len(should), msm_spec)
        # Without required clauses Lucene needs one SHOULD match whatever msm says.
        need = max(need, 0 if must else 1)
        if len(matched) < need:
            return None
        return boost * (sum(required) + sum(matched))

    def match(
        self, doc: Doc, field: str, text: str, opts: Mapping[str, Any], field_boost: float = 1.0
    ) -> Score:
        terms = text.lower().split()
        boost = float(opts.get("boost", 1.0)) * field_boost
        scores = [self.term_score(doc, field, t, from_match=True) for t in terms]
        if len(scores) == 1:
            return None if scores[0] is None else boost * scores[0]
        assert scores, "every evaluated text has terms"
        if str(opts.get("operator", "or")).lower() == "and":
            return self.combine_bool(scores, [], None, boost)
        return self.combine_bool([], scores, opts.get("minimum_should_match", 1), boost)

    def dis_max(self, scores: list[Score], tie_breaker: float, boost: float) -> Score:
        matched = [s for s in scores if s is not None]
        if not matched:
            return None
        top = max(matched)
        return boost * (top + tie_breaker * (sum(matched) - top))

    def score(self, doc: Doc, clause: Mapping[str, Any]) -> Score:
        ((kind, inner),) = clause.items()
        if kind == "match":
            ((field, spec),) = inner.items()
            spec = {"query": spec} if isinstance(spec, str) else spec
            return self.match(doc, field, spec["query"], spec)
        if kind == "multi_match":
            default_tb = 1.0 if inner.get("type") == "most_fields" else 0.0
            scores: list[Score] = []
            for entry in inner["fields"]:
                name, _, fb = entry.partition("^")
                opts = {k: v for k, v in inner.items() if k != "boost"}
                scores.append(self.match(doc, name, inner["query"], opts, float(fb or 1.0)))
            tb = inner.get("tie_breaker", default_tb)
            return self.dis_max(scores, tb, float(inner.get("boost", 1.0)))
        if kind == "term":
            ((field, spec),) = inner.items()
            return self.term_score(doc, field, spec["value"], float(spec.get("boost", 1.0)))
        if kind == "script_score":
            inner_score = self.score(doc, inner["query"])
            if inner_score is None:
                return None
            p = inner["script"]["params"]
            w = float(qlog.boost_weight(p["n"], p["N"], p["q"], p["form"]))
            return inner_score * w * float(inner.get("boost", 1.0))
        if kind == "dis_max":
            scores = [self.score(doc, q) for q in inner["queries"]]
            return self.dis_max(scores, inner.get("tie_breaker", 0.0), inner.get("boost", 1.0))
        if kind == "bool":

            def each(key: str) -> list[Score]:
                value = inner.get(key, [])
                return [self.score(doc, c) for c in (value if isinstance(value, list) else [value])]

            return self.combine_bool(
                each("must"),
                each("should"),
                inner.get("minimum_should_match"),
                inner.get("boost", 1.0),
            )
        raise AssertionError(kind)


eval_texts = st.sampled_from(EVAL_POOL)
eval_leaves = st.one_of(
    match_clause(allow_unsupported=False, text_pool=eval_texts),
    multi_match_clause(allow_unsupported=False, text_pool=eval_texts),
    st.builds(
        lambda f, v: {"term": {f: {"value": v}}},
        st.sampled_from(ALL_FIELDS),
        st.sampled_from(DOC_TOKENS),
    ),
)


def eval_compound(children: Strategy[Any]) -> Strategy[dict[str, Any]]:
    return st.one_of(
        st.fixed_dictionaries(
            {"should": st.lists(children, min_size=1, max_size=3)},
            optional={"must": st.lists(children, min_size=1, max_size=2), "boost": boosts},
        ).map(lambda spec: {"bool": spec}),
        st.lists(children, min_size=1, max_size=3).map(
            lambda qs: {"dis_max": {"queries": qs, "tie_breaker": 0.5}}
        ),
    )


eval_queries = st.recursive(eval_leaves, eval_compound, max_leaves=5)
documents = st.lists(
    st.fixed_dictionaries(
        {},
        optional={
            f: st.lists(st.sampled_from(DOC_TOKENS), min_size=1, max_size=6) for f in ALL_FIELDS
        },
    ),
    min_size=1,
    max_size=6,
)


def resolve_from_docs(
    docs: list[Doc], pairs: list[tuple[str, str]]
) -> dict[tuple[str, str], ResolvedText]:
    out = {}
    for field, text in pairs:
        terms = tuple(text.lower().split())
        n_with, _ = field_stats(docs, field)
        df = {t: sum(t in d.get(field, []) for d in docs) for t in terms}
        out[(field, text)] = ResolvedText(terms, tuple(range(len(terms))), df, n_with)
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(query=eval_queries, docs=documents, mode=st.sampled_from(["boost", "script"]))
def test_property_rewrite_scores_like_qlog_bm25_with_same_matches(
    query: dict[str, Any], docs: list[Doc], mode: str
) -> None:
    s = prop_settings(mode)
    resolved = resolve_from_docs(docs, collect_query_texts(query, s.fields))
    rewritten = rewrite_query(query, resolved, s)
    original_eval = Evaluator(docs, s, qlog_idf=True)
    rewritten_eval = Evaluator(docs, s, qlog_idf=False)
    for doc in docs:
        expected = original_eval.score(doc, query)
        got = rewritten_eval.score(doc, rewritten)
        assert (expected is None) == (got is None), (query, rewritten, doc)
        if expected is not None:
            assert got is not None and math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-12)
