"""``dn.compare`` and its helpers: the corrections against statsmodels, the result shape, means, slices,
and comparisons refused naming the argument at fault."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import deniable as dn
from deniable._compare import covariance


def test_corrections_match_statsmodels() -> None:
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    p = np.array([0.01, 0.04, 0.03, 0.2, 0.001, 0.04, 0.9])
    for ours, theirs in (("holm", "holm"), ("bh", "fdr_bh")):
        np.testing.assert_allclose(dn.adjust_p_values(p, ours), multitest.multipletests(p, method=theirs)[1])
    np.testing.assert_array_equal(dn.adjust_p_values(p, "none"), p)
    with pytest.raises(ValueError, match="correction must be 'holm', 'bh' or 'none'; got 'bonf'"):
        dn.adjust_p_values(p, "bonf")
    with pytest.raises(ValueError, match="p_values must be"):
        dn.adjust_p_values([0.5, 1.5])


def test_frequency_comparison_shape(rng: np.random.Generator) -> None:
    m = dn.GRR(["a", "b", "c"], epsilon=2.0)
    arm = rng.choice(["A", "B"], 6000)
    skewed = rng.choice(["a", "b", "c"], 6000, p=[0.5, 0.3, 0.2])
    values = np.where(arm == "A", skewed, rng.choice(["a", "b", "c"], 6000))
    sl = m.estimate(m.privatize_many(values, rng=rng), by=arm)
    cmp = dn.compare(sl["A"], sl["B"], correction="bh")
    np.testing.assert_allclose(cmp.difference, sl["A"].frequencies - sl["B"].frequencies)
    np.testing.assert_allclose(cmp.std_errors, np.hypot(sl["A"].std_errors, sl["B"].std_errors))
    frame = cmp.to_frame()
    assert list(frame.columns) == ["category", "estimate", "std_error", "ci_low", "ci_high", "p_value", "p_adjusted"]
    data = cmp.to_dict()
    assert data["correction"] == "bh" and data["chi_square"]["df"] == 2 and data["n_a"] == sl["A"].n
    assert cmp.chi_square is not None and cmp.chi_square.p_value < 1e-6
    assert "difference a - b" in cmp._repr_html_()


def test_mean_comparison(rng: np.random.Generator) -> None:
    m = dn.Duchi(0, 10, epsilon=1.0)
    a = m.estimate(m.privatize_many(np.full(4000, 6.0), rng=rng))
    b = m.estimate(m.privatize_many(np.full(4000, 4.0), rng=rng))
    cmp = dn.compare(a, b)
    assert cmp.difference == pytest.approx(a.mean - b.mean)
    assert cmp.std_error == pytest.approx(np.hypot(a.std_error, b.std_error))
    assert cmp.chi_square is None and cmp.to_frame().shape[0] == 1


def test_covariance_only_where_closed_form(rng: np.random.Generator) -> None:
    for m, df in ((dn.BinaryRR(epsilon=1.0), 1), (dn.GRR(4, epsilon=1.0), 3), (dn.SUE(4, epsilon=1.0), 4)):
        est = m.estimate(m.privatize_many(m.domain[:1] * 100, rng=rng))
        assert covariance(est)[1] == df  # type: ignore[index]
    olh = dn.OLH(4, epsilon=1.0)
    est = olh.estimate(olh.privatize_many([0] * 100, rng=rng))
    assert covariance(est) is None and dn.compare(est, est).chi_square is None


def test_refusals_name_the_argument(rng: np.random.Generator) -> None:
    m = dn.GRR(3, epsilon=1.0)
    a = m.estimate(m.privatize_many([0] * 50, rng=rng))
    other = dn.GRR(3, epsilon=2.0)
    with pytest.raises(ValueError, match="b was estimated with another mechanism than a"):
        dn.compare(a, other.estimate(other.privatize_many([0] * 50, rng=rng)))
    with pytest.raises(ValueError, match="b's target is 'respondents'"):
        dn.compare(a, m.estimate(m.privatize_many([0] * 50, rng=rng), target="respondents"))
    with pytest.raises(ValueError, match="b must be a Estimate like a; got MeanEstimate"):
        d = dn.Duchi(0, 1, epsilon=1.0)
        dn.compare(a, d.estimate(d.privatize_many([0.5] * 50, rng=rng)))
    with pytest.raises(ValueError, match="b has no reports"):
        dn.compare(a, m.estimate(np.array([], dtype=np.int64)))
    with pytest.raises(TypeError, match="a must be an Estimate or a MeanEstimate"):
        dn.compare([0.1], a)
    with pytest.raises(ValueError, match="correction must be"):
        dn.compare(a, a, correction="bonferroni")
    with pytest.raises(ValueError, match="not post-processed"):
        dn.compare(a.consistent(), a.consistent())


def test_difference_sample_size_rules() -> None:
    m = dn.GRR(2, epsilon=1.0)
    n = dn.difference_sample_size(m, 0.30, 0.36)
    assert n > 0 and dn.difference_sample_size(m, 0.30, 0.42) < n / 3
    assert dn.difference_sample_size(dn.Duchi(0, 10, epsilon=1.0), 4.0, 5.0) > 0
    with pytest.raises(ValueError, match="must differ"):
        dn.difference_sample_size(m, 0.3, 0.3)
    with pytest.raises(ValueError, match="frequency_b must be in"):
        dn.difference_sample_size(m, 0.3, 1.3)
    with pytest.raises(ValueError, match="power must be in"):
        dn.difference_sample_size(m, 0.3, 0.4, power=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dn.difference_sample_size(m, 0.3, 0.4, level=0.99)


def test_slices_compared_with_a_reference(rng: np.random.Generator) -> None:
    m = dn.GRR(["a", "b", "c"], epsilon=2.0)
    arm = rng.choice(["A", "B", "C"], 9000)
    skewed = rng.choice(["a", "b", "c"], 9000, p=[0.5, 0.3, 0.2])
    values = np.where(arm == "C", skewed, rng.choice(["a", "b", "c"], 9000))
    sl = m.estimate(m.privatize_many(values, rng=rng), by=arm)
    both = dn.compare(sl, reference="A", correction="bh")
    assert set(both.comparisons) == {"B", "C"} and both.reference == "A"
    pairwise = {label: dn.compare(sl[label], sl["A"], "none") for label in ("B", "C")}
    np.testing.assert_allclose(both["C"].difference, pairwise["C"].difference)
    flat = np.concatenate([pairwise["B"].p_values, pairwise["C"].p_values])
    np.testing.assert_allclose(np.concatenate([both["B"].p_adjusted, both["C"].p_adjusted]),
                               dn.adjust_p_values(flat, "bh"))
    frame = both.to_frame()
    assert list(frame["slice"]) == ["B"] * 3 + ["C"] * 3 and "chi_square_p_adjusted" in frame.columns
    assert both.chi_square_adjusted["C"] < 1e-6 and dn.compare(sl).reference == "A"
    with pytest.raises(ValueError, match="reference must be one of the slices"):
        dn.compare(sl, reference="D")
    with pytest.raises(ValueError, match="b must be left out"):
        dn.compare(sl, sl["A"])
    with pytest.raises(TypeError, match="compare needs two estimates"):
        dn.compare(sl["A"])
    one = m.estimate(m.privatize_many(["a"] * 300, rng=rng), by=["x"] * 300)
    with pytest.raises(ValueError, match="needs two slices or more"):
        dn.compare(one)
