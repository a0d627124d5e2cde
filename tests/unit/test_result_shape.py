"""One result shape: every estimate and fit has confidence_interval, to_dict, to_frame and an escaped HTML table."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import deniable as dn
from deniable._results import Result

TRICKY = "<b>&x</b>"  # a label that would inject markup if it were not escaped


def _grr() -> dn.Estimate:
    m = dn.GRR([TRICKY, "b", "c"], epsilon=1.0)
    return m.estimate(m.privatize_many([TRICKY] * 300 + ["b"] * 200 + ["c"] * 100, rng=1))


def _rappor() -> dn.RapporEstimate:
    m = dn.RAPPOR([TRICKY, "b", "c"], epsilon=4.0, num_cohorts=4)
    return m.estimate(m.privatize_many([TRICKY] * 300 + ["b"] * 200, rng=2))


def _mean() -> dn.MeanEstimate:
    m = dn.Laplace(0, 10, epsilon=1.0)
    return m.estimate(m.privatize_many(np.linspace(0, 10, 500), rng=3))


def _histogram() -> dn.HistogramEstimate:
    m = dn.SquareWave(0, 1, epsilon=2.0)
    est = m.estimate(m.privatize_many(np.linspace(0, 1, 400), rng=4))
    assert est.histogram is not None
    return est.histogram


def _prevalence() -> Any:
    return dn.survey.prevalence(np.array([1] * 60 + [0] * 40), dn.survey.Warner(p=0.7))


def _regression() -> Any:
    pd = pytest.importorskip("pandas")
    pytest.importorskip("statsmodels")
    d = dn.survey.design("FR", p=["1/6", "1/6"])
    rng = np.random.default_rng(5)
    age = rng.integers(18, 31, 1_000)
    used = rng.random(1_000) < 1 / (1 + np.exp(-(-4.2 + 0.15 * age)))
    return dn.survey.logit("used ~ age", pd.DataFrame({"used": d.privatize_many(used, rng=rng), "age": age}), d)


def _discovery() -> dn.Discovery:
    hh = dn.HeavyHitters(epsilon=6.0, max_length=4, top_k=8, rows=16, width=256, seed=bytes(32))
    values = [TRICKY[:4]] * 2000 + ["pear"] * 1500 + [f"t{i}" for i in range(500)]
    return hh.identify(hh.aggregate(hh.privatize_many(values, rng=3)))


def _joint() -> Any:
    j = dn.Joint([TRICKY, "no"], ["A", "B", "C"], epsilon=3.0)
    rng = np.random.default_rng(0)
    return j.estimate(j.privatize_many(rng.choice([TRICKY, "no"], 2_000), rng.choice(["A", "B", "C"], 2_000), rng=rng))


def _marginal() -> Any:
    return _joint().marginal(0)


# name -> (build, the label column, the columns of to_frame after it)
CASES: dict[str, tuple[Callable[[], Any], str | None, list[str]]] = {
    "Estimate": (_grr, "category", ["estimate", "std_error", "ci_low", "ci_high", "observed", "target"]),
    "RapporEstimate": (_rappor, "category", ["estimate", "std_error", "ci_low", "ci_high", "target"]),
    "MeanEstimate": (_mean, None, ["estimate", "std_error", "ci_low", "ci_high"]),
    "PrevalenceFit": (_prevalence, "parameter", ["parameter", "estimate", "std_error", "ci_low", "ci_high"]),
    "RRLogitResults": (_regression, "parameter",
                       ["parameter", "estimate", "std_error", "ci_low", "ci_high", "pvalue"]),
    "Discovery": (_discovery, "value", ["value", "count", "std_error", "ci_low", "ci_high", "truncated"]),
    "JointEstimate": (_joint, "cell", ["cell", "estimate", "std_error", "ci_low", "ci_high", "observed"]),
    "MarginalEstimate": (_marginal, "category", ["category", "estimate", "std_error", "ci_low", "ci_high"]),
}


@pytest.fixture(params=list(CASES), scope="module")
def case(request: pytest.FixtureRequest) -> tuple[str, Any]:
    build = CASES[request.param][0]
    return request.param, build()


def _pairs(ci: Any) -> Any:
    """``ci(level)``'s answer as a pair of arrays (a survey fit's is a dict by parameter)."""
    if isinstance(ci, dict):
        return np.array([v[0] for v in ci.values()]), np.array([v[1] for v in ci.values()])
    return ci


def test_confidence_interval_is_ci(case: tuple[str, Any]) -> None:
    name, result = case
    assert isinstance(getattr(result, "_results", result), Result)  # a statsmodels wrapper holds its results
    for level in (0.95, 0.8):
        ci = result.confidence_interval(confidence_level=level)
        assert isinstance(ci, dn.ConfidenceInterval)
        low, high = _pairs(result.ci(level))
        np.testing.assert_array_equal(ci.low, low)
        np.testing.assert_array_equal(ci.high, high)
        assert np.all(np.asarray(ci.low) <= np.asarray(ci.high))
    for method in result.ci_methods:
        ci = result.confidence_interval(0.9, method)
        np.testing.assert_array_equal(ci.low, _pairs(result.ci(0.9, method))[0])


def test_a_method_that_does_not_apply_is_refused_naming_those_that_do(case: tuple[str, Any]) -> None:
    name, result = case
    with pytest.raises(ValueError, match=r"^method must be .*'" + result.ci_methods[0] + "'.*; got 'nope'$"):
        result.confidence_interval(method="nope")
    with pytest.raises(ValueError, match=r"level must be in \(0, 1\)"):
        result.confidence_interval(confidence_level=1.5)


def test_to_dict_is_plain_json_with_the_numbers(case: tuple[str, Any]) -> None:
    name, result = case
    data = result.to_dict(confidence_level=0.9)
    assert json.loads(json.dumps(data, allow_nan=False)) == data
    assert data["confidence_level"] == 0.9 and data["method"] == result.ci_methods[0]
    ci = result.confidence_interval(0.9)
    low = [v if math.isfinite(v) else None for v in np.atleast_1d(np.asarray(ci.low, dtype=float)).tolist()]
    assert np.atleast_1d(data["ci_low"]).tolist() == low
    columns = CASES[name][2]
    for key in ("std_error", "ci_high", *(k for k in columns if k in ("estimate", "count"))):
        assert np.shape(data[key]) == np.shape(ci.low)  # each column aligned with the rows (or one number)


def test_to_frame_columns(case: tuple[str, Any]) -> None:
    pytest.importorskip("pandas")
    name, result = case
    frame = result.to_frame()
    assert list(frame.columns) == CASES[name][2]
    assert frame["ci_low"].tolist() == pytest.approx(np.atleast_1d(result.confidence_interval().low).tolist(),
                                                     nan_ok=True)


def test_html_escapes_every_cell(case: tuple[str, Any]) -> None:
    name, result = case
    html = result._repr_html_()
    assert "<b>&x" not in html
    if name == "RRLogitResults":  # a regression shows statsmodels' summary
        assert html == result.summary().as_html()
        return
    assert html.startswith("<div><table>")
    if name in ("Estimate", "RapporEstimate", "JointEstimate", "MarginalEstimate", "Discovery"):
        assert "&lt;b&gt;&amp;" in html


def test_rappor_refuses_binomial_intervals_instead_of_nan() -> None:
    """Defect 4 of issue 25: RAPPOR's ci(method='wilson' | 'clopper-pearson') returned NaN intervals."""
    est = _rappor()
    for method in ("wilson", "clopper-pearson"):
        with pytest.raises(ValueError, match=rf"^method must be 'normal' for a RAPPOR estimate .*; got '{method}'$"):
            est.ci(0.95, method=method)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="'normal'"):
            est.confidence_interval(method=method)
    low, high = est.ci(0.95)
    assert np.all(np.isfinite(low)) and np.all(np.isfinite(high))
    assert type(est.consistent("norm-sub")) is dn.RapporEstimate
    assert "observed" not in est.to_dict()


def test_histogram_has_no_interval_but_a_table() -> None:
    h = _histogram()
    with pytest.raises(ValueError, match=r"^no confidence interval applies to a reconstructed distribution"):
        h.confidence_interval()
    data = h.to_dict()
    assert data["method"] is None and data["reconstruction"] == h.method
    assert data["probability"] == pytest.approx(h.probabilities.tolist())
    assert len(data["bins"]) == len(h.probabilities) == len(data["low"])


def test_nan_becomes_none_and_intervals_unpack() -> None:
    m = dn.OUE(3, epsilon=1.0)
    empty = m.estimate_from(m.aggregate([]))
    data = empty.to_dict()
    assert data["n"] == 0 and data["estimate"] == [None] * 3 and data["ci_low"] == [None] * 3
    ci = dn.ConfidenceInterval(0.1, 0.4)
    low, high = ci
    assert (low, high) == (0.1, 0.4) and bool(ci.contains(0.2)) and not bool(ci.contains(0.5))
    from deniable._intervals import Interval, wilson_interval

    assert isinstance(wilson_interval(3, 10, 0.05), dn.ConfidenceInterval)
    assert issubclass(Interval, dn.ConfidenceInterval)
