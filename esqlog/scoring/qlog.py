"""The mathematics of q-log BM25: Tsallis q-logarithm, IDF forms and q predictors.

Pure numpy, no cluster. Everything else in esqlog builds on these few functions, so
they are small, vectorised and numerically careful near q = 1, where the q-log must
become the natural log without a 0/0.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

ArrayLike = npt.ArrayLike
FloatArray = npt.NDArray[np.float64]

IdfForm = Literal["lucene", "rsj"]
IDF_FORMS: tuple[IdfForm, ...] = ("lucene", "rsj")


def ln_q(x: ArrayLike, q: float) -> FloatArray:
    """Tsallis q-logarithm ``(x^(1-q) - 1) / (1-q)``; the natural log at q = 1.

    Written as ``expm1((1-q) ln x) / (1-q)`` so that it is exact to rounding as q -> 1
    (no cancellation between x^(1-q) and 1). x must be positive.
    """
    arr = np.asarray(x, dtype=np.float64)
    if not np.isfinite(q):
        raise ValueError(f"q must be a finite number, got {q!r}")
    log_x = np.log(arr)
    one_minus_q = 1.0 - float(q)
    if one_minus_q == 0.0:
        return log_x
    # expm1(a)/1-q keeps full relative precision when a = (1-q) ln x is tiny.
    return np.expm1(one_minus_q * log_x) / one_minus_q


def rsj_odds(n: ArrayLike, N: ArrayLike) -> FloatArray:
    """Robertson-Sparck Jones odds (N - n + 0.5) / (n + 0.5) of a term with df n among N docs."""
    n_arr = np.asarray(n, dtype=np.float64)
    return (np.asarray(N, dtype=np.float64) - n_arr + 0.5) / (n_arr + 0.5)


def idf_lucene(n: ArrayLike, N: ArrayLike, q: float = 1.0) -> FloatArray:
    """Lucene's BM25 IDF with the outer log replaced by ln_q: ln_q(1 + odds).

    At q = 1 this is exactly the idf Elasticsearch and OpenSearch compute, so q = 1
    reproduces the engine's BM25; the argument is >= 1, so the value is never negative.
    """
    return ln_q(1.0 + rsj_odds(n, N), q)


def idf_rsj(n: ArrayLike, N: ArrayLike, q: float = 1.0) -> FloatArray:
    """The paper's form ln_q(odds), clipped at 0 so very common terms never subtract."""
    return np.maximum(ln_q(rsj_odds(n, N), q), 0.0)


IDF_FUNCTIONS: dict[str, Callable[[ArrayLike, ArrayLike, float], FloatArray]] = {
    "lucene": idf_lucene,
    "rsj": idf_rsj,
}


def idf(n: ArrayLike, N: ArrayLike, q: float = 1.0, form: str = "lucene") -> FloatArray:
    """Dispatch to an IDF form by name (``lucene`` or ``rsj``)."""
    try:
        fn = IDF_FUNCTIONS[form]
    except KeyError:
        raise ValueError(f"unknown IDF form {form!r}; use one of {sorted(IDF_FUNCTIONS)}") from None
    return fn(n, N, q)


def boost_weight(n: ArrayLike, N: ArrayLike, q: float, form: str = "lucene") -> FloatArray:
    """Per-term boost turning the engine's BM25 term score into the q-log one.

    The engine scores a term ``boost * idf * tfnorm``; multiplying by idf_q / idf swaps the
    IDF and leaves tfnorm alone. Where the engine's idf is 0 (impossible for Lucene's form
    with N >= n) the weight is 0.
    """
    native = idf_lucene(n, N, 1.0)
    target = idf(n, N, q, form)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(native > 0, target / np.where(native > 0, native, 1.0), 0.0)


def boost_weights(ns: Sequence[int], N: int, q: float, form: str = "lucene") -> list[float]:
    """:func:`boost_weight` for one query's few terms, as plain floats (math, not numpy).

    Why a twin: a query has about ten terms, and numpy's fixed cost per call (asarray, log,
    expm1, where: tens of microseconds) is a hundred times the arithmetic; the wrapper pays
    it on every search. Same formulas (expm1 form of ln_q, rsj clipped at 0, weight 0 where
    the engine's idf is 0); the tests check it against boost_weight to 1e-12.
    """
    if form not in IDF_FUNCTIONS:
        raise ValueError(f"unknown IDF form {form!r}; use one of {sorted(IDF_FUNCTIONS)}")
    one_minus_q = 1.0 - float(q)
    weights = []
    for n in ns:
        odds = (N - n + 0.5) / (n + 0.5)
        native = math.log(1.0 + odds)
        log_x = native if form == "lucene" else math.log(odds)
        target = log_x if one_minus_q == 0.0 else math.expm1(one_minus_q * log_x) / one_minus_q
        if form == "rsj":
            target = max(target, 0.0)
        weights.append(target / native if native > 0 else 0.0)
    return weights


