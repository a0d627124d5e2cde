"""Maximum likelihood on the simplex (deniable._mle): exact properties.

The support-count log-likelihood ``l(f) = sum_v C_v log(q*_v + (p*_v - q*_v) f_v)``
is concave, so its maximum on the simplex is unique in ``l``; every check here
is exact up to floating-point rounding (no randomness is tested, the reports
are only seeded inputs). The comparisons with a generic optimiser (scipy's
SLSQP over the simplex) allow the optimiser's own tolerance, 1e-6 in ``l``.
Power: the Norm-Sub projection of the unbiased estimate, a simplex point that
is not the MLE, fails the same comparison.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import optimize

import deniable as dn
from deniable import _consistency as consistency
from deniable import _mle as mle

K = 5
ORACLES = [
    lambda k: dn.GRR(list(range(k)), epsilon=1.0),
    lambda k: dn.SUE(list(range(k)), epsilon=1.0),
    lambda k: dn.OUE(list(range(k)), epsilon=1.0),
    lambda k: dn.BLH(list(range(k)), epsilon=1.0),
    lambda k: dn.OLH(list(range(k)), epsilon=1.0),
    lambda k: dn.HadamardResponse(list(range(k)), epsilon=1.0),
    lambda k: dn.SubsetSelection(list(range(k)), epsilon=1.0),
]
SKEWED = np.array([0.6, 0.25, 0.1, 0.05, 0.0])


def skewed_estimate(make, seed: int, n: int = 150) -> dn.Estimate:
    m = make(K)
    rng = np.random.default_rng(seed)
    return m.estimate(m.privatize_many(rng.choice(K, size=n, p=SKEWED), rng=rng))


def loglik(est: dn.Estimate, f: np.ndarray) -> float:
    return float(mle.support_loglik(f, est.support_counts, est.p_star, est.q_star))


def slsqp_max(est: dn.Estimate) -> np.ndarray:
    """A generic constrained optimiser's maximum of l on the simplex (best of several starts)."""
    best = None
    for start in (np.full(K, 1 / K), consistency.norm_sub(est.frequencies), np.eye(K)[0] * 0.9 + 0.02):
        res = optimize.minimize(
            lambda f: -loglik(est, np.clip(f, 0, 1)), start, method="SLSQP", bounds=[(0, 1)] * K,
            constraints=[{"type": "eq", "fun": lambda f: f.sum() - 1}], options={"ftol": 1e-12, "maxiter": 500},
        )
        if best is None or -res.fun > loglik(est, best):
            best = np.clip(res.x, 0, 1) / np.clip(res.x, 0, 1).sum()
    assert best is not None
    return best


@pytest.mark.parametrize("make", ORACLES)
@pytest.mark.parametrize("seed", range(4))
def test_mle_is_on_the_simplex_and_beats_slsqp_and_any_simplex_point(make, seed: int) -> None:
    est = skewed_estimate(make, seed)
    fit = mle.fit(est, bootstrap=0)
    f = fit.frequencies
    assert np.all(f >= 0) and abs(f.sum() - 1) <= 1e-12
    assert fit.gap <= 1e-9  # the Frank-Wolfe certificate of optimality
    assert loglik(est, f) >= loglik(est, slsqp_max(est)) - 1e-6
    points = np.random.default_rng(seed).dirichlet(np.full(K, 0.5), size=2000)
    assert loglik(est, f) >= float(mle.support_loglik(points, est.support_counts, est.p_star, est.q_star).max())


@pytest.mark.parametrize("make", ORACLES)
def test_the_em_converges_to_the_exact_solution(make) -> None:
    est = skewed_estimate(make, 7)
    exact = mle.fit(est, bootstrap=0)
    em = mle.fit(est, method="ibu", tol=1e-12, bootstrap=0)
    assert em.converged and em.iterations > 0 and em.gap <= 1e-12
    n_support = float(np.sum(est.support_counts))
    assert em.loglik <= exact.loglik + 1e-9 * n_support
    assert em.loglik >= exact.loglik - 1e-12 * n_support - 1e-9


