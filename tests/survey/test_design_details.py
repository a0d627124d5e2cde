"""Survey designs, the details: whole error messages, defaults, equality, seeded reproducibility, exact boundaries.

Everything here is deterministic (seeded simulation generators, exact
fractions). The reproducibility test is the one check with chance in it, and
only against a wrong design: one that ignored the seed and drew from the OS
CSPRNG would repeat its 200 answers with probability below 1e-14 for every
design here (at least 100 of them are random, each repeating with
probability at most 0.72, FR's (5/6)^2 + (1/6)^2).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from scripted import Scripted
from survey_cases import CASES, IDS, build

import deniable.survey as sv

_SLD = sv.StochasticLieDetector((0.3, 0.7))


def _exact(message: str) -> str:
    return "^" + re.escape(message) + "$"


WRONG_COUNT = [
    ("Warner", (0.7, 0.3), "p must have 1 value for Warner (P(sensitive statement)); got 2"),
    ("Crosswise", (0.7, 0.3), "p must have 1 value for Crosswise (prevalence of the innocuous yes); got 2"),
    ("Triangular", (0.7, 0.3), "p must have 1 value for Triangular (prevalence of the innocuous yes); got 2"),
    ("Mangat", (0.7, 0.3), "p must have 1 value for Mangat (P(a non-carrier answers no)); got 2"),
    ("UQTknown", 0.7, "p must have 2 values for UQTknown (P(sensitive question), known unrelated prevalence); got 1"),
    ("Kuk", 0.7, "p must have 2 values for Kuk (red share of deck 1 and deck 2); got 1"),
    ("UQTunknown", 0.7, "p must have 2 values for UQTunknown (P(sensitive question) in group 1 and group 2); got 1"),
    ("SLD", 0.7, "p must have 2 values for SLD (P(non-carrier answers no) in group 1 and group 2); got 1"),
    ("CDM", 0.7, "p must have 2 values for CDM (P(prompted to say yes) in group 1 and group 2); got 1"),
    ("CDMsym", (0.1, 0.2),
     "p must have 4 values for CDMsym (forced yes / forced no in group 1, then in group 2); got 2"),
]


@pytest.mark.parametrize(("model", "p", "message"), WRONG_COUNT, ids=[c[0] for c in WRONG_COUNT])
def test_wrong_number_of_probabilities_names_their_meaning(model: str, p: object, message: str) -> None:
    with pytest.raises(ValueError, match=_exact(message)):
        sv.design(model, p)


REFUSED = [
    (lambda: sv.design("FR", (1.2, 0.1)), "p must be in [0, 1] for FR; got 1.2"),
    (lambda: sv.Warner(0.5), "p gives P(yes | carrier) = P(yes | non-carrier) = 1/2 for Warner: "
                             "the answers carry no information"),
    (lambda: sv.design("warner", 0.7), "model must be one of Warner, UQTknown, UQTunknown, Mangat, Kuk, FR, "
                                       "Crosswise, Triangular, CDM, CDMsym, SLD; got 'warner'"),
    (lambda: sv.UnrelatedQuestion((0, 0.3)), "p[0] (P(sensitive question)) must be in (0, 1] for UQTknown; got 0"),
    (lambda: sv.Kuk((0.7, 0.3), cards=True), "cards (RRreg's Kukrep) must be a positive integer for Kuk; got True"),
    (lambda: sv.ForcedResponse((0.5, 0.5)), "p must add up to less than 1 for FR (the rest is the truthful answer); "
                                            "got sum 1"),
    (lambda: sv.UnrelatedQuestionUnknown((0.3, 0.3)),
     "p must differ between the groups for UQTunknown; got (0.3, 0.3)"),
    (lambda: sv.UnrelatedQuestionUnknown((0, 0.2)).epsilon_at(1.5), "piUQ must be in [0, 1] for UQTunknown; got 1.5"),
    (lambda: sv.CheatingDetection((1, 0.5)), "p must be two different values in [0, 1) for CDM; got (1, 0.5)"),
    (lambda: sv.CheatingDetection((0.5, 0.5)), "p must be two different values in [0, 1) for CDM; got (0.5, 0.5)"),
    (lambda: sv.SymmetricCheatingDetection((0.2, 0.3, 0.2, 0.3)),
     "p must make the two groups differ for CDMsym; got (0.2, 0.3, 0.2, 0.3)"),
    (lambda: _SLD.matrix(1), "SLD's matrix depends on t: pass extra="),
    (lambda: sv.Warner(0.7).matrix(0), "group must be 1 for Warner; got 0"),
    (lambda: sv.Warner(0.7).matrix(2), "group must be 1 for Warner; got 2"),
    (lambda: sv.Kuk((0.7, 0.3)).channel(2), "group must be 1 for Kuk; got 2"),
    (lambda: _SLD.matrix(3, extra=0.5), "group must be 1 or 2 for SLD; got 3"),
    (lambda: _SLD.matrix(0, extra=0.5), "group must be 1 or 2 for SLD; got 0"),
    (lambda: _SLD.privatize_many([True, False], group=[True, False]),
     "group must be 1 or 2 for SLD; got True at position 0"),
    (lambda: sv.Warner(0.7).privatize_many([True], group=[2]), "Warner has one group; group must be None (or all 1)"),
    (lambda: sv.ForcedResponse((0.1, 0.2)).privatize_many([True], group=[2]),
     "FR has one group; group must be None (or all 1)"),
    (lambda: sv.ForcedResponse((0.1, 0.2, 0.3)).privatize_many([1], group=[2]),
     "FR has one group; group must be None (or all 1)"),
    (lambda: sv.ForcedResponse((0.1, 0.2, 0.3)).channel(), "FR with 3 categories is not a yes/no channel"),
    (lambda: sv.UnrelatedQuestionUnknown((0.7, 0.3)).privatize_many([True], group=[1]),
     "UQTunknown needs unrelated= (each respondent's true answer to the unrelated question)"),
    (lambda: sv.UnrelatedQuestionUnknown((0.7, 0.3)).privatize(True, group=1),
     "UQTunknown needs unrelated= (each respondent's true answer to the unrelated question)"),
    (lambda: sv.Kuk((0.7, 0.3)).privatize_many([True], group=[2]), "Kuk has one group; group must be None (or all 1)"),
    (lambda: sv.UnrelatedQuestionUnknown((0.7, 0.3)).privatize_many([True, False], group=[1, 2], unrelated=[True]),
     "unrelated must have one answer per respondent (2); got 1"),
]


@pytest.mark.parametrize(("call", "message"), REFUSED, ids=range(len(REFUSED)))
def test_refusals_say_exactly_what_is_wrong(call: Any, message: str) -> None:
    with pytest.raises(ValueError, match=_exact(message)):
        call()


@pytest.mark.parametrize(
    "p",
    [(0.5, 0.5, 0.2, 0.1), (0.6, 0.5, 0.2, 0.1), (0.2, 0.1, 0.5, 0.5), (0.2, 0.1, 0.6, 0.5)],
)
def test_cdmsym_forced_shares_below_one_in_each_group(p: tuple[float, ...]) -> None:
    message = f"p's forced shares must add up to less than 1 in each group for CDMsym; got ({', '.join(map(str, p))})"
    with pytest.raises(ValueError, match=_exact(message)):
        sv.SymmetricCheatingDetection(p)


def test_cdmsym_groups_differ_exactly_when_their_yes_odds_differ() -> None:
    """Refused where ``p3 (1 - p2) = p1 (1 - p4)``: the two groups' matrices coincide up to the cheaters."""
    with pytest.raises(ValueError, match="two groups differ"):
        sv.SymmetricCheatingDetection((0.2, 0.2, 0.1, 0.6))  # 0.1 * 0.8 == 0.2 * 0.4
    sv.SymmetricCheatingDetection((0.2, 0.2, 0.1, 0.5))


