"""Layer A for the numeric mechanisms: exact checks on the sampled distributions.

``report_distribution(value)`` is the exact law of one report, computed from
the same integers the sampler uses (lattice weights, window counts,
thresholds). The sampler is tied to it by the KS tests in
``test_numeric_stat.py``; here we check, without randomness, that it

* is a probability distribution;
* has probability ratio at most ``e^epsilon`` between any two inputs on a
  grid (endpoints, interior, outside the range), and that this ratio is
  attained (the claim is tight, not merely safe);
* is unbiased: its (debiased) mean is the clamped value;
* has exactly the variance that ``variance(1, value)`` reports;
* for Gaussian, has hockey-stick divergence at most ``delta``.
"""

from __future__ import annotations

import decimal
import math
import re
from fractions import Fraction

import numpy as np
import pytest
from numeric_cases import ALL, HIGH, LOW, PURE, VALUES, clamp
from scripted import Scripted

import deniable as dn
from deniable._randomness import fixed_point
from deniable.mechanisms._numeric import MeanStat

EPSILONS = [0.3, 1.0, 3.0]
GRID = sorted({*VALUES, *np.linspace(LOW, HIGH, 17).tolist()})


def laws(m, values):
    """Rows of exact report probabilities on one shared, sorted support."""
    supports = [m.report_distribution(v) for v in values]
    support = supports[0][0]
    for s, _ in supports:
        np.testing.assert_array_equal(s, support)  # one output space for every input
    return support, np.array([p for _, p in supports])


@pytest.mark.parametrize("eps", EPSILONS)
@pytest.mark.parametrize("name", list(PURE))
def test_probability_ratio_is_at_most_e_epsilon_and_attained(name: str, eps: float) -> None:
    m = PURE[name](eps)
    assert m.epsilon <= eps
    assert m.epsilon >= eps * (1 - 1e-5)  # the integers lose almost nothing
    _, rows = laws(m, GRID)
    np.testing.assert_allclose(rows.sum(axis=1), 1.0, atol=1e-12)
    top, bottom = rows.max(axis=0), rows.min(axis=0)
    reachable = top > 0
    assert (bottom[reachable] > 0).all(), "an output one input can give and another cannot"
    worst = float(np.max(np.log(top[reachable] / bottom[reachable])))
    assert worst <= m.epsilon + 1e-12, f"{name}: ln ratio {worst} > epsilon {m.epsilon}"
    assert worst >= m.epsilon - 1e-6, f"{name}: ln ratio {worst} far below epsilon {m.epsilon}"


def test_ratio_check_catches_a_weaker_mechanism() -> None:
    """Power of the exact check: laws of epsilon=1.2 do not fit a claim of 1.0."""
    for name in PURE:
        strong = PURE[name](1.2)
        _, rows = laws(strong, [LOW, HIGH])
        assert float(np.max(np.log(rows.max(axis=0) / rows.min(axis=0)))) > 1.0 + 0.15


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_gaussian_delta_bounds_the_exact_hockey_stick(eps: float) -> None:
    m = dn.Gaussian(LOW, HIGH, epsilon=eps, delta=1e-5)
    assert m.delta <= 1e-5
    _, rows = laws(m, [LOW, HIGH, 30.0])
    growth = math.exp(eps)
    worst = max(
        float(np.maximum(rows[a] - growth * rows[b], 0).sum()) for a in range(3) for b in range(3)
    )
    assert worst <= m.delta
    assert worst >= 0.5 * m.delta  # the reported delta is not slack
    # Power: the same noise does not give a smaller epsilon at this delta.
    tighter = float(np.maximum(rows[0] - math.exp(0.8 * eps) * rows[1], 0).sum())
    assert tighter > m.delta


def test_analytic_gaussian_calibration() -> None:
    """Balle & Wang: delta(sigma) hits the target; classical sigma is larger for eps < 1."""
    from deniable.mechanisms._numeric import analytic_gaussian_sigma
    from deniable.mechanisms._numeric.lattice import _gauss_delta

    for eps, delta in [(0.5, 1e-5), (1.0, 1e-6), (4.0, 1e-3)]:
        s = analytic_gaussian_sigma(eps, delta)
        assert _gauss_delta(eps, s) == pytest.approx(delta, rel=1e-6)
        assert _gauss_delta(eps, s * 0.99) > delta
    classical = math.sqrt(2 * math.log(1.25 / 1e-5)) / 0.5
    assert analytic_gaussian_sigma(0.5, 1e-5) < classical
    assert analytic_gaussian_sigma(1.0, 1e-5, sensitivity=10.0) == pytest.approx(
        10 * analytic_gaussian_sigma(1.0, 1e-5)
    )


