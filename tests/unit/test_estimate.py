"""Estimate: alignment with the domain, the frame, and the estimate of no reports."""

from __future__ import annotations

import re

import numpy as np
import pytest

import deniable as dn
from deniable._estimate import Target


def test_domain_alignment_and_frame() -> None:
    m = dn.GRR(["red", "green", "blue"], epsilon=2.0)
    est = m.estimate(["red", "red", "blue", "green", "red"])
    assert est.domain == ("red", "green", "blue")
    frame = est.to_frame()
    assert list(frame.index) == ["red", "green", "blue"]
    np.testing.assert_array_equal(frame["estimate"].to_numpy(), est.frequencies)
    assert "GRR" in repr(est) and "red" in repr(est)
    assert est.counts.sum() == pytest.approx(est.n)  # GRR estimates sum to 1 exactly


def test_estimate_of_nothing() -> None:
    m = dn.OUE(5, epsilon=1.0)
    est = m.estimate_from(m.aggregate([]))
    assert est.n == 0 and np.all(np.isnan(est.frequencies))
    with pytest.raises(ValueError, match="n >= 1"):
        est.ci(0.95)


# ------------------------------------------------- Estimate.ci, formula by formula
# GRR(k=3, epsilon=1): p* = e/(e+2), q* = 1/(e+2). Deterministic: the references
# below are scipy's binomial intervals and closed forms, not Estimate.ci.

N = 60


def _grr_estimate(counts: list[int], target: Target = "respondents") -> dn.Estimate:
    """GRR(3, 1) from support counts; by default for the fixed respondents (formula (A))."""
    from deniable._aggregates import SupportCounts

    m = dn.GRR(3, epsilon=1.0)
    return m.estimate_from(SupportCounts(m.fingerprint, np.array(counts), sum(counts)), target=target)


@pytest.mark.parametrize("method", ["wilson", "clopper-pearson"])
@pytest.mark.parametrize("level", [0.95, 0.99])
def test_rate_intervals_are_scipy_intervals_through_the_debias(method: str, level: float) -> None:
    """``[(lo - q*) / (p* - q*), (hi - q*) / (p* - q*)]`` clipped to [0, 1], [lo, hi] from scipy's binomtest."""
    from scipy import stats

    est = _grr_estimate([30, 20, 10])
    p, q = float(est.p_star[0]), float(est.q_star[0])
    low, high = est.ci(level, method)  # type: ignore[arg-type]
    for v, c in enumerate([30, 20, 10]):
        ref = stats.binomtest(c, N).proportion_ci(level, method="exact" if method == "clopper-pearson" else "wilson")
        want = np.clip([(ref.low - q) / (p - q), (ref.high - q) / (p - q)], 0.0, 1.0)
        assert (low[v], high[v]) == pytest.approx(tuple(want), abs=1e-12)
    # non-trivial: at 95% the middle category's interval is clipped on neither side
    assert level != 0.95 or 0 < low[1] < est.frequencies[1] < high[1] < 1


def test_normal_interval_is_f_plus_minus_z_se() -> None:
    """``f ± Phi^-1(1/2 + level/2) · SE``. For the respondents SE is formula (A) with the clamped
    plug-in; for the population it is ``sqrt(lambda (1 - lambda) / (n (p*-q*)^2))`` with the observed
    share ``lambda`` (category 2's estimate is negative, so the plug-ins differ)."""
    from scipy import stats

    observed = np.array([30, 20, 10]) / N
    for target in ("respondents", "population"):
        est = _grr_estimate([30, 20, 10], target)  # type: ignore[arg-type]
        p, q = est.p_star, est.q_star
        f = (observed - q) / (p - q)
        np.testing.assert_allclose(est.frequencies, f, rtol=1e-12)
        if target == "respondents":
            plug = np.clip(f, 0, 1)
            se = np.sqrt(q * (1 - q) / (N * (p - q) ** 2) + plug * (1 - p - q) / (N * (p - q)))
        else:
            se = np.sqrt(observed * (1 - observed) / (N * (p - q) ** 2))
        np.testing.assert_allclose(est.std_errors, se, rtol=1e-12)
        for level in (0.9, 0.95):
            z = stats.norm.ppf(0.5 + level / 2)
            low, high = est.ci(level)
            np.testing.assert_allclose(low, f - z * se, rtol=1e-12)
            np.testing.assert_allclose(high, f + z * se, rtol=1e-12)