@pytest.mark.parametrize("p", [(0, 0.3), (1, 0.3), (0.3, 0), (0.3, 1), (0.3, 0.3)])
def test_kuk_decks_are_strictly_between_0_and_1_and_differ(p: tuple[float, float]) -> None:
    message = f"p must be two different values in (0, 1) for Kuk; got ({p[0]}, {p[1]})"
    with pytest.raises(ValueError, match=_exact(message)):
        sv.Kuk(p)


def test_accepted_boundaries() -> None:
    """The sensitive question asked for sure is Warner's direct question (infinite epsilon), not an error."""
    assert sv.UnrelatedQuestion((1, 0.3)).epsilon == math.inf
    assert sv.Kuk((0.7, 0.3)).cards == 1
    sv.CheatingDetection((0, 0.5))


def test_defaults_are_group_1() -> None:
    for d in (sv.Warner(0.7), sv.Kuk((0.7, 0.3)), sv.ForcedResponse((0.1, 0.2))):
        assert d.channel() is d.channel(1) is d.mechanism
    for d in (_SLD, sv.UnrelatedQuestionUnknown((0.7, 0.3)), sv.CheatingDetection((0.2, 0.6)),
              sv.SymmetricCheatingDetection((0.2, 0.3, 0.4, 0.1))):
        assert d.channel() is d.channel(1) and d.channel(2) != d.channel(1)
        params = {"pi": 0.3, d.extra or "": 0.4}
        np.testing.assert_array_equal(d.response_probabilities(params), d.response_probabilities(params, 1))
        assert not np.allclose(d.response_probabilities(params, 2), d.response_probabilities(params, 1))


