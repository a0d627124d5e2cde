"""Survey designs: matrices and epsilon as SURVEY.md defines them, the device sampler, bad input.

The sampler tests are calibrated: each chi-square goodness-of-fit test of one
(design, group, state) column runs at alpha = 1e-7, and there are fewer than
100 of them in this file, so the file fails falsely with probability below
1e-5 (Bonferroni). Power: the same test rejects a design whose ``p`` is off
by 0.05 (``test_sampler_check_has_power``).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from survey_cases import CASES, IDS, build

import deniable as dn
import deniable.survey as sv
from deniable.testing import chi_square_gof

ALPHA = 1e-7
N = 20_000


def _m(rows: list[list[float]]) -> np.ndarray:
    return np.array(rows, dtype=float)


# (model, p, group, extra, expected [P(0|0) P(0|1) ...; P(1|0) P(1|1) ...]) as SURVEY.md writes them
MATRICES = [
    ("Warner", 0.7, 1, None, _m([[0.7, 0.3], [0.3, 0.7]])),
    ("Crosswise", 0.25, 1, None, _m([[0.25, 0.75], [0.75, 0.25]])),
    ("Triangular", 0.3, 1, None, _m([[0.7, 0], [0.3, 1]])),
    ("Mangat", 0.6, 1, None, _m([[0.6, 0], [0.4, 1]])),
    ("Kuk", (0.7, 0.2), 1, None, _m([[0.8, 0.3], [0.2, 0.7]])),
    ("UQTknown", (0.7, 0.2), 1, None, _m([[1 - 0.3 * 0.2, 0.3 * 0.8], [0.3 * 0.2, 0.7 + 0.3 * 0.2]])),
    ("UQTunknown", (0.7, 0.4), 2, 0.25, _m([[1 - 0.6 * 0.25, 0.6 * 0.75], [0.6 * 0.25, 0.4 + 0.6 * 0.25]])),
    ("FR", (0.1, 0.2), 1, None, _m([[1 - 0.2, 0.1], [0.2, 1 - 0.1]])),
    ("SLD", (0.3, 0.7), 2, 0.8, _m([[0.7, 0.2], [0.3, 0.8]])),
    # CDM / CDMsym: columns non-carrier, carrier, cheater
    ("CDM", (0.2, 0.6), 2, None, _m([[0.4, 0, 1], [0.6, 1, 0]])),
    ("CDMsym", (0.2, 0.3, 0.4, 0.1), 1, None, _m([[0.8, 0.3, 1], [0.2, 0.7, 0]])),
    ("CDMsym", (0.2, 0.3, 0.4, 0.1), 2, None, _m([[0.6, 0.1, 1], [0.4, 0.9, 0]])),
    ("FR", (0.1, 0.2, 0.3), 1, None, _m([[0.5, 0.1, 0.1], [0.2, 0.6, 0.2], [0.3, 0.3, 0.7]])),
]


@pytest.mark.parametrize(("model", "p", "group", "extra", "expected"), MATRICES)
def test_matrix_is_surveys_getpw(model: str, p: object, group: int, extra: float | None, expected: np.ndarray) -> None:
    got = sv.design(model, p).matrix(group, extra=extra)
    np.testing.assert_allclose(got, expected, atol=1e-15)
    np.testing.assert_allclose(got.sum(axis=0), 1.0, atol=1e-15)


def test_kuk_cards_matrix_is_binomial() -> None:
    from scipy.stats import binom

    got = sv.Kuk((0.7, 0.3), cards=3).matrix()
    np.testing.assert_allclose(got[:, 1], binom.pmf(range(4), 3, 0.7), rtol=1e-12)
    np.testing.assert_allclose(got[:, 0], binom.pmf(range(4), 3, 0.3), rtol=1e-12)


# SURVEY.md section 4, at its example values
EPSILONS = [
    (sv.Warner(0.7), math.log(7 / 3)),
    (sv.Crosswise(0.25), math.log(3)),
    (sv.Kuk((0.7, 0.3)), math.log(7 / 3)),
    (sv.Kuk((0.7, 0.3), cards=3), 3 * math.log(7 / 3)),
    (sv.UnrelatedQuestion((0.7, "1/12")), math.log(29)),
    (sv.ForcedResponse(("1/6", "1/6")), math.log(5)),
    (sv.ForcedResponse((0.1, 0.2, 0.3)), math.log(1 + 0.4 / 0.1)),
    (sv.SymmetricCheatingDetection((0.2, 0.3, 0.4, 0.1)), math.log(6)),
    (sv.Triangular(0.3), math.inf),
    (sv.Mangat(0.6), math.inf),
    (sv.StochasticLieDetector((0.3, 0.7)), math.inf),
    (sv.CheatingDetection((0.2, 0.6)), math.inf),
    (sv.UnrelatedQuestionUnknown((0.7, 0.3)), math.inf),
]


@pytest.mark.parametrize(("d", "eps"), EPSILONS, ids=[repr(d.model) for d, _ in EPSILONS])
def test_epsilon_at_surveys_example_values(d: sv.Design, eps: float) -> None:
    if math.isinf(eps):
        assert d.epsilon == math.inf
        assert "reveals the truth" in repr(d)
    else:
        # rounded up from the exact integers, never below the true value
        assert eps <= d.epsilon <= eps * (1 + 1e-12)
        assert "reveals" not in repr(d)


def test_epsilon_of_unrelated_question_at_a_prevalence() -> None:
    d = sv.UnrelatedQuestionUnknown((0.7, 0.3))
    a = 0.266
    g1, g2 = (
        max(math.log((pg + (1 - pg) * a) / ((1 - pg) * a)), math.log((1 - (1 - pg) * a) / ((1 - pg) * (1 - a))))
        for pg in (0.7, 0.3)
    )
    assert d.epsilon_at(a) == pytest.approx(max(g1, g2), rel=1e-12)
    assert abs(g1 - 2.279) < 1e-3 and abs(g2 - 0.960) < 1e-3  # SURVEY.md's figures, to its digits


@pytest.mark.parametrize(("model", "p", "cards", "truth"), CASES, ids=IDS)
def test_epsilon_is_the_matrix_log_ratio(model: str, p: object, cards: int, truth: dict[str, float]) -> None:
    """Finite epsilon = max over answers and groups of |ln P(r|j) / P(r|j')| over compliant states."""
    d = build(model, p, cards)
    if math.isinf(d.epsilon):
        return
    worst = 0.0
    for g in range(1, d.groups + 1):
        m = d.matrix(g, extra=truth.get(d.extra or "", None))
        compliant = m[:, : 2 if d.extra == "gamma" else m.shape[1]]
        lg = np.log(compliant)
        worst = max(worst, float((lg.max(axis=1) - lg.min(axis=1)).max()))
    assert d.epsilon == pytest.approx(worst, rel=1e-9)


def test_one_implementation_with_binary_rr() -> None:
    """Warner is BinaryRR(prob=p); two-category FR is BinaryRR.forced_response: the same channel."""
    assert sv.Warner(0.75).mechanism == dn.BinaryRR(prob=0.75)
    assert sv.ForcedResponse(("1/6", "1/6")).mechanism == dn.BinaryRR.forced_response(p_truth=Fraction(2, 3), p_yes=0.5)
    assert sv.design("Crosswise", 0.75).mechanism == dn.BinaryRR(prob=0.75)
    cfg = sv.Mangat(0.6).mechanism.to_config()
    assert dn.from_config(cfg) == sv.Mangat(0.6).mechanism and dn.from_config(cfg).epsilon == math.inf


def _states(d: sv.Design) -> list[int]:
    return list(range(d.m)) if isinstance(d, sv.ForcedResponse) and d.m > 2 else [0, 1]


@pytest.mark.stat
@pytest.mark.parametrize(("model", "p", "cards", "truth"), CASES, ids=IDS)
def test_sampler_matches_matrix(
    model: str, p: object, cards: int, truth: dict[str, float], rng: np.random.Generator
) -> None:
    """Each compliant (group, state) column: the device's answers fit P(. | state) (chi-square, alpha 1e-7)."""
    d = build(model, p, cards)
    for g in range(1, d.groups + 1):
        for state in _states(d):
            truth_arr = np.full(N, state) if len(_states(d)) > 2 else np.full(N, bool(state))
            groups = None if d.groups == 1 else np.full(N, g)
            extra = None
            unrelated = None
            if model == "UQTunknown":  # the respondent's unrelated answer: "yes" at rate piUQ
                unrelated = rng.random(N) < truth["piUQ"]
                extra = truth["piUQ"]
            elif model == "SLD":
                extra = 1.0  # a compliant carrier says "yes"
            answers = d.privatize_many(truth_arr, groups, rng=rng, unrelated=unrelated)
            observed = np.bincount(np.asarray(answers, dtype=np.int64), minlength=len(d.responses))
            expected = d.matrix(g, extra=extra)[:, state]
            if expected.max() == 1:  # a certain answer (a compliant carrier's "yes")
                assert observed[np.argmax(expected)] == N
                continue
            result = chi_square_gof(observed, expected, ALPHA, label=f"{model} group {g} state {state}")
            assert result, str(result)


@pytest.mark.stat
def test_sampler_check_has_power(rng: np.random.Generator) -> None:
    """A device that randomizes with p off by 0.05 fails the same check."""
    answers = sv.Warner(0.75).privatize_many(np.ones(N, dtype=bool), rng=rng)
    observed = np.bincount(answers.astype(np.int64), minlength=2)
    assert not chi_square_gof(observed, sv.Warner(0.7).matrix()[:, 1], ALPHA)
    counts = np.bincount(
        sv.ForcedResponse((0.1, 0.15, 0.05)).privatize_many(np.zeros(N, dtype=np.int64), rng=rng), minlength=3
    )
    assert not chi_square_gof(counts, sv.ForcedResponse((0.15, 0.1, 0.05)).matrix()[:, 0], ALPHA)


def test_secure_default_and_single_answers() -> None:
    d = sv.StochasticLieDetector((0.3, 0.7))
    out = d.privatize_many([True, False, True], group=[1, 2, 2])
    assert out.dtype == bool and out.shape == (3,)
    assert out[0] and out[2]  # a compliant carrier always says "yes"
    assert d.privatize(True, group=1) is True
    assert sv.Kuk((0.7, 0.3), cards=4).privatize_many([True, False]).dtype == np.int64
    assert sv.Warner(0.7).privatize(False, rng=1) in (True, False)


BAD = [
    (lambda: sv.design("Warner", 1.2), ValueError, r"p must be in \[0, 1\] for Warner; got 1.2"),
    (lambda: sv.design("Warner", 0.5), ValueError, "carry no information"),
    (lambda: sv.design("Kuk", 0.5), ValueError, r"p must have 2 values for Kuk"),
    (lambda: sv.design("CDMsym", (0.1, 0.2)), ValueError, r"p must have 4 values for CDMsym"),
    (lambda: sv.design("FR", (0.5, 0.5)), ValueError, "add up to less than 1"),
    (lambda: sv.design("FR", (0.5,)), ValueError, "at least 2"),
    (lambda: sv.design("SLD", (0.3, 0.3)), ValueError, "two different values"),
    (lambda: sv.design("warner", 0.7), ValueError, "model must be one of Warner"),
    (lambda: sv.design("Warner", 0.7, Kukrep=2), ValueError, "Kukrep applies to the Kuk model only"),
    (lambda: sv.design("Kuk", (0.7, 0.3), Kukrep=0), ValueError, "cards"),
    (lambda: sv.design("FR", ("1/6", "x")), ValueError, "fraction like 1/6"),
    (lambda: sv.design("Warner", None), TypeError, "p must be a number or a sequence"),
]


@pytest.mark.parametrize(("call", "exc", "match"), BAD)
def test_bad_input_names_the_argument(call: object, exc: type[Exception], match: str) -> None:
    with pytest.raises(exc, match=match):
        call()  # type: ignore[operator]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"truth": [True], "group": [3]}, r"group must be 1 or 2 for SLD; got 3 at position 0"),
        ({"truth": [True, False], "group": [1]}, "one entry per respondent"),
        ({"truth": [2], "group": [1]}, "truth must be booleans"),
        ({"truth": [[True]], "group": [1]}, "1-D"),
    ],
)
def test_bad_device_input(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        sv.StochasticLieDetector((0.3, 0.7)).privatize_many(**kwargs)


def test_unknown_unrelated_question_needs_the_answer() -> None:
    with pytest.raises(ValueError, match="unrelated="):
        sv.UnrelatedQuestionUnknown((0.7, 0.3)).privatize_many([True], group=[1])


def test_one_group_design_refuses_groups() -> None:
    with pytest.raises(ValueError, match="one group"):
        sv.Warner(0.7).privatize_many([True], group=[2])
    with pytest.raises(ValueError, match="use channel"):
        _ = sv.CheatingDetection((0.2, 0.6)).mechanism