@pytest.mark.parametrize("name", list(ALL))
def test_reports_are_unbiased_and_variance_matches_the_law(name: str) -> None:
    m = ALL[name](1.0)
    support, rows = laws(m, GRID)
    half = (HIGH - LOW) / 2
    mid = (HIGH + LOW) / 2
    yt = (support - mid) / half
    debiased = (yt - m._b0) / m._b1
    means = rows @ debiased
    expected = (np.array([clamp(v) for v in GRID]) - mid) / half
    np.testing.assert_allclose(means, expected, atol=2e-7)
    variances = rows @ debiased**2 - means**2
    formula = np.array([m.variance(1, v) for v in GRID]) / half**2
    np.testing.assert_allclose(variances, formula, rtol=1e-7)
    assert m.variance(1) >= formula.max() * half**2 * (1 - 1e-9)  # worst case covers all
    assert m.variance(10, 3.0) == pytest.approx(m.variance(1, 3.0) / 10)


def test_worst_case_variances_match_the_literature_table() -> None:
    """Worst-case per-user variances in [-1, 1] units (range [0, 1] has half-width 1/2).

    Laplace ``8 / eps^2``, Duchi ``((e^eps + 1) / (e^eps - 1))^2``, Piecewise and Hybrid
    from N. Wang et al. (ICDE 2019).
    """
    table = {
        0.5: {"Laplace": 32, "Duchi": 16.7, "Piecewise": 21.2, "Hybrid": 16.7},
        1.0: {"Laplace": 8, "Duchi": 4.68, "Piecewise": 5.22, "Hybrid": 4.29},
        2.0: {"Laplace": 2, "Duchi": 1.72, "Piecewise": 1.23, "Hybrid": 1.04},
        4.0: {"Laplace": 0.5, "Duchi": 1.08, "Piecewise": 0.24, "Hybrid": 0.22},
        6.0: {"Laplace": 0.22, "Duchi": 1.01, "Piecewise": 0.074, "Hybrid": 0.070},
    }
    for eps, row in table.items():
        choice = dn.best_numeric_mechanism(eps, 0.0, 1.0)
        for name, value in row.items():
            assert 4 * choice.variances[name] == pytest.approx(value, rel=0.025), (eps, name)
        assert choice.name == ("Duchi" if eps <= dn.mechanisms._numeric.EPSILON_STAR else "Hybrid")
        assert choice.variances[choice.name] == min(choice.variances.values())


def test_hybrid_threshold_and_constant_variance() -> None:
    from deniable.mechanisms._numeric import EPSILON_STAR

    assert EPSILON_STAR == pytest.approx(0.6094, abs=5e-5)
    m = dn.Hybrid(0, 1, epsilon=2.0)
    v = [m.variance(1, x) for x in np.linspace(0, 1, 11)]
    assert max(v) / min(v) < 1 + 2e-3  # the t^2 terms cancel above eps*
    assert dn.Hybrid(0, 1, epsilon=0.5).alpha == 0


def _stat(m, n: int, t_mean: float, t_sq: float) -> MeanStat:
    """The aggregate whose standardized reports have the expected moments of respondents with
    mean ``t_mean`` and mean square ``t_sq`` (t-units): ``E[y_t] = b0 + b1 t`` and
    ``E[y_t^2] = b1^2 (v(t) + t^2) + 2 b0 b1 t + b0^2`` with ``v = v0 + v1 t + v2 t^2``."""
    v0, v1, v2 = m._coefficients
    b0, b1 = m._b0, m._b1
    mean_v = v0 + v1 * t_mean + v2 * t_sq
    first = b0 + b1 * t_mean
    second = b1**2 * (mean_v + t_sq) + 2 * b0 * b1 * t_mean + b0**2
    return MeanStat(m.fingerprint, n, n * first, n * second)


MOMENT_CASES = {
    "Piecewise": lambda: dn.Piecewise(LOW, HIGH, epsilon=1.0),
    "SquareWave": lambda: dn.SquareWave(LOW, HIGH, epsilon=1.0, bins=None),
    "Duchi": lambda: dn.Duchi(LOW, HIGH, epsilon=1.0),
    "Gaussian": lambda: dn.Gaussian(LOW, HIGH, epsilon=1.0, delta=1e-5),
    "Piecewise-4": lambda: dn.Piecewise(LOW, HIGH, epsilon=4.0),
}