def test_channels_are_the_documented_pairs() -> None:
    """``(P(yes | carrier), P(yes | non-carrier))``: FR's (1 - p_0, p_1); UQTunknown's coin (p_g, 0)."""
    fr = sv.ForcedResponse((0.1, 0.2)).channel()
    assert (fr.p_yes_given_yes, fr.p_yes_given_no) == (Fraction(9, 10), Fraction(1, 5))
    coin = sv.UnrelatedQuestionUnknown((0.7, 0.3)).channel(2)
    assert (coin.p_yes_given_yes, coin.p_yes_given_no) == (Fraction(3, 10), 0)


def test_sld_matrix_at_t_zero() -> None:
    """With ``t = 0`` no carrier says "yes": the carrier column is (1, 0)."""
    np.testing.assert_allclose(_SLD.matrix(1, extra=0.0), [[0.3, 1.0], [0.7, 0.0]], atol=1e-15)


def test_unrelated_question_epsilon_with_an_uninformative_group() -> None:
    """A group never asked the sensitive question (p_g = 0) leaks nothing: epsilon is the other group's."""
    d = sv.UnrelatedQuestionUnknown((0, 0.2))
    # group 2 at piUQ = 1/2: P(yes | carrier) = 0.6, P(yes | non-carrier) = 0.4
    assert d.epsilon_at(0.5) == pytest.approx(math.log(1.5), rel=1e-12)
    assert sv.UnrelatedQuestionUnknown((0.2, 0)).epsilon_at(0.5) == pytest.approx(math.log(1.5), rel=1e-12)


def test_equality_and_hash_follow_model_and_p() -> None:
    assert sv.Warner(0.7) == sv.Warner("0.7") and hash(sv.Warner(0.7)) == hash(sv.Warner("7/10"))
    assert sv.Warner(0.7) != sv.Warner(0.6)
    assert sv.Warner(0.7) != sv.Crosswise(0.7)  # the same channel, another design
    assert sv.Warner(0.7) != sv.Warner(0.7).mechanism
    assert sv.Kuk((0.7, 0.3), cards=2) != sv.Kuk((0.7, 0.3), cards=3)
    assert len({sv.Warner(0.7), sv.Warner(0.7), sv.Crosswise(0.7)}) == 2


def test_repr_states_p_epsilon_and_a_revealing_answer() -> None:
    assert repr(sv.Warner(0.7)) == "Warner(model='Warner', p=(0.7), epsilon=0.847298)"
    assert repr(sv.Kuk((0.7, 0.3), cards=3)) == "Kuk(model='Kuk', cards=3, p=(0.7, 0.3), epsilon=2.54189)"
    assert repr(sv.Mangat(0.6)) == (
        "Mangat(model='Mangat', p=(0.6), epsilon=inf -- an answer reveals the truth (no local-DP guarantee))"
    )


def _device_input(d: sv.Design, n: int) -> dict[str, Any]:
    truth: Any = np.arange(n) % (d.m if isinstance(d, sv.ForcedResponse) else 2)
    if not isinstance(d, sv.ForcedResponse) or d.m == 2:
        truth = truth.astype(bool)
    group = None if d.groups == 1 else np.arange(n) % 2 + 1
    unrelated = (np.arange(n) % 3 == 0) if d.model == "UQTunknown" else None
    return {"truth": truth, "group": group, "unrelated": unrelated}