def test_power_norm_sub_is_not_the_mle() -> None:
    """The same comparison rejects a simplex point that is not the maximum (Norm-Sub)."""
    est = skewed_estimate(ORACLES[0], 0)
    other = consistency.norm_sub(est.frequencies)
    assert loglik(est, other) < loglik(est, slsqp_max(est)) - 1e-6
    assert np.abs(other - mle.fit(est, bootstrap=0).frequencies).max() > 1e-3


def test_grr_mle_is_the_unbiased_estimate_when_interior() -> None:
    """GRR's channel is square and invertible: an interior unbiased estimate is the MLE."""
    m = dn.GRR(list(range(4)), epsilon=1.0)
    stat = dn.SupportCounts(m.fingerprint, np.array([330, 260, 220, 190]), 1000)
    est = m.estimate_from(stat)
    assert np.all(est.frequencies > 0)
    np.testing.assert_allclose(est.consistent("mle").frequencies, est.frequencies, rtol=0, atol=1e-12)
    em = mle.fit(est, method="ibu", tol=1e-13, bootstrap=0).frequencies
    np.testing.assert_allclose(em, est.frequencies, rtol=0, atol=1e-6)
    # power: the support-count MLE of unary encoding is not its unbiased estimate (counts not summing to n)
    oue = dn.OUE(list(range(4)), epsilon=1.0)
    est_oue = oue.estimate_from(dn.SupportCounts(oue.fingerprint, np.array([400, 300, 200, 100]), 1000))
    assert np.abs(est_oue.consistent("mle").frequencies - est_oue.frequencies).max() > 1e-3


def test_grr_mle_on_the_boundary_keeps_the_zero() -> None:
    m = dn.GRR(list(range(3)), epsilon=1.0)
    est = m.estimate_from(dn.SupportCounts(m.fingerprint, np.array([700, 300, 0]), 1000))
    f = est.consistent("mle").frequencies
    assert f[2] == 0.0 and abs(f.sum() - 1) <= 1e-12


def test_binary_rr_mle() -> None:
    m = dn.BinaryRR(prob=0.75)
    est = m.estimate_from(dn.SupportCounts(m.fingerprint, np.array([90, 10]), 100))  # lambda(yes)=0.1 < 0.25
    f = est.consistent("mle").frequencies
    np.testing.assert_allclose(f, [1.0, 0.0], rtol=0, atol=1e-12)


def test_estimate_says_mle_and_has_bootstrap_intervals() -> None:
    est = skewed_estimate(ORACLES[2], 3, n=400)
    out = est.consistent("mle")
    assert out.post_processing == "mle" and "mle" in repr(out)
    low, high = out.ci(0.9)
    assert np.all(low <= out.frequencies) and np.all(out.frequencies <= high)
    assert out.std_errors is not None and np.all(out.std_errors > 0)
    again = est.consistent("mle")  # the bootstrap is seeded: reproducible
    np.testing.assert_array_equal(again.std_errors, out.std_errors)


def test_rappor_and_bad_arguments_are_refused() -> None:
    r = dn.RAPPOR(list(range(4)), epsilon=2.0)
    est = r.estimate(r.privatize_many(np.zeros(50, dtype=int), rng=1))
    with pytest.raises(ValueError, match="does not keep them"):
        est.consistent("mle")
    good = skewed_estimate(ORACLES[0], 1)
    with pytest.raises(ValueError, match="method must be"):
        mle.fit(good, method="newton")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="bootstrap"):
        mle.fit(good, bootstrap=-1)
    with pytest.raises(ValueError, match="tol"):
        mle.fit(good, method="ibu", tol=0.0)


def test_ibu_warns_when_it_stops_early() -> None:
    est = skewed_estimate(ORACLES[1], 2)
    with pytest.warns(mle.ConvergenceWarning, match="max_iter=3"):
        fit = mle.fit(est, method="ibu", max_iter=3, bootstrap=0)
    assert not fit.converged and fit.gap > mle.DEFAULT_TOL
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mle.fit(est, bootstrap=0)