@pytest.mark.parametrize("case", list(MOMENT_CASES))
def test_estimate_from_inverts_the_report_moments(case: str) -> None:
    """Given the expected report moments, the estimate is the respondents' mean and the
    respondents' standard error is their average per-user variance, exactly.

    ``(v0, v1, v2)`` is the variance quadratic; Piecewise has ``v1 != 0`` (the
    fixed-point starts round asymmetrically) and ``v2 > 0``, SquareWave a
    report mean ``b0 + b1 t`` with ``b1 = 1 - gamma`` and ``b0`` of order
    ``1e-10``, Duchi ``v2 = -1`` (the mean square is then ``mean^2``, Jensen's
    bound). At epsilon 4 the reports' variance is below 1 (t-units).
    """
    m = MOMENT_CASES[case]()
    half, mid, n = (HIGH - LOW) / 2, (HIGH + LOW) / 2, 1000
    v0, v1, v2 = m._coefficients
    for t_mean, t_sq in [(0.3, 0.5), (-0.6, 0.4), (0.0, 0.2)]:
        est = m.estimate_from(_stat(m, n, t_mean, t_sq), target="respondents")
        assert est.mean == pytest.approx(mid + half * t_mean, rel=1e-14, abs=1e-13)
        assert (est.mechanism, est.epsilon, est.delta, est.n) == (m.name, m.epsilon, m.delta, n)
        assert (est.low, est.high, est.target) == (LOW, HIGH, "respondents")
        used = t_sq if v2 > 0 else t_mean**2
        assert est.std_error == pytest.approx(half * math.sqrt((v0 + v1 * t_mean + v2 * used) / n), rel=1e-12)
        # the population target: the sample error of the debiased reports
        sample_var = (v0 + v1 * t_mean + v2 * t_sq + t_sq - t_mean**2) * n / (n - 1)
        assert est.sample_std_error == pytest.approx(half * math.sqrt(sample_var / n), rel=1e-9)
    # a mean beyond the range (few reports, or values piled at an end) is taken at the end
    for t_mean, end in [(1.5, HIGH), (-1.5, LOW)]:
        est = m.estimate_from(_stat(m, n, t_mean, t_mean**2), target="respondents")
        assert est.std_error == pytest.approx(math.sqrt(m.variance(n, end)), rel=1e-9)
    if v2 > 0:  # a second moment beyond every input's: the mean square is capped at 1
        est = m.estimate_from(_stat(m, n, 0.0, 3.0), target="respondents")
        assert est.std_error == pytest.approx(half * math.sqrt((v0 + v2) / n), rel=1e-12)


@pytest.mark.parametrize("name", list(ALL))
def test_audit_cells_split_the_range_at_its_ends_and_middle(name: str) -> None:
    m = ALL[name](1.0)
    mid = (LOW + HIGH) / 2
    reports = [LOW - 1.0, LOW, mid - 1e-9, mid, HIGH - 1e-9, HIGH, HIGH + 1.0]
    np.testing.assert_array_equal(m.audit_events(reports, LOW, HIGH), [0, 1, 1, 2, 2, 3, 3])
    events, n_events = m.binned_events()
    assert n_events == 10
    step = (HIGH - LOW) / 8
    edges = LOW + step * np.arange(9)
    got = events(m, np.concatenate([[LOW - 1.0], edges, edges[:-1] + step / 2, [HIGH + 1.0]]), LOW, HIGH)
    np.testing.assert_array_equal(got, [0, *range(1, 10), *range(1, 9), 9])
    events, n_events = m.binned_events(bins=3)
    assert n_events == 5
    np.testing.assert_array_equal(events(m, [LOW - 1, LOW, LOW + 34.0, LOW + 67.0, HIGH], 0, 0), [0, 1, 2, 3, 4])


def test_gaussian_calibration_inverts_and_names_its_arguments() -> None:
    """``gaussian_epsilon`` inverts ``analytic_gaussian_sigma`` (below and above epsilon 1) and is
    ``inf`` exactly when even epsilon 700 leaves more than ``delta``."""
    from scipy import optimize, stats

    from deniable.mechanisms._numeric import analytic_gaussian_sigma, gaussian_epsilon
    from deniable.mechanisms._numeric.lattice import _gauss_delta

    for eps, delta in [(0.05, 1e-6), (0.5, 1e-5), (3.0, 1e-3), (40.0, 1e-9)]:
        s = analytic_gaussian_sigma(eps, delta)
        assert gaussian_epsilon(s, delta) == pytest.approx(eps, rel=1e-9)
        if eps < 40:  # Balle & Wang's Theorem 8, sensitivity 1, written out here
            exact = stats.norm.cdf(1 / (2 * s) - eps * s) - math.exp(eps) * stats.norm.cdf(-1 / (2 * s) - eps * s)
            assert exact == pytest.approx(delta, rel=1e-6)
    edge = math.exp(optimize.brentq(lambda s: _gauss_delta(700.0, math.exp(s)) - 1e-6, -20.0, 0.0, xtol=1e-15))
    assert gaussian_epsilon(edge * (1 - 1e-6), 1e-6) == math.inf
    assert gaussian_epsilon(edge * (1 + 1e-6), 1e-6) == pytest.approx(700.0, rel=1e-4)
    positive = r"^epsilon must be a positive finite number for analytic_gaussian_sigma; got 0$"
    with pytest.raises(ValueError, match=positive):
        analytic_gaussian_sigma(0, 1e-5)
    with pytest.raises(TypeError, match=r"^delta must be a number in \(0, 1\) for analytic_gaussian_sigma; got '1'$"):
        analytic_gaussian_sigma(1.0, "1")


@pytest.mark.parametrize("eps", [1e-9, 0.3, 1.0, 7.0, 21.4])
def test_duchi_takes_the_largest_beta_within_epsilon(eps: float) -> None:
    """``c`` is the largest numerator with ``ln((2^32 + c) / (2^32 - c)) <= eps``; reports are
    ``mid ± half 2^32 / c``, one bit."""
    m = dn.Duchi(LOW, HIGH, epsilon=eps)
    c = m.to_config()["params"]["beta_numerator"]
    assert m.beta == Fraction(c, 2**32) and m.report_bits == 1
    assert m.epsilon <= eps < dn.Duchi._build(LOW, HIGH, {"beta_numerator": c + 1, "beta_bits": 32}).epsilon
    assert m.epsilon == pytest.approx(math.log((2**32 + c) / (2**32 - c)), rel=1e-9)
    B = 2**32 / c
    assert m.report_range == (30.0 - 50.0 * B, 30.0 + 50.0 * B)
    assert dn.Duchi(LOW, HIGH, epsilon=m.epsilon) == m  # its realised epsilon rebuilds it