@pytest.mark.parametrize(("model", "p", "cards", "truth"), CASES, ids=IDS)
def test_a_seed_reproduces_the_answers(model: str, p: object, cards: int, truth: dict[str, float]) -> None:
    d = build(model, p, cards)
    args = _device_input(d, 200)
    first = d.privatize_many(**args, rng=11)
    np.testing.assert_array_equal(d.privatize_many(**args, rng=11), first)
    one = {k: None if v is None else v[0].item() for k, v in args.items()}
    assert d.privatize(**one, rng=5) == d.privatize(**one, rng=5) == d.privatize_many(
        **{k: None if v is None else v[:1] for k, v in args.items()}, rng=5
    )[0]


def test_answer_types() -> None:
    """One-card Kuk and yes/no designs answer booleans; Kuk with cards > 1 counts red cards (int)."""
    assert sv.Kuk((0.7, 0.3)).privatize_many([True, False], rng=1).dtype == np.bool_
    two = sv.Kuk((0.9, 0.1), cards=2).privatize_many(np.ones(64, dtype=bool), rng=1)
    assert two.dtype == np.int64 and two.max() == 2  # P(no 2 among 64 carriers) = (1 - 0.81)^64
    uqt = sv.UnrelatedQuestionUnknown((0.7, 0.3)).privatize_many([1, 0], group=[1, 2], unrelated=[0, 1], rng=1)
    assert uqt.dtype == np.bool_
    assert sv.UnrelatedQuestionUnknown((0.7, 0.3)).privatize(True, group=1, unrelated=False, rng=1) in (True, False)


def test_truth_as_numbers_and_the_first_bad_value() -> None:
    d = sv.Warner(0.7)
    np.testing.assert_array_equal(d.privatize_many([0, 1, 1], rng=3), d.privatize_many([False, True, True], rng=3))
    np.testing.assert_array_equal(d.privatize_many([0.0, 1.0], rng=3), d.privatize_many([False, True], rng=3))
    assert d.privatize_many(np.array([], dtype=str)).size == 0
    for bad, shown in (([0, 2], "2"), ([0.0, 2.0], "2.0"), ([1.0, math.nan], "nan"), (["yes"], "'yes'")):
        with pytest.raises(ValueError, match=_exact(f"truth must be booleans (or 0/1) for Warner; got {shown}")):
            d.privatize_many(bad)
    with pytest.raises(ValueError, match=_exact("truth must be a 1-D array of booleans for Warner; got shape (1, 1)")):
        d.privatize_many([[True]])
    np.testing.assert_array_equal(d.privatize_many([True, True], group=[1, 1], rng=3), d.privatize_many([1, 1], rng=3))


@pytest.mark.parametrize("truth", [[[0, 1]], [3], [5], [-1], [1.0], [0, 1, 3]], ids=str)
def test_forced_response_categories_are_0_to_m_minus_1(truth: list[Any]) -> None:
    d = sv.ForcedResponse((0.1, 0.2, 0.3))
    with pytest.raises(ValueError, match=_exact("truth must be 1-D categories 0..2 for FR with 3 categories")):
        d.privatize_many(truth)
    assert d.privatize_many([]).size == 0
    assert set(d.privatize_many([0, 1, 2], rng=1).tolist()) <= {0, 1, 2}


def test_forced_response_thresholds_are_exact_integers() -> None:
    """FR with m categories draws u uniform below D and compares integers: no float rounding at D = 2^62.

    p = ((2^60 + 1) / 2^62, 1/4, 1/4): the truthful share is 2^60 - 1 (of 2^62), the forced
    categories start at 2^60 - 1, 2^61 and 3 2^60 + 1. A 64-bit float cannot tell 2^60 from 2^60 + 1,
    so a sampler comparing floats would put u = 2^61 - 1 into category 1.
    """
    d = sv.ForcedResponse((Fraction(2**60 + 1, 2**62), Fraction(1, 4), Fraction(1, 4)))
    t = 2**60 - 1
    draws = [t - 1, t, 2**61 - 1, 2**61, 2**62 - 1]  # the words (a power-of-two bound keeps the low 62 bits)
    source = Scripted(np.array(draws, dtype=np.uint64).tobytes())
    answers = d.privatize_many(np.full(len(draws), 2), rng=source)
    assert answers.tolist() == [2, 0, 0, 1, 2]
