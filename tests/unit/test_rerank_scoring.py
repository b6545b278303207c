"""The two rerank corrections are one formula, tied to qlog.boost_weight (engine-free).

From the engine's per-term scores s = scale * idf * tfnorm the correction is
(boost_weight - 1) * s; from term vectors it is scale * (idf_q - idf) * tfnorm. For the same
hit both must agree, and both must turn the native score into boost_weight * s.
"""

from __future__ import annotations

import math

import pytest

from esqlog.rerank import (
    DocVector,
    ScoredText,
    named_score_corrections,
    score_corrections,
    term_names,
)
from esqlog.scoring.qlog import bm25_tf_norm, boost_weight, idf
from esqlog.statistics.terms import FieldStats, TextStats
from tests.support.lucene_bm25 import lucene_norm_length

N, SUM_TTF = 5000, 100_000
DF = {"read": 120, "file": 900, "readfile": 7}


def _text(q: float, form: str = "lucene", joins: bool = False) -> ScoredText:
    stats = TextStats(
        ("read", "file"),
        (0, 1),
        {"read": DF["read"], "file": DF["file"]},
        FieldStats(N, SUM_TTF, 0),
        {"readfile": DF["readfile"]},
    )
    return ScoredText(
        "body",
        stats,
        q,
        form,
        (("readfile", DF["readfile"]),) if joins else (),
        0.5 if joins else 0.0,
    )


@pytest.mark.parametrize(
    ("q", "form", "scale"),
    [(0.6, "lucene", 1.0), (0.8, "rsj", 2.2), (1.0, "lucene", 2.2), (0.45, "lucene", 1.0)],
)
@pytest.mark.parametrize("joins", [False, True])
@pytest.mark.parametrize("length", [37, 1000])
def test_both_corrections_are_boost_weight_minus_one_times_the_native_term_score(
    q: float, form: str, scale: float, joins: bool, length: int
) -> None:
    """The engine scores with its norms' length (1000 tokens read back as 984), and term
    vectors count 1000: both corrections must use the engine's."""
    text = _text(q, form, joins)
    tf = {"read": 2, "file": 1, "readfile": 1}
    avgdl = SUM_TTF / N
    engine_length = lucene_norm_length(length)
    hit = {"_index": "code", "_id": "a", "_score": 10.0}
    native = {
        t: scale
        * float(idf(DF[t], N, 1.0, "lucene"))
        * float(bm25_tf_norm(tf[t], engine_length, avgdl))
        for t in tf
    }
    names = term_names([text])
    scores = {names[("body", t)]: native[t] for t in tf if ("body", t) in names}
    from_scores = named_score_corrections([hit], {("code", "a"): scores}, [text])
    from_vectors = score_corrections(
        [hit], {("code", "a"): {"body": DocVector(tf, length)}}, [text], scale
    )
    expected = sum(
        (float(boost_weight(DF[t], N, q, form)) - 1.0) * native[t] for t in ("read", "file")
    )
    if joins:  # no native clause: the join adds w * boost_weight * s in full
        expected += 0.5 * float(boost_weight(DF["readfile"], N, q, form)) * native["readfile"]
    assert math.isclose(from_scores[0], expected, rel_tol=1e-9, abs_tol=1e-12)
    assert math.isclose(from_vectors[0], expected, rel_tol=1e-9, abs_tol=1e-12)
    if q == 1.0 and not joins:
        assert from_scores[0] == pytest.approx(0.0, abs=1e-12)
