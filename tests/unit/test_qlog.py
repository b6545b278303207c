"""Unit tests for esqlog.scoring.qlog: the q-logarithm, IDF forms, boosts, hapax density,
predictors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from esqlog.scoring import qlog
from esqlog.scoring.qlog import (
    DEFAULT_PREDICTOR,
    PAPER,
    PREDICTORS,
    CorpusFeatures,
    Predictor,
    bm25_tf_norm,
    boost_weight,
    get_predictor,
    hapax_density,
    idf,
    idf_lucene,
    idf_rsj,
    ln_q,
    register_predictor,
    rsj_odds,
    validate_q,
)

# Positive x over many orders of magnitude, q over the whole valid range [0, 2].
xs = st.floats(min_value=1e-6, max_value=1e6, allow_nan=False, allow_infinity=False)
qs = st.floats(min_value=0.0, max_value=2.0, allow_nan=False, allow_infinity=False)
# A corpus of N docs and a term with document frequency 1 <= n <= N.
corpus = st.integers(min_value=1, max_value=10_000_000).flatmap(
    lambda N: st.tuples(st.integers(min_value=1, max_value=N), st.just(N))
)


def direct_ln_q(x: float, q: float) -> float:
    """The textbook formula, fine away from q = 1."""
    return float((x ** (1.0 - q) - 1.0) / (1.0 - q))


def features(h: float) -> CorpusFeatures:
    return CorpusFeatures(h_tok=h, doc_count=1000, avgdl=50.0)


# --------------------------------------------------------------------------- ln_q


class TestLnQ:
    def test_natural_log_at_q_one(self) -> None:
        x = np.array([1e-8, 0.3, 1.0, 2.0, math.e, 10.0, 1e12])
        np.testing.assert_array_equal(ln_q(x, 1.0), np.log(x))

    def test_ln_q_of_one_is_zero_for_every_q(self) -> None:
        for q in (0.0, 0.25, 0.5, 1.0 - 1e-9, 1.0, 1.5, 2.0):
            assert ln_q(1.0, q) == 0.0

    @pytest.mark.parametrize("eps", [1e-13, 1e-12, 1e-11, 1e-9, 1e-6, 1e-4])
    @pytest.mark.parametrize("sign", [1.0, -1.0])
    def test_continuous_near_q_one(self, eps: float, sign: float) -> None:
        """Against the series ln x + (1-q)(ln x)^2/2 + ...: no 0/0 blow-up, full precision."""
        q = 1.0 + sign * eps
        x = np.array([1e-6, 0.5, 1.5, 2.0, 10.0, 1e3, 1e6])
        lx = np.log(x)
        a = 1.0 - q
        # ln_q x = sum_k a^(k-1) (ln x)^k / k!; six terms are exact to rounding here.
        series = sum(a ** (k - 1) * lx**k / math.factorial(k) for k in range(1, 7))
        got = ln_q(x, q)
        assert np.all(np.isfinite(got))
        # rtol 1e-10: the naive (x^(1-q) - 1)/(1-q) is off by ~1e-7 at eps = 1e-9 and by
        # ~1e-3 at 1e-13; ln_q's |1-q| < 1e-12 shortcut to ln x is off by < 1e-12 |ln x|.
        np.testing.assert_allclose(got, series, rtol=1e-10, atol=1e-15)

    def test_naive_formula_would_fail_the_continuity_check(self) -> None:
        """Guards the test above: it does distinguish a cancelling implementation."""
        q, x = 1.0 + 1e-13, 10.0
        naive = direct_ln_q(x, q)
        assert abs(naive - math.log(x)) / math.log(x) > 1e-6
        assert abs(float(ln_q(x, q)) - math.log(x)) / math.log(x) < 1e-12

    def test_no_jump_across_the_exact_log_branch(self) -> None:
        """Values just inside and just outside the |1-q| < 1e-12 shortcut agree."""
        x = np.array([0.01, 3.0, 1e5])
        inside = ln_q(x, 1.0 - 0.5e-12)
        outside = ln_q(x, 1.0 - 2e-12)
        np.testing.assert_allclose(inside, outside, rtol=1e-10)

    @given(x=xs, q=qs)
    def test_matches_direct_formula_away_from_one(self, x: float, q: float) -> None:
        assume(abs(1.0 - q) > 1e-3)
        expected = direct_ln_q(x, q)
        assert ln_q(x, q) == pytest.approx(expected, rel=1e-9, abs=1e-12)

    @given(x=xs, q=qs)
    def test_finite_for_positive_x(self, x: float, q: float) -> None:
        assert math.isfinite(float(ln_q(x, q)))

    @given(q=qs, x1=xs, x2=xs)
    def test_monotone_increasing_in_x(self, q: float, x1: float, x2: float) -> None:
        lo, hi = sorted((x1, x2))
        assume(hi > lo * (1 + 1e-9))
        assert float(ln_q(hi, q)) > float(ln_q(lo, q))

    @given(x=st.floats(min_value=1.0 + 1e-6, max_value=1e6), q1=qs, q2=qs)
    def test_decreasing_in_q_for_x_above_one(self, x: float, q1: float, q2: float) -> None:
        """q < 1 amplifies: for x > 1 a smaller q gives a larger q-log."""
        lo, hi = sorted((q1, q2))
        assume(hi - lo > 1e-6)
        assert float(ln_q(x, lo)) > float(ln_q(x, hi))

    def test_q_below_one_amplifies_against_ln(self) -> None:
        x = np.array([2.0, 10.0, 1000.0])
        assert np.all(ln_q(x, 0.5) > np.log(x))
        assert np.all(ln_q(x, 1.5) < np.log(x))

    def test_known_values(self) -> None:
        # q = 0: x - 1; q = 2: 1 - 1/x; q = 0.5: 2 (sqrt x - 1)
        assert ln_q(5.0, 0.0) == pytest.approx(4.0)
        assert ln_q(4.0, 2.0) == pytest.approx(0.75)
        assert ln_q(9.0, 0.5) == pytest.approx(4.0)

    def test_shape_preserved(self) -> None:
        x = np.arange(1.0, 13.0).reshape(3, 4)
        out = ln_q(x, 0.7)
        assert out.shape == (3, 4)
        assert out.dtype == np.float64
        np.testing.assert_allclose(out[1, 2], direct_ln_q(7.0, 0.7))

    def test_accepts_lists_and_ints(self) -> None:
        out = ln_q([1, 2, 3], 0.5)
        np.testing.assert_allclose(out, [direct_ln_q(v, 0.5) for v in (1, 2, 3)])

    def test_scalar_in_scalar_out(self) -> None:
        assert np.shape(ln_q(3.0, 0.4)) == ()

    @pytest.mark.parametrize("q", [math.nan, math.inf, -math.inf])
    def test_rejects_non_finite_q(self, q: float) -> None:
        with pytest.raises(ValueError, match="finite"):
            ln_q(2.0, q)


# --------------------------------------------------------------------------- IDF


class TestIdf:
    def test_rsj_odds(self) -> None:
        assert rsj_odds(1, 10) == pytest.approx(9.5 / 1.5)
        np.testing.assert_allclose(rsj_odds([1, 5], 10), [9.5 / 1.5, 5.5 / 5.5])

    def test_lucene_at_q_one_is_engine_idf_exactly(self) -> None:
        N = 1_000
        n = np.array([1, 2, 10, 500, 999, 1000])
        expected = np.log(1.0 + (N - n + 0.5) / (n + 0.5))
        np.testing.assert_array_equal(idf_lucene(n, N), expected)
        np.testing.assert_array_equal(idf_lucene(n, N, 1.0), expected)

    @given(nN=corpus, q=qs)
    def test_lucene_never_negative(self, nN: tuple[int, int], q: float) -> None:
        n, N = nN
        assert float(idf_lucene(n, N, q)) >= 0.0

    def test_lucene_positive_even_when_every_doc_has_the_term(self) -> None:
        assert float(idf_lucene(100, 100, 0.5)) > 0.0

    def test_rsj_clipped_at_zero(self) -> None:
        N = 100
        # n > N/2 makes the odds < 1, so the unclipped log would be negative.
        n = np.array([60, 90, 100])
        assert np.all(ln_q(rsj_odds(n, N), 1.0) < 0)
        np.testing.assert_array_equal(idf_rsj(n, N), np.zeros(3))
        np.testing.assert_array_equal(idf_rsj(n, N, 0.3), np.zeros(3))

    def test_rsj_unclipped_for_rare_terms(self) -> None:
        assert float(idf_rsj(1, 100)) == pytest.approx(math.log(99.5 / 1.5))
        assert float(idf_rsj(1, 100, 0.5)) == pytest.approx(direct_ln_q(99.5 / 1.5, 0.5))

    @given(nN=corpus, q=qs)
    def test_rsj_never_negative(self, nN: tuple[int, int], q: float) -> None:
        n, N = nN
        assert float(idf_rsj(n, N, q)) >= 0.0

    @pytest.mark.parametrize("form", ["lucene", "rsj"])
    @pytest.mark.parametrize("q", [0.0, 0.3, 0.7, 1.0, 1.5])
    def test_rarer_terms_get_larger_idf(self, form: str, q: float) -> None:
        N = 100_000
        n = np.array([1, 2, 5, 50, 1_000, 20_000])
        values = idf(n, N, q, form)
        assert np.all(np.diff(values) < 0)

    @pytest.mark.parametrize("form", ["lucene", "rsj"])
    def test_rare_common_ratio_grows_as_q_falls(self, form: str) -> None:
        N = 100_000
        rare, common = 3, 5_000
        grid = [1.5, 1.2, 1.0, 0.8, 0.5, 0.2, 0.0]
        ratios = [float(idf(rare, N, q, form) / idf(common, N, q, form)) for q in grid]
        assert np.all(np.diff(ratios) > 0)

    @settings(max_examples=200)
    @given(
        N=st.integers(min_value=100, max_value=10_000_000),
        data=st.data(),
        q1=qs,
        q2=qs,
    )
    def test_rare_common_ratio_property(
        self, N: int, data: st.DataObject, q1: float, q2: float
    ) -> None:
        common = data.draw(st.integers(min_value=2, max_value=N // 4))
        rare = data.draw(st.integers(min_value=1, max_value=common - 1))
        lo, hi = sorted((q1, q2))
        assume(hi - lo > 1e-3)
        ratio_lo = float(idf_lucene(rare, N, lo) / idf_lucene(common, N, lo))
        ratio_hi = float(idf_lucene(rare, N, hi) / idf_lucene(common, N, hi))
        assert ratio_lo >= ratio_hi * (1 - 1e-12)

    def test_vectorised_and_broadcast(self) -> None:
        n = np.array([[1], [10], [100]])  # (3, 1)
        N = np.array([1_000, 10_000])  # (2,)
        out = idf_lucene(n, N, 0.5)
        assert out.shape == (3, 2)
        assert out[1, 1] == pytest.approx(direct_ln_q(1 + (10_000 - 10 + 0.5) / 10.5, 0.5))

    def test_dispatch_by_name(self) -> None:
        assert float(idf(5, 100, 0.4, "lucene")) == float(idf_lucene(5, 100, 0.4))
        assert float(idf(5, 100, 0.4, "rsj")) == float(idf_rsj(5, 100, 0.4))
        assert float(idf(5, 100)) == float(idf_lucene(5, 100))

    def test_unknown_form_lists_choices(self) -> None:
        with pytest.raises(ValueError, match=r"unknown IDF form 'bm15'.*lucene.*rsj"):
            idf(1, 10, 1.0, "bm15")

    def test_forms_table_matches_functions(self) -> None:
        assert set(qlog.IDF_FORMS) == set(qlog.IDF_FUNCTIONS)


# --------------------------------------------------------------------------- boosts


class TestBoostWeight:
    @given(nN=corpus)
    def test_one_at_q_one(self, nN: tuple[int, int]) -> None:
        n, N = nN
        assert float(boost_weight(n, N, 1.0)) == pytest.approx(1.0, rel=1e-15)

    def test_one_at_q_one_vector(self) -> None:
        n = np.array([1, 3, 50, 999])
        np.testing.assert_array_equal(boost_weight(n, 1000, 1.0), np.ones(4))

    @given(nN=corpus, q=qs)
    def test_boosted_engine_idf_is_target_idf(self, nN: tuple[int, int], q: float) -> None:
        n, N = nN
        native = idf_lucene(n, N)
        for form in ("lucene", "rsj"):
            got = float(boost_weight(n, N, q, form) * native)
            assert got == pytest.approx(float(idf(n, N, q, form)), rel=1e-12, abs=1e-300)

    def test_amplifies_rare_terms_below_q_one(self) -> None:
        N = 100_000
        w = boost_weight(np.array([1, 100, 10_000]), N, 0.5)
        assert np.all(w > 1.0)
        assert np.all(np.diff(w) < 0)

    def test_rsj_weight_zero_for_very_common_terms(self) -> None:
        assert float(boost_weight(90, 100, 0.5, "rsj")) == 0.0

    def test_zero_where_native_idf_is_not_positive(self) -> None:
        # n > N + 0.5 (inconsistent stats) makes Lucene's idf negative: weight 0, no NaN.
        w = boost_weight(np.array([5, 300]), 100, 0.5)
        assert w[0] > 0
        assert w[1] == 0.0

    def test_no_warnings_or_nan(self) -> None:
        with np.errstate(all="raise"):
            w = boost_weight(np.array([1, 50, 100]), 100, 0.2)
        assert np.all(np.isfinite(w))


def test_bm25_tf_norm() -> None:
    # dl == avgdl: tf / (tf + k1)
    assert float(bm25_tf_norm(2, 100, 100.0)) == pytest.approx(2 / 3.2)
    # b = 0 ignores length
    assert float(bm25_tf_norm(1, 1000, 10.0, b=0.0)) == pytest.approx(1 / 2.2)
    # longer docs are penalised, saturates below 1
    out = bm25_tf_norm(np.array([1, 1, 1000]), np.array([10, 100, 10]), 10.0)
    assert out[0] > out[1]
    assert out[2] < 1.0


# --------------------------------------------------------------------------- hapax


class TestHapaxDensity:
    def test_hand_made(self) -> None:
        df = [1, 1, 2, 5]
        ttf = [1, 3, 2, 14]
        assert hapax_density(df, ttf) == pytest.approx(4 / 20)

    def test_explicit_total_tokens(self) -> None:
        assert hapax_density([1, 3], [2, 6], total_tokens=16) == pytest.approx(2 / 16)

    def test_no_hapax(self) -> None:
        assert hapax_density([2, 3], [4, 6]) == 0.0

    def test_all_hapax(self) -> None:
        assert hapax_density(np.array([1, 1]), np.array([7, 1])) == 1.0

    def test_returns_python_float(self) -> None:
        assert type(hapax_density([1, 2], [1, 2])) is float

    @pytest.mark.parametrize("total", [0, -5])
    def test_rejects_no_tokens(self, total: int) -> None:
        with pytest.raises(ValueError, match="at least one token"):
            hapax_density([1], [1], total_tokens=total)

    def test_rejects_empty(self) -> None:
        with pytest.raises(ValueError):
            hapax_density([], [])

    @given(st.lists(st.tuples(st.integers(1, 5), st.integers(1, 1000)), min_size=1, max_size=50))
    def test_in_unit_interval(self, pairs: list[tuple[int, int]]) -> None:
        df, ttf = zip(*pairs, strict=True)
        h = hapax_density(df, ttf)
        assert 0.0 <= h <= 1.0
        expected = sum(t for d, t in pairs if d == 1) / sum(t for _, t in pairs)
        assert h == pytest.approx(expected)


# --------------------------------------------------------------------------- predictors


class TestPredictors:
    @pytest.mark.parametrize("h", [0.0, 0.01, 0.05, 0.1, 0.137])
    def test_paper_closed_form(self, h: float) -> None:
        assert PAPER.predict(features(h)) == pytest.approx(1.0 - 7.28 * h)

    def test_paper_clips_at_zero(self) -> None:
        assert PAPER.predict(features(0.2)) == 0.0
        assert PAPER.predict(features(1.0)) == 0.0

    def test_paper_clips_at_one(self) -> None:
        assert PAPER.predict(features(-0.5)) == 1.0

    @given(h=st.floats(min_value=-10, max_value=10, allow_nan=False))
    def test_predict_in_unit_interval(self, h: float) -> None:
        q = PAPER.predict(features(h))
        assert 0.0 <= q <= 1.0
        assert type(q) is float

    @pytest.mark.parametrize(
        ("h", "q"),
        [(0.0, 0.76), (0.0347, 0.708), (0.0324, 0.711), (0.1, 0.61), (0.2, 0.46), (0.5, 0.01)],
    )
    def test_the_default_predictor_is_the_documented_line(self, h: float, q: float) -> None:
        """q = 0.76 - 1.50 h_tok (its description; README: h_tok 0.0347 gives q 0.708 and
        0.0324 gives 0.711), written out here so that a changed slope, sign or intercept
        fails instead of being read back from the constants it is made of."""
        default = get_predictor(DEFAULT_PREDICTOR)
        assert default.name == "esqlog-linear"
        assert default.predict(features(h)) == pytest.approx(q, abs=5e-4)
        assert "0.76 - 1.5 h_tok" in default.description

    @given(low=st.floats(0.0, 0.5), step=st.floats(1e-3, 0.3))
    def test_the_default_q_falls_as_hapax_density_rises(self, low: float, step: float) -> None:
        """More tokens of one-document terms mean rarer identifiers: q falls (strictly,
        until the clip at 0), amplifying the rare ones more."""
        default = get_predictor(DEFAULT_PREDICTOR)
        before, after = default.predict(features(low)), default.predict(features(low + step))
        assert after <= before
        if before > 0.0:
            assert after < before
            assert before - after == pytest.approx(min(1.5 * step, before), rel=1e-9)

    def test_predict_nan_feature_is_refused(self) -> None:
        with pytest.raises(ValueError, match="predictor"):
            PAPER.predict(features(math.nan))

    def test_custom_predictor_is_clipped(self) -> None:
        p = Predictor("const-3", "1", "always 3", lambda f: 3.0)
        assert p.predict(features(0.0)) == 1.0
        n = Predictor("const-neg", "1", "always -1", lambda f: -1.0)
        assert n.predict(features(0.0)) == 0.0

    def test_get_predictor(self) -> None:
        assert get_predictor("paper-linear") is PAPER
        assert PAPER.name in PREDICTORS

    def test_get_predictor_error_lists_names(self) -> None:
        with pytest.raises(ValueError, match=r"unknown predictor 'nope'.*paper-linear"):
            get_predictor("nope")

    def test_register_predictor(self) -> None:
        p = Predictor("test-half", "0", "q = 0.5", lambda f: 0.5)
        try:
            assert register_predictor(p) is p
            assert get_predictor("test-half").predict(features(0.3)) == 0.5
            with pytest.raises(ValueError, match=r"paper-linear, test-half"):
                get_predictor("missing")
        finally:
            PREDICTORS.pop("test-half", None)
        assert "test-half" not in PREDICTORS


# --------------------------------------------------------------------------- validate_q


class TestValidateQ:
    @pytest.mark.parametrize("q", [0, 0.0, 0.35, 1, 1.0, 1.7, 2.0])
    def test_accepts_valid(self, q: float) -> None:
        out = validate_q(q)
        assert out == float(q)
        assert type(out) is float

    def test_accepts_numpy_scalars(self) -> None:
        out = validate_q(np.float64(0.5))
        assert out == 0.5
        assert type(out) is float

    @pytest.mark.parametrize("q", [math.nan, math.inf, -math.inf, -0.01, -1.0, 2.0001, 3.0])
    def test_rejects_invalid(self, q: float) -> None:
        with pytest.raises(ValueError, match="between 0 and 2"):
            validate_q(q)


@settings(max_examples=500, deadline=None)
@given(
    data=st.data(),
    N=st.integers(min_value=1, max_value=50_000_000),
    q=st.floats(min_value=0.0, max_value=2.0),
    form=st.sampled_from(["lucene", "rsj"]),
)
def test_boost_weights_twin_equals_numpy_boost_weight(
    data: st.DataObject, N: int, q: float, form: str
) -> None:
    """The wrapper's per-search float path must give the numpy weights, to rounding."""
    ns = data.draw(st.lists(st.integers(min_value=0, max_value=N), min_size=0, max_size=40))
    fast = qlog.boost_weights(ns, N, q, form)
    slow = qlog.boost_weight(np.asarray(ns, dtype=np.float64), N, q, form)
    assert len(fast) == len(ns)
    for got, want in zip(fast, np.atleast_1d(slow), strict=True):
        assert math.isclose(got, float(want), rel_tol=1e-12, abs_tol=1e-15)


def test_boost_weights_rejects_unknown_form() -> None:
    with pytest.raises(ValueError, match="unknown IDF form"):
        qlog.boost_weights([1], 10, 0.5, "bm42")
