"""Binary randomized response and forced response: parameters, epsilon, the textbook estimators.

Also: Binary randomized response: its constructors, report checks, support counts and config checks.

Deterministic: exact values and whole error messages.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mechanism_grid import BAD_EPSILONS

import deniable as dn
from deniable.errors import ConfigError
from deniable.wire import from_config


@pytest.mark.parametrize(("eps", "exc", "message"), BAD_EPSILONS, ids=[repr(e) for e, *_ in BAD_EPSILONS])
def test_bad_epsilon_binary(eps, exc, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(exc, match=message.format(name="BinaryRR")):
        dn.BinaryRR(epsilon=eps)


@pytest.mark.parametrize(
    ("kwargs", "exc", "message"),
    [
        ({"prob": 0.4}, ValueError, r"^prob must be in \(0\.5, 1\) for BinaryRR; got 0\.4$"),
        ({"prob": 0.5}, ValueError, r"prob must be in \(0\.5, 1\) for BinaryRR; got 0\.5"),
        ({"prob": 1.0}, ValueError, r"prob must be in \(0\.5, 1\) for BinaryRR; got 1\.0"),
        ({"prob": 1}, ValueError, r"prob must be in \(0\.5, 1\) for BinaryRR; got 1"),
        ({"prob": float("nan")}, ValueError, "prob must be in"),
        ({"prob": float("inf")}, ValueError, "prob must be in"),
        ({"prob": "0.75"}, TypeError, "prob must be a number"),
        ({"prob": True}, TypeError, "prob must be a number"),
        ({"prob": 0.75, "epsilon": 1.0}, TypeError, "exactly one of prob, epsilon or gamma; got prob, epsilon"),
    ],
)
def test_binary_rr_parameters(kwargs, exc, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(exc, match=message):
        dn.BinaryRR(**kwargs)


@pytest.mark.parametrize(
    ("p_truth", "p_yes", "name"),
    [(0.0, 0.5, "p_truth"), (1.0, 0.5, "p_truth"), (0.5, 0.0, "p_yes"), (0.5, 1.0, "p_yes"),
     (float("nan"), 0.5, "p_truth"), (0.5, -0.2, "p_yes")],
)
def test_forced_response_parameters(p_truth: float, p_yes: float, name: str) -> None:
    with pytest.raises(ValueError, match=f"{name} must be in"):
        dn.BinaryRR.forced_response(p_truth, p_yes)


@given(st.floats(min_value=0.0, max_value=1.0, allow_nan=False))
@settings(max_examples=200, deadline=None)
def test_prob_parameter_space(prob: float) -> None:
    try:
        m = dn.BinaryRR(prob=prob)
    except ValueError as exc:
        assert str(exc) == f"prob must be in (0.5, 1) for BinaryRR; got {prob!r}"
        assert not 0.5 < prob < 1
        return
    assert 0.5 < prob < 1 and m.epsilon > 0
    assert m.prob == Fraction(repr(prob))


def test_binary_rr_epsilon_is_ln3() -> None:
    assert dn.BinaryRR(prob=0.75).epsilon == 1.0986122886681098


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


def test_forced_response_variance() -> None:
    """Asymmetric forced response: Var = l(1-l)/(n (P(yes|T)-P(yes|F))^2) at the fixed population."""
    m = dn.BinaryRR.forced_response(0.3, 0.8)
    yt, yf = 0.86, 0.56
    for pi in (0.0, 0.3, 1.0):
        lam_t, lam_f = yt, yf  # per-respondent yes rates
        var = (pi * lam_t * (1 - lam_t) + (1 - pi) * lam_f * (1 - lam_f)) / (yt - yf) ** 2
        assert m.variance(1, [1 - pi, pi], target="respondents")[1] == pytest.approx(var, rel=1e-12)


def test_support_counts_of_every_report_form() -> None:
    m = dn.BinaryRR(prob=0.75)
    assert m.aggregate([True, False, True]).counts.tolist() == [1, 2]
    assert m.aggregate(np.array([True, False, False], dtype=object)).counts.tolist() == [2, 1]
    assert m.aggregate(np.array([False, False, False, True])).counts.tolist() == [3, 1]
    stat = m.aggregate([False] * 5)
    assert stat.counts.tolist() == [5, 0] and stat.counts.dtype == np.int64 and stat.n == 5
    # the first value that is not a boolean, as given (numpy would read [True, "yes"] as the strings "True", "yes")
    for bad, shown in [(np.array([True, 1], dtype=object), "1"), (np.array([True, "yes"], dtype=object), "'yes'"),
                       ([True, "yes"], "'yes'"), ((False, 0.0), "0.0"), (np.array([1, 0]), "1"),
                       ([True, None], "None"), (np.array([None, True], dtype=object), "None")]:
        with pytest.raises(ValueError, match=rf"^BinaryRR reports must be booleans \(true/false\); got {shown}$"):
            m.aggregate(bad)


def test_simulated_counts_add_up() -> None:
    m = dn.BinaryRR(prob=0.75)
    counts = m.simulate_support_counts(np.array([3, 5]), np.random.default_rng(1))
    assert counts.dtype == np.int64 and counts.shape == (2,) and counts.sum() == 8 and (counts >= 0).all()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, r"^BinaryRR needs exactly one of prob, epsilon or gamma; got none$"),
        ({"prob": 0.7, "gamma": 0.1}, r"^BinaryRR needs exactly one of prob, epsilon or gamma; got prob, gamma$"),
        ({"epsilon": 1.0, "gamma": 0.1}, r"^BinaryRR needs exactly one of prob, epsilon or gamma; got epsilon, gamma$"),
    ],
)
def test_exactly_one_parameter(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(TypeError, match=message):
        dn.BinaryRR(**kwargs)


def test_parameter_ranges_name_the_parameter() -> None:
    assert dn.BinaryRR(gamma=0.1).p_yes_given_yes == Fraction(3, 5)
    assert dn.BinaryRR(gamma=Fraction(1, 4)).p_yes_given_no == Fraction(1, 4)
    for gamma in (0, 0.5, -0.1):
        with pytest.raises(ValueError, match=rf"^gamma must be in \(0, 0.5\) for BinaryRR; got {gamma}$"):
            dn.BinaryRR(gamma=gamma)
    with pytest.raises(ValueError, match=r"^epsilon must be a positive finite number for BinaryRR; got 0$"):
        dn.BinaryRR(epsilon=0)
    with pytest.raises(ValueError, match=r"^p_truth must be in \(0, 1\) for forced_response; got 1.0$"):
        dn.BinaryRR.forced_response(1.0, 0.5)
    with pytest.raises(ValueError, match=r"^p_yes must be in \(0, 1\) for forced_response; got 0.0$"):
        dn.BinaryRR.forced_response(0.5, 0.0)
    with pytest.raises(ValueError, match=r"^value 'maybe' is not in the domain of BinaryRR: \[False, True\]$"):
        dn.BinaryRR(prob=0.75).privatize("maybe")


def test_config_numerators_are_checked() -> None:
    config = dn.BinaryRR(prob=0.75).to_config()
    assert config["params"] == {"denominator": 4, "yes_numerators": [1, 3]}
    assert from_config(config) == dn.BinaryRR(prob=0.75)
    # any channel with two different numerators in [0, denominator] is a design's channel (survey designs)
    for numerators, eps in (([0, 3], math.inf), ([3, 1], math.log(3)), ([1, 4], math.inf), ([4, 1], math.inf),
                            ([3, 0], math.inf)):  # the ends 0 and the denominator, for either truth
        channel = dn.BinaryRR.channel(Fraction(numerators[1], 4), Fraction(numerators[0], 4))
        assert channel.to_config()["params"] == {"denominator": 4, "yes_numerators": numerators}
        assert from_config(channel.to_config()) == channel and channel.epsilon == pytest.approx(eps)
    for numerators in ([2, 2], [5, 1], [-1, 3]):
        bad = dict(config, params={"denominator": 4, "yes_numerators": numerators})
        message = r"^BinaryRR params need two different yes_numerators in \[0, denominator\]"
        with pytest.raises(ConfigError, match=message):
            from_config(bad)


@pytest.mark.stat
def test_simulated_yes_counts_follow_the_binomials() -> None:
    """20,000 respondents all "no", then all "yes" (forced response, P(yes | no) = 0.1,
    P(yes | yes) = 0.8): the simulated yes count is Binomial(20,000, P(yes | truth)), checked with an
    exact binomial band at alpha 5e-7 for each truth (fixed seed). Power: the other truth's
    probability (0.1 against 0.8, 140 standard deviations apart) fails it."""
    from deniable.testing import proportion_check

    m = dn.BinaryRR.forced_response(p_truth=0.7, p_yes=1 / 3)
    p_no, p_yes = float(m.p_yes_given_no), float(m.p_yes_given_yes)
    assert (p_no, p_yes) == pytest.approx((0.1, 0.8))
    rng = np.random.default_rng(5)
    for truth, (right, wrong) in [(0, (p_no, p_yes)), (1, (p_yes, p_no))]:
        true_counts = np.array([20_000, 0]) if truth == 0 else np.array([0, 20_000])
        no, yes = (int(c) for c in m.simulate_support_counts(true_counts, rng))
        assert no + yes == 20_000
        assert proportion_check(yes, 20_000, right, 1e-6 / 2).passed
        assert not proportion_check(yes, 20_000, wrong, 1e-6 / 2).passed


def test_a_report_as_json_is_a_boolean() -> None:
    m = dn.BinaryRR(prob=0.75)
    for report in (True, False, np.True_, np.False_):
        assert m.report_to_json(report) is bool(report)
    assert m.reports_to_json([True, False]) == [True, False]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((1.5, 0.5), r"p_yes_given_yes must be in \[0, 1\] for BinaryRR\.channel; got 1\.5"),
        ((0.5, -0.25), r"p_yes_given_no must be in \[0, 1\] for BinaryRR\.channel; got -0\.25"),
        ((0.5, "x"), r"p_yes_given_no must be a number or a fraction like 1/6 for BinaryRR\.channel; got 'x'"),
        (("1/3", "2/6"), r"p_yes_given_yes and p_yes_given_no must differ for BinaryRR\.channel \(else the answer "
                         r"carries no information\); got both 1/3"),
    ],
)
def test_channel_messages_name_the_parameter(args: tuple[Any, Any], message: str) -> None:
    with pytest.raises(ValueError, match=rf"^{message}$"):
        dn.BinaryRR.channel(*args)


def test_repr_says_when_an_answer_reveals_the_truth() -> None:
    assert repr(dn.BinaryRR(prob=0.75)) == "BinaryRR(P(yes|yes)=0.75, P(yes|no)=0.25, epsilon=1.09861)"
    assert repr(dn.BinaryRR.channel(1, "1/3")) == (
        "BinaryRR(P(yes|yes)=1, P(yes|no)=0.333333, epsilon=inf: an answer reveals the truth)"
    )