def test_duchi_epsilon_is_the_log_ratio_of_its_numerator() -> None:
    """Built from its params (no search for ``c``), Duchi has ``epsilon = ln((2^32 + c) / (2^32 - c))``
    (rounded up: within two ulps of ``log1p(2c / (2^32 - c))``) at the smallest, small, middle and
    largest numerators. Bounded: a wrong formula fails here at once, where a constructor would
    step ``c`` down one at a time towards 0 (a hang)."""
    for c in (1, 12345, 2**31, 2**32 - 1):
        m = dn.Duchi._build(LOW, HIGH, {"beta_numerator": c, "beta_bits": 32})
        exact = math.log1p(2 * c / (2**32 - c))
        assert abs(m.epsilon - exact) <= 2 * math.ulp(exact), (c, m.epsilon, exact)


def test_duchi_limits_and_params_in_whole_messages() -> None:
    with pytest.raises(ValueError, match=r"^epsilon=4\.656612873077393e-10 is too small for Duchi \(below 2\*\*-31\)$"):
        dn.Duchi(0, 1, epsilon=2.0**-31)
    for c, bits in [(0, 32), (2**32, 32), (5, 31)]:
        params = {"beta_numerator": c, "beta_bits": bits}
        message = rf"^Duchi params need beta_bits=32 and 0 < beta_numerator < 2\*\*32; got {re.escape(repr(params))}$"
        with pytest.raises(ValueError, match=message):
            dn.Duchi._build(0.0, 1.0, params)
    for c in (1, 2**32 - 1):
        assert dn.Duchi._build(0.0, 1.0, {"beta_numerator": c, "beta_bits": 32}).beta == Fraction(c, 2**32)


def test_duchi_one_report_compares_with_the_laws_threshold() -> None:
    """Scripted bytes: a 64-bit ``U`` (little-endian), the 32-bit coin ``V`` (informative when
    ``V < c``) and a 32-bit fair word. The report is ``+B`` exactly when ``U < T`` on the
    informative branch, with ``T`` the threshold the exact law uses (``fixed_point((t + 1) / 2)``),
    and the fair word's low bit otherwise."""
    m = dn.Duchi(LOW, HIGH, epsilon=1.0)
    c = m.to_config()["params"]["beta_numerator"]
    low, high = m.report_range

    def report(value: float, u: int, v: int, fair: int) -> float:
        data = u.to_bytes(8, "little") + v.to_bytes(4, "little") + fair.to_bytes(4, "little")
        source = Scripted(data)
        out = m.privatize(value, rng=source)
        assert source.data == b""
        return out

    for value in VALUES:
        t = (m._unit(np.array([value])) + 1.0) * 0.5  # as report_distribution maps the value
        T = int(fixed_point(t)[0])
        if T > 0:
            assert report(value, T - 1, c - 1, 0) == high
        assert report(value, T, 0, 1) == low
        assert report(value, 2**64 - 1, 0, 1) == low
        assert report(value, 0, c, 1) == high and report(value, 0, c, 2) == low
        assert report(value, 2**64 - 1, 2**32 - 1, 3) == high


@pytest.mark.parametrize("eps", [0.3, 1.0, 2.0, 8.0, 28.0])
def test_piecewise_window_is_the_odd_cell_count_nearest_pm_s(eps: float) -> None:
    """PM's window covers ``(C - 1) / (2C) = 1 / (e^(eps/2) + 1)`` of the output range: the
    window is the odd number of the 1024 cells nearest that share, with the smallest uniform
    share whose exact epsilon is within the request."""
    from deniable.mechanisms._numeric.window import window_epsilon

    m = dn.Piecewise(LOW, HIGH, epsilon=eps)
    params = m.to_config()["params"]
    share = 1024 / (math.exp(eps / 2) + 1)
    assert params["window"] == min(range(1, 1024, 2), key=lambda w: abs(w - share))
    assert (params["cells"], params["bits"], m.cells, m.report_bits) == (1024, 16, 1024, 10)
    num = params["uniform_numerator"]
    assert m.epsilon == window_epsilon(1024, params["window"], 16, num) <= eps
    assert num == 1 or window_epsilon(1024, params["window"], 16, num - 1) > eps
    bad = {**params, "bits": 32}
    with pytest.raises(ValueError, match=rf"^Piecewise params need bits=16; got {re.escape(repr(bad))}$"):
        dn.Piecewise._build(LOW, HIGH, bad)


