"""``dn.survey.Custom(matrix)``: any design given by its transition matrix (RRreg's "custom").

Against established designs: a Custom with Warner's, forced response's and
Kuk's matrices gives the same fits from the same answer counts (to 1e-10: the
same likelihood). The device samples each row exactly (chi-square at alpha
1e-7 per row, and the same test rejects a row 10% off); the estimate is
unbiased and its 95% Wald intervals cover (calibrated at alpha 1e-6 over
every check of the file, Bonferroni), so a correct implementation fails less
than once in a million runs, while a missing debias fails the unbiasedness
check by tens of standard errors.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import deniable as dn
from deniable.survey import Custom, design, prevalence_from_counts
from deniable.testing import chi_square_gof, coverage_check, mean_check

ALPHA = 1e-7  # per check; fewer than 10 checks in this file

THREE = [["7/10", "1/5", "1/10"], ["1/10", "7/10", "1/5"], ["1/5", "1/10", "7/10"]]


@pytest.mark.parametrize(
    ("custom", "known"),
    [
        (Custom([["3/4", "1/4"], ["1/4", "3/4"]]), design("Warner", 0.75)),
        (Custom([["5/6", "1/6"], ["1/6", "5/6"]]), design("FR", ["1/6", "1/6"])),
        (Custom([["2/5", "3/5"], ["7/10", "3/10"]]), design("Kuk", [0.3, 0.6])),  # carriers draw red w.p. 0.3
        (Custom([["4/5", "1/10", "1/10"], ["1/10", "4/5", "1/10"], ["1/10", "1/10", "4/5"]]),
         design("FR", [0.1, 0.1, 0.1])),
    ],
)
def test_a_custom_matrix_fits_as_the_named_design(custom: Custom, known: dn.survey.Design) -> None:
    assert np.allclose(custom.transition_matrix(), known.transition_matrix(), atol=1e-15)
    assert custom.epsilon == pytest.approx(known.epsilon, rel=1e-12)
    for counts in ([[620, 380]], [[900, 100]], [[30, 970]]) if known.m == 2 else ([[500, 300, 200]], [[50, 50, 900]]):
        a, b = prevalence_from_counts(np.array(counts), custom), prevalence_from_counts(np.array(counts), known)
        assert a.params == pytest.approx(b.params, abs=1e-10)
        assert a.bse == pytest.approx(b.bse, abs=1e-8)


def test_the_config_round_trip_and_its_wire_form() -> None:
    d = Custom(THREE)
    config = d.to_config()
    assert config["mechanism"] == "rr-design" and config["domain"] == [0, 1, 2]
    assert config["params"] == {"model": "Custom", "matrix": THREE}
    assert dn.from_config(config) == d and dn.from_config(config) != Custom(list(reversed(THREE)))
    assert d.epsilon == pytest.approx(math.log(7), abs=1e-12)
    assert math.isinf(Custom([["1", "0"], ["1/2", "1/2"]]).epsilon)


@pytest.mark.stat
def test_each_row_is_sampled_exactly() -> None:
    d = Custom(THREE)
    rng = np.random.default_rng(20261127)
    n = 30_000
    wrong = np.array([[0.77, 0.13, 0.1], [0.1, 0.77, 0.13], [0.13, 0.1, 0.77]])  # 10% more truth
    for state in range(3):
        answers = d.privatize_many(np.full(n, state), rng=rng)
        counts = np.bincount(answers, minlength=3)
        assert chi_square_gof(counts, d.transition_matrix()[state], ALPHA)
        assert not chi_square_gof(counts, wrong[state], ALPHA)


@pytest.mark.stat
def test_the_estimate_is_unbiased_and_its_intervals_cover() -> None:
    d = Custom(THREE)
    rng = np.random.default_rng(7)
    truth = np.array([0.5, 0.3, 0.2])
    n, reps = 2000, 400
    estimates, covered = [], np.zeros(3, dtype=int)
    for _ in range(reps):
        fit = d.estimate(d.privatize_many(rng.choice(3, n, p=truth), rng=rng))
        est = np.array([fit.params[f"pi{j}"] for j in range(3)])
        estimates.append(est)
        se = np.array([fit.bse[f"pi{j}"] for j in range(3)])
        covered += np.abs(est - truth) <= 1.959964 * se
    assert mean_check(np.array(estimates), truth, ALPHA)
    raw = np.array(estimates) @ d.transition_matrix()  # what a missing debias would report
    assert not mean_check(raw, truth, ALPHA)
    for j in range(3):
        assert coverage_check(int(covered[j]), reps, 0.95, ALPHA)


@pytest.mark.parametrize(
    ("matrix", "message"),
    [
        ([["1/2", "1/2"]], "at least 2 rows"),
        ([["1/2", "1/2"], ["1"]], "at least 2 rows"),
        ([["1/2", "1/3"], ["1/2", "1/2"]], "row 0 must sum to exactly 1"),
        ([["1/2", "1/2"], ["1/2", "1/2"]], "linearly independent"),
        ([["3/2", "-1/2"], ["1/2", "1/2"]], r"matrix\[0\]\[0\] must be in \[0, 1\]"),
        (5, "rows of probabilities"),
    ],
)
def test_a_bad_matrix_is_refused_naming_what_is_wrong(matrix: object, message: str) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        Custom(matrix)


def test_truth_outside_the_states_is_refused() -> None:
    with pytest.raises(ValueError, match="categories 0..2 for Custom"):
        Custom(THREE).privatize_many([0, 3])
    with pytest.raises(ValueError, match="truth must be booleans"):
        Custom([["3/4", "1/4"], ["1/4", "3/4"]]).privatize_many(["no"])