def _tail_misses(method: str, level: float = 0.95, widen: float = 0.0) -> np.ndarray:
    """Exact ``P(low > f)`` and ``P(high < f)`` for category 0 of GRR(3, 1) over every f = j/N.

    The population is fixed: j of the N respondents hold category 0, so its
    support count is Binomial(j, p*) + Binomial(N - j, q*) (convolved exactly).
    ``widen`` moves both ends outwards (for the power check).
    """
    from scipy import stats

    rows = [_grr_estimate([c, N - c, 0]).ci(level, method) for c in range(N + 1)]  # type: ignore[arg-type]
    low = np.array([r[0][0] for r in rows]) - widen
    high = np.array([r[1][0] for r in rows]) + widen
    est = _grr_estimate([1, 1, 1])
    p, q = float(est.p_star[0]), float(est.q_star[0])
    out = []
    for j in range(N + 1):
        pmf = np.convolve(stats.binom.pmf(np.arange(j + 1), j, p), stats.binom.pmf(np.arange(N - j + 1), N - j, q))
        out.append((pmf[low > j / N].sum(), pmf[high < j / N].sum()))
    return np.array(out)


def _exact_two_sided(misses: np.ndarray, alpha: float) -> bool:
    """Each tail misses at most alpha/2 at every f; not too wide: one rate comes within 40% of it, and
    averaged over f each tail misses at least 40% of it (the correct interval: 55% and 53%). An end
    too wide away from f = 0 or 1 only (the lower end debiased as ``(lo - q*) * (p* - q*)``) fails the mean."""
    worst = misses.max(axis=0)
    return bool((worst <= alpha / 2).all() and (worst >= 0.6 * alpha / 2).all()
                and (misses.mean(axis=0) >= 0.4 * alpha / 2).all())


def test_clopper_pearson_estimate_interval_exact_coverage_on_both_sides() -> None:
    """Exact coverage of ``Estimate.ci(method="clopper-pearson")``, computed from the binomial pmf.

    Deterministic (no sampling). Power: the same interval widened by 0.05 on
    each side (too wide) or narrowed by 0.05 (too narrow) fails the check.
    """
    assert _exact_two_sided(_tail_misses("clopper-pearson"), 0.05)
    assert not _exact_two_sided(_tail_misses("clopper-pearson", widen=0.05), 0.05)
    assert not _exact_two_sided(_tail_misses("clopper-pearson", widen=-0.05), 0.05)


def test_wilson_estimate_interval_coverage_is_near_nominal_on_both_sides() -> None:
    """Wilson is approximate: averaged over f = j/N each tail misses within 40% of alpha/2.

    Deterministic. Power: widened or narrowed by 0.05 it leaves that band.
    """
    def near(m: np.ndarray) -> bool:
        return bool(((0.6 * 0.025 < m.mean(axis=0)) & (m.mean(axis=0) < 1.4 * 0.025)).all())

    assert near(_tail_misses("wilson"))
    assert not near(_tail_misses("wilson", widen=0.05))
    assert not near(_tail_misses("wilson", widen=-0.05))


def test_ci_arguments_are_checked() -> None:
    est = _grr_estimate([30, 20, 10])
    for level in (0.0, 1.0, 1.5):
        with pytest.raises(ValueError, match=r"level must be in \(0, 1\)"):
            est.ci(level)
    with pytest.raises(ValueError, match="method must be 'normal', 'wilson' or 'clopper-pearson'; got 'exact'"):
        est.ci(0.95, "exact")  # type: ignore[arg-type]
    post = est.consistent()
    with pytest.raises(ValueError, match=r"post-processed \(norm-sub\)"):
        post.ci(0.95)
    low, high = post.ci(0.95, "wilson")  # the rate intervals do not use standard errors
    assert np.array_equal(low, est.ci(0.95, "wilson")[0]) and np.array_equal(high, est.ci(0.95, "wilson")[1])


# ---------------------------------------------------------- numeric results


def _mean_estimate() -> dn.MeanEstimate:
    return dn.MeanEstimate("test", 1.0, mean=0.3, std_error=0.05, sample_std_error=0.08, n=100, low=0.0, high=1.0)


def test_mean_estimate_interval_uses_the_normal_quantile_of_its_level() -> None:
    from scipy import stats

    est = _mean_estimate()
    for level in (0.5, 0.9, 0.99):
        z = stats.norm.ppf(0.5 + level / 2)
        assert est.ci(level) == pytest.approx((0.3 - z * 0.05, 0.3 + z * 0.05), abs=1e-14)
    for level in (0.0, 1.0, -0.5, 2.0):
        with pytest.raises(ValueError, match=r"level must be in \(0, 1\)"):
            est.ci(level)
    assert "95% interval [0.202002, 0.397998]" in repr(est)