@pytest.mark.parametrize("eps", [0.61, 1.0, 25.0])
def test_hybrid_uses_piecewise_with_probability_alpha(eps: float) -> None:
    """``alpha = 1 - e^(-eps/2)`` in 32 bits; the mixture's epsilon is the larger part's (Duchi
    capped at its own limit, 21.4); one bit more than Piecewise's reports."""
    from deniable.mechanisms._numeric.duchi import DUCHI_MAX_EPSILON

    m = dn.Hybrid(LOW, HIGH, epsilon=eps)
    params = m.to_config()["params"]
    num = params["piecewise_numerator"]
    assert abs(num - (1 - math.exp(-eps / 2)) * 2**32) <= 0.5 + 1e-3  # rounded to nearest
    assert m.alpha == Fraction(num, 2**32)
    duchi, pm = dn.Duchi(LOW, HIGH, epsilon=min(eps, DUCHI_MAX_EPSILON)), dn.Piecewise(LOW, HIGH, epsilon=eps)
    assert params["duchi"] == duchi.to_config()["params"] and params["piecewise"] == pm.to_config()["params"]
    assert m.epsilon == max(duchi.epsilon, pm.epsilon)
    assert m.report_bits == pm.report_bits + 1 == 11
    assert m.report_range == (min(duchi.report_range[0], pm.report_range[0]),
                              max(duchi.report_range[1], pm.report_range[1]))


def test_hybrid_is_duchi_up_to_epsilon_star_and_checks_its_params() -> None:
    from deniable.mechanisms._numeric import EPSILON_STAR

    m = dn.Hybrid(LOW, HIGH, epsilon=EPSILON_STAR)
    duchi = dn.Duchi(LOW, HIGH, epsilon=EPSILON_STAR)
    assert m.alpha == 0 and m.report_bits == 1 and m.epsilon == duchi.epsilon
    assert m.to_config()["params"] == {"duchi": duchi.to_config()["params"], "piecewise": None,
                                       "piecewise_numerator": 0}
    assert m.report_range == duchi.report_range
    good = dn.Hybrid(LOW, HIGH, epsilon=1.0).to_config()["params"]
    for bad in ({**good, "piecewise_numerator": 0}, {**good, "piecewise_numerator": 2**32},
                {**good, "piecewise": None}, {**good, "piecewise_numerator": -1}):
        with pytest.raises(ValueError, match=rf"^Hybrid params are inconsistent: {re.escape(repr(bad))}$"):
            dn.Hybrid._build(LOW, HIGH, bad)
    assert dn.Hybrid._build(LOW, HIGH, {**good, "piecewise_numerator": 2**32 - 1}).alpha == Fraction(2**32 - 1, 2**32)


@pytest.mark.parametrize("eps", [0.3, 1.0, 8.0])
def test_laplace_lattice_geometry(eps: float) -> None:
    """``N = floor(32767 / (1 + 24 / eps))`` steps over the range, noise clamped 24 scales
    ``(high - low) / eps`` beyond it (``K = N + ceil(24 N / eps)``); the worst per-user variance
    is at half a step (rounding term 1/4 step^2)."""
    m = dn.Laplace(LOW, HIGH, epsilon=eps)
    N = int(32767 / (1 + 24 / eps))
    K = N + math.ceil(24 * N / eps)
    assert m.to_config()["params"] == {"requested_epsilon": eps, "lattice_steps": N}
    assert m.step == (HIGH - LOW) / N and m.scale == pytest.approx((HIGH - LOW) / eps, rel=1e-15)
    assert m.report_range == pytest.approx((LOW - (K - N) * m.step, LOW + K * m.step), rel=1e-15)
    assert m.report_bits == (2 * K - N).bit_length()
    assert m.variance(1) == pytest.approx(m.variance(1, LOW + 0.5 * m.step), rel=1e-12)
    assert m.variance(1) > m.variance(1, LOW + 0.3 * m.step) > m.variance(1, LOW)


@pytest.mark.parametrize("eps", [0.05, 0.5, 2.0])  # 0.05: a lattice of fewer than 64 steps
def test_gaussian_delta_is_the_exact_divergence_at_a_range_shift(eps: float) -> None:
    """``delta`` is ``sum_z max(0, P(z) - e^eps P(z - N))`` for the lattice's integer weights
    (a shift by the whole range, the worst for Gaussian noise), computed here in exact
    rationals, rounded up by at most a relative 1e-9 (float summation) and never down."""
    m = dn.Gaussian(LOW, HIGH, epsilon=eps, delta=1e-5)
    lat = m._lattice
    w, N = lat.weights, lat.steps
    growth = Fraction(math.exp(m.epsilon))
    exact = sum(max(Fraction(0), w[z] - growth * (w[z - N] if z >= N else 0)) for z in range(len(w))) / 2**64
    assert float(exact) <= m.delta <= float(exact) * (1 + 2e-9)
    assert m.delta <= 1e-5
    assert (N < 64) == (eps == 0.05)  # the 63 check shifts must stay within the range