def bm25_tf_norm(
    tf: ArrayLike, doc_len: ArrayLike, avgdl: float, k1: float = 1.2, b: float = 0.75
) -> FloatArray:
    """BM25's saturating term-frequency part tf / (tf + k1 (1 - b + b dl/avgdl)).

    Lucene >= 9 drops the (k1 + 1) numerator factor (Elasticsearch and OpenSearch 2 put it
    back); ranking and weight ratios do not depend on that constant.
    """
    tf_arr = np.asarray(tf, dtype=np.float64)
    dl = np.asarray(doc_len, dtype=np.float64)
    return tf_arr / (tf_arr + k1 * (1.0 - b + b * dl / avgdl))


def hapax_density(df: ArrayLike, ttf: ArrayLike, total_tokens: float | None = None) -> float:
    """h_tok: share of token occurrences whose term occurs in exactly one document.

    ``df`` and ``ttf`` are parallel per-term arrays (document frequency, total term
    frequency). ``total_tokens`` defaults to sum(ttf), the field's sum_ttf.
    """
    df_arr = np.asarray(df)
    ttf_arr = np.asarray(ttf, dtype=np.float64)
    total = float(ttf_arr.sum()) if total_tokens is None else float(total_tokens)
    if total <= 0:
        raise ValueError("hapax density needs at least one token")
    return float(ttf_arr[df_arr == 1].sum() / total)


@dataclass(frozen=True)
class CorpusFeatures:
    """What a label-free predictor may look at: statistics of the field, no relevance labels."""

    h_tok: float
    doc_count: int
    avgdl: float
    vocabulary: int | None = None


@dataclass(frozen=True)
class Predictor:
    """A named, versioned rule from corpus features to q (recorded in every calibration)."""

    name: str
    version: str
    description: str
    fn: Callable[[CorpusFeatures], float]

    def predict(self, features: CorpusFeatures) -> float:
        """q in [0, 1] for these features; a non-finite result is a bug in the inputs."""
        raw = float(self.fn(features))
        if not np.isfinite(raw):
            raise ValueError(f"predictor {self.name} gave q={raw} for {features}")
        return float(np.clip(raw, 0.0, 1.0))


def _paper_closed_form(f: CorpusFeatures) -> float:
    return 1.0 - 7.28 * f.h_tok


PAPER = Predictor(
    name="paper-linear",
    version="1",
    description="q = 1 - 7.28 h_tok (the paper's closed form), clipped to [0, 1]",
    fn=_paper_closed_form,
)

#: Fitted by scripts/bench/fit_predictor.py to the q sweeps of scripts/bench/quality.py on
#: real code corpora through OpenSearch (standard analyzer; Go, Java, Python, Ruby; 10K to
#: 175K documents; 1,000 doc-comment queries each) by minimising the NDCG@10 regret.
#: The paper's 7.28 slope is calibrated for much larger corpora: h_tok grows as a corpus
#: shrinks while the best q stays near 0.5-0.7, which a shallower line tracks. Leave-one-
#: corpus-out regret was <= 0.0083 on every experiment (docs/benchmarks/quality.md).
ESQLOG_LINEAR_INTERCEPT = 0.76
ESQLOG_LINEAR_SLOPE = 1.50


def _esqlog_linear(f: CorpusFeatures) -> float:
    return ESQLOG_LINEAR_INTERCEPT - ESQLOG_LINEAR_SLOPE * f.h_tok


ESQLOG_LINEAR = Predictor(
    name="esqlog-linear",
    version="1",
    description=f"q = {ESQLOG_LINEAR_INTERCEPT} - {ESQLOG_LINEAR_SLOPE} h_tok, fitted on real "
    "code corpora of 10K-175K documents (scripts/bench/fit_predictor.py), clipped to [0, 1]",
    fn=_esqlog_linear,
)

PREDICTORS: dict[str, Predictor] = {PAPER.name: PAPER, ESQLOG_LINEAR.name: ESQLOG_LINEAR}
DEFAULT_PREDICTOR = ESQLOG_LINEAR.name


def register_predictor(predictor: Predictor) -> Predictor:
    """Make a predictor selectable by name (calibrate --predictor NAME)."""
    PREDICTORS[predictor.name] = predictor
    return predictor


def get_predictor(name: str) -> Predictor:
    """Look a predictor up by name with an error that lists the choices."""
    try:
        return PREDICTORS[name]
    except KeyError:
        raise ValueError(
            f"unknown predictor {name!r}; choose one of {', '.join(sorted(PREDICTORS))}"
        ) from None


def validate_q(q: float) -> float:
    """Reject NaN, infinities and q outside [0, 2] (q > 1 compresses IDF; > 2 is meaningless)."""
    qf = float(q)
    if not np.isfinite(qf) or qf < 0.0 or qf > 2.0:
        raise ValueError(f"q must be a number between 0 and 2, got {q!r}")
    return qf