def test_histogram_centres_mean_cdf_and_quantiles() -> None:
    """Uneven bins [0, 1), [1, 3), [3, 4) with masses 0.2, 0.5, 0.3: values by hand."""
    h = dn.HistogramEstimate(np.array([0.0, 1.0, 3.0, 4.0]), np.array([0.2, 0.5, 0.3]), "em", 7, True)
    np.testing.assert_allclose(h.centers, [0.5, 2.0, 3.5], rtol=0, atol=0)
    assert h.mean == pytest.approx(0.2 * 0.5 + 0.5 * 2.0 + 0.3 * 3.5, abs=1e-15)
    np.testing.assert_allclose(h.cdf([0.0, 0.5, 2.0, 3.0, 3.5, 4.0, 9.0]), [0, 0.1, 0.45, 0.7, 0.85, 1, 1], atol=1e-15)
    np.testing.assert_allclose(h.quantile([0.0, 0.1, 0.45, 0.7, 0.85, 1.0]), [0, 0.5, 2.0, 3.0, 3.5, 4.0], atol=1e-14)
    for bad in (-0.01, 1.01, [0.5, 1.5]):
        with pytest.raises(ValueError, match=r"quantile levels must be in \[0, 1\]"):
            h.quantile(bad)
    assert repr(h) == "HistogramEstimate(3 bins on [0, 4], em, 7 iterations)"


def test_rate_intervals_are_clipped_to_the_unit_interval() -> None:
    """All 60 reports on category 0: its rate interval lies above p* and the others' below q*,
    so the debiased ends fall outside [0, 1] and are clipped (normal intervals are not)."""
    est = _grr_estimate([60, 0, 0])
    for method in ("wilson", "clopper-pearson"):
        low, high = est.ci(0.95, method)  # type: ignore[arg-type]
        assert low.tolist() == [1.0, 0.0, 0.0] and high.tolist() == [1.0, 0.0, 0.0]
    low, high = est.ci()  # normal at the default level 0.95
    assert low[0] > 1 and high[1] < 0
    assert (low, high) == tuple(pytest.approx(x) for x in est.ci(0.95, "normal"))


def test_repr_and_frame_show_every_column() -> None:
    est = _grr_estimate([30, 20, 10])
    low, high = est.ci(0.95)
    lines = repr(est).splitlines()
    assert lines[:4] == [
        "Estimate(GRR, epsilon=1, n=60, target=respondents)",
        "  target: the fixed set of respondents (a census)",
        "  m fake reports among these 60 could move a share by at most m \u00d7 0.0458 (2.746/n per fake report)",
        "      category  estimate  std error  95% interval",
    ]
    assert len(lines) == 7
    for i, line in enumerate(lines[4:]):
        f, se = est.frequencies[i], est.std_errors[i]  # type: ignore[index]
        assert line == f"  {i:>12}  {f: .5f}  {se:9.5f}  [{low[i]: .4f}, {high[i]: .4f}]"
    frame = est.to_frame()
    assert list(frame.columns) == ["estimate", "std_error", "ci_low", "ci_high", "observed", "target"]
    np.testing.assert_array_equal(frame["std_error"], est.std_errors)
    np.testing.assert_array_equal(frame["ci_low"], low)
    np.testing.assert_array_equal(frame["ci_high"], high)
    np.testing.assert_array_equal(frame["observed"], [0.5, 1 / 3, 1 / 6])
    assert frame.attrs == {"target": "respondents", "level": 0.95}
    assert frame["target"].tolist() == ["respondents"] * 3
    # another level moves the interval columns only
    frame90 = est.to_frame(0.9)
    np.testing.assert_array_equal(frame90["ci_low"], est.ci(0.9)[0])
    assert frame90.attrs["level"] == 0.9
    post = est.consistent("clip")
    assert list(post.to_frame().columns) == ["estimate", "observed", "target"]
    post_lines = repr(post).splitlines()
    assert post_lines[0] == "Estimate(GRR, epsilon=1, n=60, target=respondents, clip)"
    assert post_lines[2] == "      category  estimate"
    assert post_lines[3] == f"  {0:>12}  {post.frequencies[0]: .5f}"


def test_repr_of_no_reports_and_of_long_domains() -> None:
    m = dn.OUE(5, epsilon=1.0)
    empty = repr(m.estimate_from(m.aggregate([])))  # no interval to compute: the estimate is shown
    assert empty.splitlines()[3] == "             0   nan        nan  [ nan,  nan]"
    for k, tail in [(20, "            19"), (21, "  ... 1 more"), (25, "  ... 5 more")]:
        g = dn.GRR(k, epsilon=1.0)
        lines = repr(g.estimate(list(range(k)))).splitlines()
        assert len(lines) == 4 + min(k, 20) + (k > 20) and lines[-1].startswith(tail)  # + the fake-report line