def test_sliding_window_epsilon_is_its_ratio_bound() -> None:
    """A window's epsilon is ``ln(1 + (1 - gamma) ceil(K/L) / (gamma floor(K/G)))`` (rounded up: within
    two ulps of the float formula), for 16- and 32-bit windows and shares from tiny to almost 1.
    Built from the integers (no calibration search), so a wrong formula fails here at once where
    a mechanism's constructor would step the share one unit at a time (a hang)."""
    from deniable.mechanisms._numeric.window import SlidingWindow

    for cells, window, bits, num in [(1024, 387, 16, 5), (1024, 1, 16, 3 << 30), (1549, 525, 32, 123_456_789),
                                     (2047, 1023, 32, (1 << 32) - 1)]:
        K, g = 1 << bits, num / 2**32
        exact = math.log1p((1 - g) * -(-K // window) / (g * (K // cells)))
        eps = SlidingWindow(cells, window, bits, num).epsilon
        assert abs(eps - exact) <= 2 * math.ulp(exact), (cells, window, bits, num, eps, exact)


def test_window_calibration_is_the_smallest_share_within_epsilon() -> None:
    """``calibrate_window`` is the smallest share whose window epsilon is at most the request: the
    realised epsilon of a share gives that share back, and the next float below it the next share
    up. It starts from a float estimate and steps: at these cases (found by a scan) the estimate is
    one unit above the answer (the request is a share's own rounded-up epsilon, also at share 1,
    where the step must stop) or one below it (the request a float under that), so each step
    direction decides once; and at share 1 with the estimate 1 it must not look below 1."""
    from deniable.mechanisms._numeric.window import calibrate_window, window_epsilon

    for cells, window, bits, num in [(1500, 721, 16, 1_815_427_791), (4637, 3097, 32, 4_157_211_329),
                                     (928, 741, 32, 1), (1716, 77, 16, 1), (1024, 1, 16, 1)]:
        assert calibrate_window(cells, window, bits, window_epsilon(cells, window, bits, num)) == num
    for cells, window, bits, num in [(723, 595, 16, 4_074_418_349), (1650, 747, 32, 3_386_275_495)]:
        below = math.nextafter(window_epsilon(cells, window, bits, num), 0.0)
        assert calibrate_window(cells, window, bits, below) == num + 1


def test_window_counts_are_exact_beyond_2_to_the_53() -> None:
    """``_counts`` is integer arithmetic: ``#{V < K : floor((S + L V) / K) = j}`` exactly also where the
    start ``S`` and the cell edges ``j K`` pass 2**53, as in a 32-bit window of more than 2**21 cells
    (in floats ``S`` would round to a multiple of 4). Only the counts' arithmetic is read, so a few
    cells of such a window are counted, without building its 4 million."""
    from deniable.mechanisms._numeric.window import SlidingWindow

    K, L = 1 << 32, 3
    window = SlidingWindow(8, L, 32, 1 << 31)

    def exact(S: int, j: int) -> int:
        first, end = -(-(j * K - S) // L), -(-((j + 1) * K - S) // L)  # the V with S + L V in [jK, (j+1)K)
        return max(0, min(K, end) - max(0, first))

    for S in (2**54 + 1, 2**54 + 3 * 2**31 + 7, 2**62 - 5):
        cells = list(range(S // K, S // K + L + 1))
        counts = window._counts(np.array([S]), L, np.array(cells))
        assert counts.tolist() == [[exact(S, j) for j in cells]] and counts.sum() == K


def test_sliding_window_checks_and_odd_windows() -> None:
    from deniable.mechanisms._numeric.window import SlidingWindow, calibrate_window, odd_window

    bad = [(1024, 386, 16), (1024, 1024, 16), (1025, 1025, 16), (1024, 0, 16), (1 << 17, 3, 16), (1024, 3, 24)]
    for cells, window, bits in bad:  # even, as wide as the cells, empty; too many cells; 24 bits
        with pytest.raises(ValueError, match=rf"^bad sliding window: cells={cells}, window={window}, bits={bits}$"):
            SlidingWindow(cells, window, bits, 5)
    for num in (0, 1 << 32):
        with pytest.raises(ValueError, match=rf"^uniform share must be in \(0, 2\*\*32\); got {num}$"):
            SlidingWindow(1024, 3, 16, num)
    assert SlidingWindow(1 << 16, 1, 16, (1 << 32) - 1).gamma == Fraction((1 << 32) - 1, 1 << 32)
    assert SlidingWindow(1024, 1023, 32, 1).L == 1023
    with pytest.raises(ValueError, match=r"^epsilon=1e-12 is too small for a 1024-cell window$"):
        calibrate_window(1024, 387, 16, 1e-12)
    for x in np.linspace(-3.0, 40.0, 431):  # the nearest odd number, the larger on a tie
        assert odd_window(float(x), 1024) == min(range(1, 1023, 2), key=lambda w: (abs(w - x), -w))
    assert (odd_window(100.0, 12), odd_window(100.0, 11), odd_window(2.0, 12)) == (11, 9, 3)


@pytest.mark.parametrize("eps", [1e-9, 1e-8, 1e-6, 0.5, 1.0, 4.0])
def test_square_wave_window_is_li_et_al_s_2b(eps: float) -> None:
    """``b = (eps e^eps - e^eps + 1) / (2 e^eps (e^eps - 1 - eps))`` (here in 60-digit decimals:
    both parts are of order ``eps^2``, and ``b -> 1/2`` as ``eps -> 0``); the window is the odd
    number of the 1024 input cells nearest ``2 b 1024``, and there are ``1024 + L`` output cells."""
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        d = decimal.Decimal(eps)
        e = d.exp()
        b = float((d * e - e + 1) / (2 * e * (e - 1 - d)))
    m = dn.SquareWave(LOW, HIGH, epsilon=eps)
    params = m.to_config()["params"]
    L = min(range(1, 4096, 2), key=lambda w: abs(w - 2 * b * 1024))
    assert (params["window"], params["cells"], params["bits"], params["bins"]) == (L, 1024 + L, 32, 1024)
    assert m.cells == 1024 + L and m.report_bits == (1023 + L).bit_length()
    assert m.report_range == pytest.approx((LOW - (HIGH - LOW) * (L - 1) / 2048, HIGH + (HIGH - LOW) * (L - 1) / 2048))


@pytest.mark.parametrize("eps", [0.3, 1.0, 4.0])
def test_square_wave_report_mean_is_affine_in_the_value(eps: float) -> None:
    """SquareWave's exact report mean is ``b0 + b1 t`` with ``b1 = 1 - gamma`` and ``b0`` from the
    uniform cell mean and the window mean ``S/K + (L-1)(K-1)/(2K)``: debiased, it is the clamped
    value to ``1e-12`` (the 32-bit starts round ``t`` by under ``1e-12``; found ``9e-14``). A
    window mean off by one ``K`` in ``K - 1`` moves it by ``1e-10`` or more at these epsilons."""
    m = dn.SquareWave(LOW, HIGH, epsilon=eps, bins=None)
    support, rows = laws(m, GRID)
    half, mid = (HIGH - LOW) / 2, (HIGH + LOW) / 2
    means = (rows @ ((support - mid) / half) - m._b0) / m._b1
    np.testing.assert_allclose(means, [(clamp(v) - mid) / half for v in GRID], rtol=0, atol=1e-12)


def test_square_wave_bins_and_params_in_whole_messages() -> None:
    for bad in (0, 3, True, 2048, "8", 8.0):
        message = rf"^bins must be a divisor of 1024 for SquareWave; got {re.escape(repr(bad))}$"
        with pytest.raises(ValueError, match=message):
            dn.SquareWave(0, 1, epsilon=1.0, bins=bad)
    assert dn.SquareWave(0, 1, epsilon=1.0, bins=np.int64(8)).bins == 8
    assert dn.SquareWave(0, 1, epsilon=1.0, bins=None).bins is None
    assert dn.SquareWave(0, 1, epsilon=1.0, bins=1).bins == 1  # one bin: the whole range
    params = dn.SquareWave(0, 1, epsilon=1.0, bins=8).to_config()["params"]
    assert dn.SquareWave._build(0.0, 1.0, params).bins == 8
    assert dn.SquareWave._build(0.0, 1.0, {k: v for k, v in params.items() if k != "bins"}).bins == 1024
    for bad in ({**params, "bits": 16}, {**params, "cells": params["cells"] - 2}):
        message = rf"^SquareWave params need bits=32 and cells - window = 1024; got {re.escape(repr(bad))}$"
        with pytest.raises(ValueError, match=message):
            dn.SquareWave._build(0.0, 1.0, bad)


def test_square_wave_counts_every_cell() -> None:
    """The aggregate's cell counts are the number of reports at each output value, in order."""
    m = dn.SquareWave(LOW, HIGH, epsilon=1.0, bins=None)
    values = m._report_values
    picks = np.array([0, 0, 5, values.size - 1, 7, 5, 0])
    counts = m.aggregate(values[picks]).cell_counts
    assert counts.dtype == np.int64 and counts.shape == (values.size,)
    np.testing.assert_array_equal(counts, np.bincount(picks, minlength=values.size))
    with pytest.raises(ValueError, match=r"^method must be 'ems' or 'em'; got 'mle'$"):
        m.distribution(values[picks], method="mle")
    message = rf"^distribution needs an aggregate made by this SquareWave \({values.size} non-negative cell counts\)$"
    stat = m.aggregate(values[picks])
    for broken in (MeanStat(stat.fingerprint, stat.n, stat.total, stat.total_sq, None),
                   MeanStat(stat.fingerprint, stat.n, stat.total, stat.total_sq, -counts),
                   dn.SquareWave(LOW, HIGH, epsilon=2.0, bins=None).aggregate([])):
        with pytest.raises(ValueError, match=message):
            m.distribution(broken)
    assert m.distribution(stat).probabilities.shape == (1024,)  # bins=None: every input cell


def test_lattice_epsilon_refuses_weights_that_are_not_unimodal() -> None:
    """The exact epsilon ranks candidates assuming unimodal weights, and checks that assumption."""
    from deniable.mechanisms._numeric.lattice import _pure_epsilon

    for inner in ([1, 2, 3, 2, 3], [1, 3, 2, 1, 0], [1, 2, 1, 2, 1]):
        with pytest.raises(AssertionError, match=r"^lattice weights are not unimodal$"):
            _pure_epsilon([1, *inner, 1], 1, 3)
    assert _pure_epsilon([1, 1, 2, 4, 2, 1, 1], 1, 3) == pytest.approx(math.log(2), rel=1e-12)  # 4 / 2, 2 / 1


def _brute_lattice_epsilon(weights: list[int], N: int, K: int) -> float:
    """``ln`` of the largest ``P(y|i) / P(y|i')`` over every output and lattice input pair, by enumeration."""
    from deniable._privacy import ln_up

    tail = K - N
    best = Fraction(1)
    for y in range(-tail, N + tail + 1):
        if y == -tail:  # clamped low end: every z <= y - i
            column = [sum(weights[: y - i + K + 1]) for i in range(N + 1)]
        elif y == N + tail:  # clamped high end: every z >= y - i
            column = [sum(weights[y - i + K:]) for i in range(N + 1)]
        else:
            column = [weights[y - i + K] for i in range(N + 1)]
        best = max(best, Fraction(max(column), min(column)))
    return ln_up(best)


def test_lattice_epsilon_is_the_enumerated_maximum_for_symmetric_unimodal_weights() -> None:
    """``_pure_epsilon`` ranks candidate outputs in floats; its exact result is the enumerated maximum.

    Symmetric unimodal weights (as ``laplace_lattice`` builds them) on small lattices: steep and
    flat profiles, plateaus and tiny or heavy end (tail) entries, so the maximum falls at a
    clamped end, at the centre or beside it.
    """
    from deniable._privacy import ln_up
    from deniable.mechanisms._numeric.lattice import _pure_epsilon

    assert _pure_epsilon([1, 2, 100, 6000, 100, 2, 1], 1, 3) == ln_up(60)  # 6000 / 100 at outputs 0 and 1
    assert _pure_epsilon([1, 2, 3, 3, 3, 2, 1], 1, 3) == ln_up(3)  # the clamped end: (1 + 2) / 1
    rng = np.random.default_rng(20261124)
    cases = [([1, 2, 100, 6000, 100, 2, 1], 1, 3), ([5, 7, 7, 9, 7, 7, 5], 2, 3)]
    for _ in range(400):
        N = int(rng.integers(1, 5))
        K = N + int(rng.integers(1, 5))
        steps = [int(rng.choice([1, 1, 2, 3, 50, 1000])) for _ in range(K)]  # ratios of neighbours, outwards
        half = [1]
        for step in steps[:-1]:
            half.append(half[-1] * step)  # |z| = K - 1 .. 0, growing towards the centre
        end = [1, 2, half[0], half[0] * 40, half[-1]][int(rng.integers(5))]
        cases.append(([end, *half, *half[-2::-1], end], N, K))
    for weights, N, K in cases:
        assert _pure_epsilon(weights, N, K) == _brute_lattice_epsilon(weights, N, K), (weights, N, K)


@pytest.mark.parametrize("eps", [0.01, 0.05, 3.0, 10.0])
def test_gaussian_epsilon_inverts_the_calibration_to_the_root_finders_tolerance(eps: float) -> None:
    """``gaussian_epsilon`` solves ``_gauss_delta(e, sigma) = delta`` to ``1e-13``.

    brentq's default tolerance leaves errors up to ``5e-13`` here (at epsilon 10, delta ``1e-3``).
    """
    from deniable.mechanisms._numeric.lattice import gaussian_epsilon, unit_sigma

    for delta in (1e-3, 1e-5, 1e-7, 1e-9):
        assert abs(gaussian_epsilon(unit_sigma(eps, delta), delta) - eps) <= 1e-13, delta


def test_gaussian_epsilon_is_700_where_epsilon_700_leaves_exactly_delta() -> None:
    """At the ``inf`` boundary (``delta`` equal to the divergence at epsilon 700) the answer is 700, not ``inf``."""
    from deniable.mechanisms._numeric.lattice import _gauss_delta, gaussian_epsilon

    delta = _gauss_delta(700.0, 0.03)
    assert 0 < delta < 1e-5
    assert gaussian_epsilon(0.03, delta) == 700.0
    assert gaussian_epsilon(0.03, math.nextafter(delta, 0.0)) == math.inf


@pytest.mark.parametrize("s_steps", [3.0, 40.0, 700.5])
def test_gaussian_lattice_ends_hold_the_tail_mass(s_steps: float) -> None:
    """The two end weights are ``2^64 P(|Z| >= K)`` per side of the discrete Gaussian, to ``1e-3``.

    The tail beyond ``K = ceil(8 s)`` (about ``e^-32`` of the peak, ten thousands of ``2^-64``)
    is lumped into the end entries; the reference sums the density 20 standard deviations out.
    """
    from deniable.mechanisms._numeric.lattice import _gaussian_weights

    K = math.ceil(8 * s_steps)
    weights = _gaussian_weights(s_steps, K)
    far = K + 20 * math.ceil(s_steps)
    density = [math.exp(-0.5 * (z / s_steps) ** 2) for z in range(far + 1)]
    total = density[0] + 2 * math.fsum(density[1:])
    tail = math.fsum(density[K:]) / total * 2.0**64
    assert tail > 1e4
    assert weights[0] == pytest.approx(tail, rel=1e-3)
    assert weights[-1] == pytest.approx(tail, rel=1e-3)
    assert sum(weights) == 2**64
