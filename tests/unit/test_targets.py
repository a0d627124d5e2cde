"""The inference target, exactly: variance formulas, plug-ins, defaults and labels.

* ``"respondents"``: formula (A) of MECHANISMS.md, from the exact fractions p*, q*;
* ``"population"`` (the default): (A) + f(1-f)/n, which for a pure oracle is
  ``lambda (1 - lambda) / (n (p*-q*)^2)`` and for Warner the textbook
  ``pi (1 - pi) / n + p (1 - p) / (n (2p - 1)^2)``.

Every check is an identity (rtol 1e-9 for float rounding), for every
frequency oracle of the mechanism grid and for RAPPOR. Coverage under the
two sampling models is in tests/stat/test_target_coverage.py.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from mechanism_grid import CASES, Case, params

import deniable as dn
from deniable._estimate import SupportCounts, pure_variance
from deniable.mechanisms._rappor import RAPPOR


def _shares(k: int) -> np.ndarray:
    f = np.linspace(1, 2, k)
    return f / f.sum()


@params()
def test_respondents_variance_is_formula_a(case: Case) -> None:
    """``target="respondents"``: q*(1-q*)/(n gap^2) + f (1-p*-q*)/(n gap), from the exact fractions."""
    m = case.make()
    f = _shares(m.k)
    p, q = m.support_probabilities()
    want = [float((qq * (1 - qq) / (pp - qq) ** 2 + Fraction(fv) * (1 - pp - qq) / (pp - qq)) / 250)
            for pp, qq, fv in zip(p, q, f, strict=True)]
    np.testing.assert_allclose(m.variance(250, f, target="respondents"), want, rtol=1e-9)


@params()
def test_population_variance_adds_the_sampling_term(case: Case) -> None:
    """``target="population"`` (the default): (A) + f(1-f)/n = lambda(1-lambda)/(n gap^2)."""
    m = case.make()
    f = _shares(m.k)
    n = 250
    fixed = m.variance(n, f, target="respondents")
    population = m.variance(n, f, target="population")
    np.testing.assert_allclose(population, fixed + f * (1 - f) / n, rtol=1e-9)
    np.testing.assert_array_equal(m.variance(n, f), population)
    p, q = m.support_probabilities()
    lam = [qq + (pp - qq) * Fraction(fv) for pp, qq, fv in zip(p, q, f, strict=True)]
    want = [float(lv * (1 - lv) / (n * (pp - qq) ** 2)) for lv, pp, qq in zip(lam, p, q, strict=True)]
    np.testing.assert_allclose(population, want, rtol=1e-9)
    # the planning convention f -> 0 is the same for both targets
    np.testing.assert_array_equal(m.variance(n), m.variance(n, target="respondents"))


@pytest.mark.parametrize("prob", [0.55, 0.75, 0.9])
@pytest.mark.parametrize("pi", [0.0, 0.1, 0.5, 0.8])
def test_warner_textbook_variance(prob: float, pi: float) -> None:
    """Warner (1965): pi(1-pi)/n + p(1-p)/(n(2p-1)^2) = lambda(1-lambda)/(n(2p-1)^2)."""
    m = dn.BinaryRR(prob=prob)
    n = 1000
    lam = prob * pi + (1 - prob) * (1 - pi)
    got = m.variance(n, [1 - pi, pi])[1]
    assert got == pytest.approx(pi * (1 - pi) / n + prob * (1 - prob) / (n * (2 * prob - 1) ** 2), rel=1e-12)
    assert got == pytest.approx(lam * (1 - lam) / (n * (2 * prob - 1) ** 2), rel=1e-12)
    assert m.variance(n, [1 - pi, pi], "respondents")[1] == pytest.approx(
        prob * (1 - prob) / (n * (2 * prob - 1) ** 2), rel=1e-12)  # (A): no pi term for Warner


def test_forced_response_variance_for_both_targets() -> None:
    """Asymmetric forced response, P(yes|T) = 0.86, P(yes|F) = 0.56 (test_exact's numbers)."""
    m = dn.BinaryRR.forced_response(0.3, 0.8)
    yt, yf = 0.86, 0.56
    for pi in (0.0, 0.3, 1.0):
        fixed = (pi * yt * (1 - yt) + (1 - pi) * yf * (1 - yf)) / (yt - yf) ** 2
        lam = pi * yt + (1 - pi) * yf
        assert m.variance(1, [1 - pi, pi], "respondents")[1] == pytest.approx(fixed, rel=1e-12)
        assert m.variance(1, [1 - pi, pi])[1] == pytest.approx(lam * (1 - lam) / (yt - yf) ** 2, rel=1e-12)


@params([c for c in CASES if not c.heavy])
def test_standard_errors_plug_in_per_target(case: Case) -> None:
    """Population: lambda_hat(1-lambda_hat)/(n gap^2) at the observed share; respondents: (A) at
    clip(f_hat, 0, 1). The frequencies are the same for both targets."""
    m = case.make()
    p, q = m.support_rates()
    n = 997
    counts = np.round(n * (q + (p - q) * _shares(m.k)) + np.arange(m.k) % 3 - 1).astype(np.int64)
    counts = np.clip(counts, 0, n)
    stat = SupportCounts(m.fingerprint, counts, n)
    pop, fixed = m.estimate_from(stat), m.estimate_from(stat, target="respondents")
    assert pop.target == "population" and fixed.target == "respondents"
    np.testing.assert_array_equal(pop.frequencies, fixed.frequencies)
    lam = counts / n
    np.testing.assert_allclose(pop.std_errors**2, lam * (1 - lam) / (n * (p - q) ** 2), rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(fixed.std_errors**2, pure_variance(n, p, q, np.clip(fixed.frequencies, 0, 1),
                                                                  "respondents"), rtol=1e-12)


def test_rappor_population_adds_the_sampling_term() -> None:
    m = RAPPOR(list("abcde"), f=0.5, num_cohorts=4)
    f = _shares(5)
    np.testing.assert_allclose(m.variance(800, f), m.variance(800, f, "respondents") + f * (1 - f) / 800,
                               rtol=1e-12)
    reports = m.privatize_many(list("abcde") * 100, rng=3)
    pop, fixed = m.estimate(reports), m.estimate(reports, target="respondents")
    np.testing.assert_array_equal(pop.frequencies, fixed.frequencies)
    plug = np.clip(pop.frequencies, 0, 1)
    np.testing.assert_allclose(pop.std_errors**2, fixed.std_errors**2 + plug * (1 - plug) / 500, rtol=1e-9)
    assert (pop.target, fixed.target) == ("population", "respondents")


def test_target_travels_with_the_estimate() -> None:
    m = dn.GRR(["x", "y", "z"], epsilon=2.0)
    reports = m.privatize_many(["x"] * 50 + ["y"] * 30 + ["z"] * 20, rng=1)
    for target in ("population", "respondents"):
        est = m.estimate(reports, target=target)
        assert est.target == target
        assert est.consistent("norm-sub").target == target
        frame = est.to_frame()
        assert frame.attrs == {"target": target, "level": 0.95}
        assert set(frame["target"]) == {target}
        assert list(frame.columns) == ["estimate", "std_error", "ci_low", "ci_high", "observed", "target"]
        text = repr(est)
        assert f"target={target}" in text and "std error" in text and "95% interval" in text
        assert "±" not in text  # a standard error and an interval are labelled, never a bare ±
    words = {t: repr(m.estimate(reports, target=t)).splitlines()[1] for t in ("population", "respondents")}
    assert "population the respondents were sampled from" in words["population"]
    assert "fixed set of respondents" in words["respondents"]


def test_mean_estimate_target() -> None:
    """Numeric: the population's standard error is the sample one; the respondents' the formula's."""
    m = dn.Laplace(0, 10, epsilon=5.0)
    values = np.linspace(0, 10, 400)
    reports = m.privatize_many(values, rng=2)
    pop, fixed = m.estimate(reports), m.estimate(reports, target="respondents")
    assert pop.mean == fixed.mean and (pop.target, fixed.target) == ("population", "respondents")
    assert pop.std_error == pop.sample_std_error == fixed.sample_std_error
    assert fixed.std_error < fixed.sample_std_error  # the values' spread is left out
    assert pop.ci(0.95) == pytest.approx((pop.mean - 1.959964 * pop.std_error, pop.mean + 1.959964 * pop.std_error),
                                         rel=1e-6)
    assert "target=respondents" in repr(fixed) and "std error" in repr(fixed) and "±" not in repr(fixed)


def test_sample_size_per_target() -> None:
    """Warner, prob 0.75, margin 0.01 at 95%: worst case f = 1/2 gives z^2 (0.75 + 0.25)/m^2
    for the population and z^2 0.75/m^2 for the respondents."""
    m = dn.BinaryRR(prob=0.75)
    assert dn.sample_size(m, 0.01) == dn.sample_size(m, 0.01, target="population") == 38_415
    assert dn.sample_size(m, 0.01, target="respondents") == 28_811


def test_bad_target_names_the_argument() -> None:
    m = dn.GRR(3, epsilon=1.0)
    reports = m.privatize_many([0, 1, 2], rng=1)
    calls = [
        lambda: m.estimate(reports, target="everyone"),
        lambda: m.estimate_from(m.aggregate(reports), target="super"),
        lambda: m.variance(10, target="fixed"),
        lambda: dn.sample_size(m, 0.01, target="all"),
        lambda: dn.simulate(m, [0.5, 0.25, 0.25], 100, rng=1, target="sample"),
        lambda: dn.Duchi(0, 1, epsilon=1.0).estimate([0.0, 1.0, 0.5], target=None),
        lambda: RAPPOR(["a", "b"], f=0.5).variance(10, target="x"),
    ]
    for call in calls:
        with pytest.raises(ValueError, match="target must be 'population' or 'respondents'; got"):
            call()


def test_simulate_draws_the_target_model() -> None:
    """Respondents: the rounded shares, the same in every run; population: multinomial draws,
    and the truth is the population's shares."""
    m = dn.GRR(3, epsilon=8.0)  # nearly no noise: the counts show the sampling
    truth = [0.5, 0.3, 0.2]
    fixed = [dn.simulate(m, truth, 10, rng=s, target="respondents") for s in range(5)]
    assert all(e.target == "respondents" for e in fixed)
    assert {tuple(e.truth * 10) for e in fixed} == {(5.0, 3.0, 2.0)}
    pop = dn.simulate(m, truth, 10, rng=1)
    assert pop.target == "population"
    np.testing.assert_array_equal(pop.truth, truth)