def test_mean_estimate_repr() -> None:
    est = _mean_estimate()
    assert repr(est) == (
        "MeanEstimate(test, epsilon=1, n=100, target=population: mean 0.3, std error 0.05, "
        "95% interval [0.202002, 0.397998])"
    )
    h = dn.HistogramEstimate(np.array([0.0, 0.5, 1.0]), np.array([0.4, 0.6]), "ems", 3, True)
    with_h = dn.MeanEstimate("test", 1.0, 0.3, 0.05, 0.08, 100, 0.0, 1.0, delta=1e-6, histogram=h,
                             target="respondents")
    assert repr(with_h) == (
        "MeanEstimate(test, epsilon=1, delta=1e-06, n=100, target=respondents: mean 0.3, std error 0.05, "
        "95% interval [0.202002, 0.397998], HistogramEstimate(2 bins on [0, 1], ems, 3 iterations))"
    )
    assert est.ci() == est.ci(0.95)


def test_messages_of_estimates_without_intervals() -> None:
    m = dn.OUE(5, epsilon=1.0)
    with pytest.raises(ValueError, match=r"^no reports: a confidence interval needs n >= 1$"):
        m.estimate_from(m.aggregate([])).ci(0.95)
    post = _grr_estimate([30, 20, 10]).consistent("clip")
    with pytest.raises(ValueError, match=r"^this estimate is post-processed \(clip\); formula standard errors do "
                       r"not apply\. Take intervals from the unbiased estimate, "
                       r"or use ci\(\.\.\., method='wilson'\) there\.$"):
        post.ci()


def test_to_frame_without_pandas_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now raises ImportError
    with pytest.raises(ImportError, match=r"^to_frame\(\) needs pandas: pip install 'deniable\[stats\]'$"):
        _grr_estimate([30, 20, 10]).to_frame()


# ------------------------------------------------------ targets and variances


@pytest.mark.parametrize("bad", ["Population", "census", "", 1, None, ("population",)])
def test_only_the_two_targets_are_accepted(bad: object) -> None:
    from deniable._estimate import check_target

    assert [check_target(t) for t in ("population", "respondents")] == ["population", "respondents"]
    message = rf"^target must be 'population' or 'respondents'; got {re.escape(repr(bad))}$"
    with pytest.raises(ValueError, match=message):
        check_target(bad)


def test_pure_variance_defaults_to_the_population_and_matches_warner() -> None:
    """Without a target the variance is the population's, ``lambda (1 - lambda) / (n (p* - q*)^2)``
    with ``lambda = q* + (p* - q*) f`` (Warner 1965), and the respondents' is formula (A)."""
    from deniable._estimate import pure_variance

    n, p, q = 250, 0.7, 0.2
    f = np.array([0.0, 0.1, 0.45, 1.0])
    lam = q + (p - q) * f
    np.testing.assert_allclose(pure_variance(n, p, q, f), lam * (1 - lam) / (n * (p - q) ** 2), rtol=1e-13)
    fixed = (q * (1 - q) / (p - q) ** 2 + f * (1 - p - q) / (p - q)) / n
    np.testing.assert_allclose(pure_variance(n, p, q, f, "respondents"), fixed, rtol=1e-13)


def test_sampling_variance_is_float_for_both_targets() -> None:
    """``f (1 - f) / n`` for the population, float zeros of the same shape for the respondents,
    also for integer shares (0 and 1, where both are 0)."""
    from deniable._estimate import sampling_variance

    for target in ("population", "respondents"):
        v = sampling_variance(10, [0, 1, 1], target)  # type: ignore[arg-type]
        assert v.dtype == np.float64 and v.shape == (3,) and v.tolist() == [0.0, 0.0, 0.0]
    np.testing.assert_allclose(sampling_variance(8, [0.5, 0.25], "population"), [0.25 / 8, 0.1875 / 8])


def test_mle_post_processing_inside_the_simplex_is_the_unbiased_estimate() -> None:
    """GRR's support counts are multinomial with rates ``q* + (p* - q*) f``, so where the
    unbiased estimate lies inside the simplex it is the maximum-likelihood estimate too."""
    est = _grr_estimate([25, 20, 15])
    assert np.all(est.frequencies > 0) and est.frequencies.sum() == pytest.approx(1)
    mle = est.consistent("mle")
    assert mle.post_processing == "mle" and mle.target == est.target
    np.testing.assert_allclose(mle.frequencies, est.frequencies, atol=1e-6)
    assert mle.std_errors is not None and np.all(mle.std_errors > 0)
