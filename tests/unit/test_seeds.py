"""The seed numbers from the issue, reproduced exactly."""

import math

import numpy as np
import pytest

import deniable as dn


def test_binary_rr_epsilon_is_ln3() -> None:
    assert dn.BinaryRR(prob=0.75).epsilon == 1.0986122886681098


def test_grr_epsilon_is_ln9() -> None:
    assert dn.GRR(["A", "B", "C", "D"], prob=0.75).epsilon == 2.1972245773362196


def test_debias_binary() -> None:
    assert dn.debias_binary(0.364, 0.75) == pytest.approx(0.228, abs=1e-12)


def test_debias_categorical() -> None:
    got = dn.debias_categorical([0.165, 0.349, 0.284, 0.202], 0.75)
    np.testing.assert_allclose(got, [0.1225, 0.3985, 0.301, 0.178], atol=1e-9)


def test_two_coin_design_matches_textbook_estimators() -> None:
    m = dn.BinaryRR.forced_response(p_truth=0.5, p_yes=0.5)
    assert m.p_yes_given_yes == 0.75 and m.p_yes_given_no == 0.25
    assert m.epsilon == math.log(3)
    reports = np.array([True] * 364 + [False] * 636)
    est = m.estimate(reports)
    y = 0.364
    assert est.frequencies[1] == pytest.approx(2 * (y - 0.25), abs=1e-12)  # p = 2(Y - 1/4)
    assert est.frequencies[1] == pytest.approx(2 * y - 0.5, abs=1e-12)  # honor code
    assert est.frequencies[0] == pytest.approx(1 - (2 * y - 0.5), abs=1e-12)


@pytest.mark.parametrize("make", [lambda: dn.GRR(10, epsilon=math.log(3)), lambda: dn.GRR(10, prob=0.25)])
def test_single_krr_report_debiased(make) -> None:
    m = make()
    est = m.estimate([4])
    expected = np.full(10, -0.5)
    expected[4] = 5.5
    np.testing.assert_allclose(est.frequencies, expected, atol=1e-9)
