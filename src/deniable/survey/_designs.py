"""The classic randomized-response survey designs, with RRreg's names and ``p`` conventions.

A respondent's latent state ``j`` is 0 (non-carrier: does not have the
sensitive attribute), 1 (carrier) or, in the cheating-detection designs, 2
(cheater: disobeys the instruction and says "no"). A design gives, for each
group ``g`` of respondents (the randomization probabilities they were
given), the transition matrix ``[j, r] = P(response r | state j)``
(:meth:`~deniable.survey.Design.transition_matrix`, the orientation of every
mechanism; RRreg's ``getPW`` is its transpose, :meth:`~deniable.survey.Design.matrix`).
For a yes/no design with ``b = P(yes | carrier)`` and ``a0 = P(yes |
non-carrier)``, ``P(yes) = a0 + (b - a0) pi``:

==============  =======================================  ======================  =====================
model           p means                                  b = P(yes | carrier)    a0 = P(yes | non)
==============  =======================================  ======================  =====================
Warner          P(the sensitive statement, not its       p                       1 - p
                negation)
Crosswise       prevalence of the innocuous "yes";       p                       1 - p
                1 = "both answers the same"
Triangular      prevalence of the innocuous "yes";       1                       p
                1 = triangle, 0 = circle (no to both)
Mangat          P(a non-carrier answers "no")            1                       1 - p
Kuk             (p1, p2): red share of deck 1 (carriers) p1 (count of red of k   p2
                and deck 2 (non-carriers)                cards: binomial)
UQTknown        (p1, p2): P(sensitive question), known   p1 + (1-p1) p2          (1-p1) p2
                prevalence of the unrelated question
UQTunknown      (p_1, p_2) per group; piUQ estimated     p_g + (1-p_g) piUQ      (1-p_g) piUQ
FR              (p_0, ..., p_{m-1}): P(forced to answer  1 - p_0 (m = 2)         p_1 (m = 2)
                category r); m categories
SLD             (p_1, p_2): P(non-carrier says "no")     t (estimated)           1 - p_g
CDM             (p_1, p_2): P(prompted to say "yes")     1 (cheater: 0)          p_g
CDMsym          (p1, p2, p3, p4): forced yes / no in     1 - p_{2g} (cheater 0)  p_{2g-1}
                group 1, then in group 2
==============  =======================================  ======================  =====================

FR with m categories: ``P(r | j) = p_r + (1 - sum p) [r = j]``. Two-group
designs (UQTunknown, SLD, CDM, CDMsym) carry one extra parameter, estimated
from the two groups: ``piUQ``, ``t`` or ``gamma`` (the cheaters' share).

**Privacy.** ``epsilon`` is the local-DP guarantee of one *compliant*
respondent's answer: ``max_r max_{j,j'} |ln P(r|j) / P(r|j')|`` over the
carrier and non-carrier columns, computed from the exact integer
probabilities the device samples with. It is **infinite** where some answer
is impossible for one state, so that the answer proves the truth: Mangat's
and SLD's "no" and the triangular model's circle prove a non-carrier, CDM's
"no" excludes an honest carrier, and an unrelated-question answer is only as
private as the unrelated question (UQTunknown). The repr says so.

On the device each yes/no design is, per group, one :meth:`BinaryRR.channel
<deniable.mechanisms._binary.BinaryRR.channel>`, sampled exactly from the OS
CSPRNG: Warner is ``BinaryRR(prob=p)`` and two-category FR is
``BinaryRR.forced_response``. The innocuous question of the crosswise,
triangular and known unrelated-question designs has a known prevalence, so
the device draws its answer itself; the unknown unrelated question's answer
must come from the respondent (``unrelated=``).
"""

from __future__ import annotations

import math
from abc import abstractmethod
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable import _privacy as privacy
from deniable import _randomness as randomness
from deniable._aggregates import SupportCounts
from deniable._estimate import check_target
from deniable.mechanisms._binary import BinaryRR
from deniable.survey._design_base import Design, probabilities
from deniable.survey._prevalence import PrevalenceFit, prevalence_from_counts

__all__ = [
    "Design",
    "Warner",
    "Crosswise",
    "Triangular",
    "Mangat",
    "Kuk",
    "UnrelatedQuestion",
    "UnrelatedQuestionUnknown",
    "ForcedResponse",
    "StochasticLieDetector",
    "CheatingDetection",
    "SymmetricCheatingDetection",
    "design",
    "MODELS",
]

_ONE = Fraction(1)


class FittedDesign(Design):
    """A design whose aggregate is estimated by :func:`~deniable.survey.prevalence_from_counts`."""

    def estimate_from(self, stat: SupportCounts, target: Any = "population") -> PrevalenceFit:
        """The prevalence fit from a (merged) aggregate of this design's reports.

        The fit is for the population the respondents were sampled from
        (``target="population"``, the only target a design's likelihood has).
        """
        if check_target(target) != "population":
            raise ValueError(f"a survey design estimates the population prevalence; target must be 'population', "
                             f"got {target!r}")
        return prevalence_from_counts(self.answer_counts(stat), self)


class _OneGroupBinary(FittedDesign):
    """A one-group yes/no design: ``P(yes) = a0 + (b - a0) pi``."""

    def __init__(self, b: Fraction, a0: Fraction) -> None:
        if b == a0:
            raise ValueError(
                f"p gives P(yes | carrier) = P(yes | non-carrier) = {b} for {self.model}: "
                "the answers carry no information"
            )
        self._channel = BinaryRR._from_channel(b, a0)

    def channel(self, group: int = 1) -> BinaryRR:
        self._check_group(group)
        return self._channel

    def response_probabilities(self, params: dict[str, float], group: int = 1) -> NDArray[np.float64]:
        b, a0 = float(self._channel.p_yes_given_yes), float(self._channel.p_yes_given_no)
        yes = a0 + (b - a0) * params["pi"]
        return np.array([1 - yes, yes])


class Warner(_OneGroupBinary):
    """Warner (1965): the sensitive statement with probability ``p``, else its negation.

    Device: ``BinaryRR`` with ``P(yes | carrier) = p``; ``epsilon = |ln(p / (1-p))|``.

    >>> Warner(p=0.7).epsilon > 0.847
    True
    """

    model = "Warner"

    def __init__(self, p: object) -> None:
        (self.p0,) = self.p = probabilities(p, 1, self.model, "P(sensitive statement)")
        super().__init__(self.p0, 1 - self.p0)


class Crosswise(_OneGroupBinary):
    """Crosswise model: 1 = "my two answers are the same"; ``p`` = the innocuous question's known prevalence."""

    model = "Crosswise"

    def __init__(self, p: object) -> None:
        (self.p0,) = self.p = probabilities(p, 1, self.model, "prevalence of the innocuous yes")
        super().__init__(self.p0, 1 - self.p0)


class Triangular(_OneGroupBinary):
    """Triangular model: 0 = circle ("no" to both questions), 1 = triangle. The circle proves a non-carrier."""

    model = "Triangular"

    def __init__(self, p: object) -> None:
        (self.p0,) = self.p = probabilities(p, 1, self.model, "prevalence of the innocuous yes")
        super().__init__(_ONE, self.p0)


class Mangat(_OneGroupBinary):
    """Mangat (1994): carriers say "yes"; a non-carrier says "no" with probability ``p``. "No" proves a non-carrier."""

    model = "Mangat"

    def __init__(self, p: object) -> None:
        (self.p0,) = self.p = probabilities(p, 1, self.model, "P(a non-carrier answers no)")
        super().__init__(_ONE, 1 - self.p0)


class UnrelatedQuestion(_OneGroupBinary):
    """Unrelated question with a known prevalence (RRreg's UQTknown): ``p = (p1, p2)``.

    The sensitive question with probability ``p1``, else an unrelated one
    whose "yes" has the known prevalence ``p2``; the device draws that answer.
    For an unrelated question of unknown prevalence use
    :class:`UnrelatedQuestionUnknown` (two groups).
    """

    model = "UQTknown"

    def __init__(self, p: object) -> None:
        self.p = probabilities(p, 2, self.model, "P(sensitive question), known unrelated prevalence")
        p1, p2 = self.p
        if p1 == 0:
            raise ValueError(f"p[0] (P(sensitive question)) must be in (0, 1] for {self.model}; got 0")
        super().__init__(p1 + (1 - p1) * p2, (1 - p1) * p2)


class Kuk(FittedDesign):
    """Kuk (1990): carriers draw ``cards`` cards from deck 1 (red share ``p1``), others from deck 2 (``p2``).

    The answer is the number of red cards, ``Binomial(cards, p1)`` for a
    carrier and ``Binomial(cards, p2)`` otherwise; ``epsilon = cards *
    max(|ln(p1/p2)|, |ln((1-p1)/(1-p2))|)``.
    """

    model = "Kuk"

    def __init__(self, p: object, cards: int = 1) -> None:
        self.p = probabilities(p, 2, self.model, "red share of deck 1 and deck 2")
        if isinstance(cards, bool) or not isinstance(cards, (int, np.integer)) or cards < 1:
            raise ValueError(f"cards (RRreg's Kukrep) must be a positive integer for Kuk; got {cards!r}")
        self.cards = int(cards)
        p1, p2 = self.p
        if not (0 < p1 < 1 and 0 < p2 < 1) or p1 == p2:
            raise ValueError(f"p must be two different values in (0, 1) for Kuk; got ({self._p_text()})")
        self._channel = BinaryRR._from_channel(p1, p2)

    @property
    def responses(self) -> tuple[int, ...]:
        return tuple(range(self.cards + 1))

    def channel(self, group: int = 1) -> BinaryRR:
        """One card's draw: red (``True``) with probability p1 for a carrier, p2 otherwise."""
        self._check_group(group)
        return self._channel

    @property
    def epsilon(self) -> float:
        p1, p2 = self.p
        worst = max(max(p1, p2) / min(p1, p2), max(1 - p1, 1 - p2) / min(1 - p1, 1 - p2))
        return privacy.ln_up(worst**self.cards)

    def _randomize(
        self, states: NDArray[Any], groups: NDArray[np.int64], source: randomness.Source, unrelated: Any
    ) -> NDArray[Any]:
        """The number of red cards among ``cards`` exact draws per respondent."""
        red = np.zeros(states.size, dtype=np.int64)
        for _ in range(self.cards):
            red += self._channel.privatize_many(states, rng=source)
        return red if self.cards > 1 else red.astype(bool)

    def response_probabilities(self, params: dict[str, float], group: int = 1) -> NDArray[np.float64]:
        carrier, other = self._pmfs
        return params["pi"] * carrier + (1 - params["pi"]) * other

    @property
    def _pmfs(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``Binomial(r; cards, p1)`` and ``Binomial(r; cards, p2)`` for r = 0..cards, computed once."""
        cached = self.__dict__.get("_pmf_cache")
        if cached is None:
            r = np.arange(self.cards + 1)
            comb = np.array([math.comb(self.cards, int(i)) for i in r], dtype=float)
            cached = tuple(comb * float(q) ** r * (1 - float(q)) ** (self.cards - r) for q in self.p)
            self.__dict__["_pmf_cache"] = cached
        return cached

    def __repr__(self) -> str:
        return super().__repr__().replace("p=(", f"cards={self.cards}, p=(", 1)


class ForcedResponse(FittedDesign):
    """Forced response (RRreg's FR): forced to category ``r`` with probability ``p[r]``, else truthful.

    ``p = (p_0, ..., p_{m-1})`` for m categories, ``sum(p) < 1``; note the
    order: for a yes/no question ``p = (forced "no", forced "yes")``. Then
    ``P(r | j) = p_r + (1 - sum p) [r = j]`` and, between any two categories,
    ``epsilon = ln(1 + (1 - sum p) / min_r p_r)``: ln 5 for p = (1/6, 1/6).
    Two categories use ``BinaryRR.forced_response``'s channel.
    """

    model = "FR"

    def __init__(self, p: object) -> None:
        self.p = probabilities(p, None, self.model, "P(forced to each category)")
        if len(self.p) < 2:
            raise ValueError(f"p must have one value per category (at least 2) for FR; got {len(self.p)}")
        self.truthful: Fraction = _ONE - sum(self.p, Fraction(0))
        if self.truthful <= 0:
            raise ValueError(
                f"p must add up to less than 1 for FR (the rest is the truthful answer); got sum {float(sum(self.p)):g}"
            )
        self.m = len(self.p)
        if self.m == 2:
            self._channel = BinaryRR._from_channel(1 - self.p[0], self.p[1])
        numerators, self._denominator = privacy.integer_probabilities([self.truthful, *self.p])
        self._truthful_num = numerators[0]
        self._forced_cum = np.cumsum(numerators[1:]).astype(np.uint64)

    @property
    def states(self) -> tuple[str, ...]:  # type: ignore[override]
        return ("non-carrier", "carrier") if self.m == 2 else tuple(f"category {j}" for j in range(self.m))

    @property
    def responses(self) -> tuple[int, ...]:
        return tuple(range(self.m))

    @property
    def param_names(self) -> tuple[str, ...]:
        return ("pi",) if self.m == 2 else tuple(f"pi{j}" for j in range(self.m))

    def channel(self, group: int = 1) -> BinaryRR:
        self._check_group(group)
        if self.m != 2:
            raise ValueError(f"FR with {self.m} categories is not a yes/no channel")
        return self._channel

    @property
    def epsilon(self) -> float:
        if min(self.p) == 0:
            return math.inf
        return privacy.ln_up(1 + self.truthful / min(self.p))

    def _randomize(
        self, states: NDArray[Any], groups: NDArray[np.int64], source: randomness.Source, unrelated: Any
    ) -> NDArray[Any]:
        if self.m == 2:
            return super()._randomize(states, groups, source, unrelated)
        u = randomness.uniform_below(self._denominator, states.size, source)
        forced = u >= self._truthful_num
        out = states.copy()
        out[forced] = np.searchsorted(self._forced_cum, u[forced] - np.uint64(self._truthful_num), side="right")
        return out

    def _state_params(self, state: int, extra: float | None) -> dict[str, float]:
        if self.m == 2:
            return super()._state_params(state, extra)
        return {f"pi{j}": float(j == state) for j in range(self.m)}

    def response_probabilities(self, params: dict[str, float], group: int = 1) -> NDArray[np.float64]:
        p = np.array([float(v) for v in self.p])
        if self.m == 2:
            pi = np.array([1 - params["pi"], params["pi"]])
        else:
            pi = np.array([params[f"pi{j}"] for j in range(self.m)])
        return p + float(self.truthful) * pi


class _TwoGroupBinary(FittedDesign):
    """A two-group yes/no design: one channel per group and an extra parameter estimated from both."""

    groups = 2

    def __init__(self, p: object, count: int, meaning: str) -> None:
        self.p = probabilities(p, count, self.model, meaning)
        self._channels = tuple(BinaryRR._from_channel(*self._device(g)) for g in (1, 2))

    @abstractmethod
    def _device(self, group: int) -> tuple[Fraction, Fraction]:
        """``(P(yes | carrier), P(yes | non-carrier))`` of a compliant respondent's device in ``group``."""

    def channel(self, group: int = 1) -> BinaryRR:
        self._check_group(group)
        return self._channels[group - 1]


class UnrelatedQuestionUnknown(_TwoGroupBinary):
    """Unrelated question of unknown prevalence ``piUQ`` (RRreg's UQTunknown), two groups.

    Group g answers the sensitive question with probability ``p_g``, else the
    unrelated one, whose answer the respondent gives (``unrelated=``). Its
    privacy is that of the unrelated answer: ``epsilon`` is infinite for an
    observer who knows it; :meth:`epsilon_at` gives the figure at a prevalence.
    """

    model = "UQTunknown"
    extra = "piUQ"
    needs_unrelated = True
    _matrix_needs_extra = True

    def __init__(self, p: object) -> None:
        super().__init__(p, 2, "P(sensitive question) in group 1 and group 2")
        if self.p[0] == self.p[1]:
            raise ValueError(f"p must differ between the groups for UQTunknown; got ({self._p_text()})")

    def _device(self, group: int) -> tuple[Fraction, Fraction]:
        # the sensitive question is asked with probability p_g: used as the coin
        return self.p[group - 1], Fraction(0)

    @property
    def epsilon(self) -> float:
        return math.inf

    def epsilon_at(self, piUQ: float) -> float:  # noqa: N803 (RRreg's name)
        """Epsilon, over both groups, when the unrelated answer is "yes" with probability ``piUQ``."""
        a = privacy.exact_probability(piUQ, "piUQ", self.model)
        # a group never asked the sensitive question (p_g = 0) has equal columns: epsilon 0
        return max(BinaryRR._from_channel(pg + (1 - pg) * a, (1 - pg) * a).epsilon for pg in self.p)

    def _randomize(
        self, states: NDArray[Any], groups: NDArray[np.int64], source: randomness.Source, unrelated: Any
    ) -> NDArray[Any]:
        """The sensitive answer with probability p_g, else the respondent's own ``unrelated`` answer."""
        if unrelated is None:
            raise ValueError("UQTunknown needs unrelated= (each respondent's true answer to the unrelated question)")
        other = self._truth(unrelated)
        if other.size != states.size:
            raise ValueError(f"unrelated must have one answer per respondent ({states.size}); got {other.size}")
        asked = np.empty(states.size, dtype=bool)
        for g in (1, 2):
            at = np.flatnonzero(groups == g)
            # the coin: a channel fed True says "yes" with probability p_g
            asked[at] = self._channels[g - 1].privatize_many(np.ones(at.size, dtype=bool), rng=source)
        return np.where(asked, states, other)

    def response_probabilities(self, params: dict[str, float], group: int = 1) -> NDArray[np.float64]:
        pg = float(self.p[group - 1])
        yes = pg * params["pi"] + (1 - pg) * params["piUQ"]
        return np.array([1 - yes, yes])


class StochasticLieDetector(_TwoGroupBinary):
    """Stochastic lie detector (Moshagen et al. 2012; RRreg's SLD), two groups.

    A non-carrier in group g says "no" with probability ``p_g``; a compliant
    carrier says "yes". ``t`` (estimated) is the share of carriers who answer
    "yes" truthfully. A compliant carrier never says "no", so "no" proves a
    non-carrier: ``epsilon`` is infinite.
    """

    model = "SLD"
    extra = "t"
    _matrix_needs_extra = True

    def __init__(self, p: object) -> None:
        super().__init__(p, 2, "P(non-carrier answers no) in group 1 and group 2")
        if self.p[0] == self.p[1] or _ONE in self.p:
            raise ValueError(f"p must be two different values in [0, 1) for SLD; got ({self._p_text()})")

    def _device(self, group: int) -> tuple[Fraction, Fraction]:
        return _ONE, 1 - self.p[group - 1]

    def response_probabilities(self, params: dict[str, float], group: int = 1) -> NDArray[np.float64]:
        pg = float(self.p[group - 1])
        yes = params["t"] * params["pi"] + (1 - pg) * (1 - params["pi"])
        return np.array([1 - yes, yes])


class CheatingDetection(_TwoGroupBinary):
    """Cheating detection model (Clark & Desharnais 1998; RRreg's CDM), two groups.

    Prompted to say "yes" with probability ``p_g``, else truthful; cheaters
    (share ``gamma``, estimated) say "no" whatever they are told. Honest
    carriers always say "yes", so "no" excludes one: ``epsilon`` is infinite.
    """

    model = "CDM"
    extra = "gamma"
    states = ("non-carrier", "carrier", "cheater")

    def __init__(self, p: object) -> None:
        super().__init__(p, 2, "P(prompted to say yes) in group 1 and group 2")
        if self.p[0] == self.p[1] or _ONE in self.p:
            raise ValueError(f"p must be two different values in [0, 1) for CDM; got ({self._p_text()})")

    def _device(self, group: int) -> tuple[Fraction, Fraction]:
        return _ONE, self.p[group - 1]

    def response_probabilities(self, params: dict[str, float], group: int = 1) -> NDArray[np.float64]:
        pg = float(self.p[group - 1])
        pi, gamma = params["pi"], params["gamma"]
        yes = pi + (1 - pi - gamma) * pg
        return np.array([1 - yes, yes])


class SymmetricCheatingDetection(_TwoGroupBinary):
    """Symmetric cheating detection (Ostapczuk et al. 2009; RRreg's CDMsym), two groups.

    ``p = (p1, p2, p3, p4)``: forced "yes" and forced "no" in group 1, then
    in group 2; cheaters (share ``gamma``) say "no". Per group
    ``epsilon = max(|ln((1-p_{2g}) / p_{2g-1})|, |ln(p_{2g} / (1-p_{2g-1}))|)``.
    """

    model = "CDMsym"
    extra = "gamma"
    states = ("non-carrier", "carrier", "cheater")

    def __init__(self, p: object) -> None:
        super().__init__(p, 4, "forced yes / forced no in group 1, then in group 2")
        p1, p2, p3, p4 = self.p
        if p1 + p2 >= 1 or p3 + p4 >= 1:
            raise ValueError(
                f"p's forced shares must add up to less than 1 in each group for CDMsym; got ({self._p_text()})"
            )
        if p3 * (1 - p2) == p1 * (1 - p4):
            raise ValueError(f"p must make the two groups differ for CDMsym; got ({self._p_text()})")

    def _device(self, group: int) -> tuple[Fraction, Fraction]:
        forced_yes, forced_no = self.p[2 * group - 2], self.p[2 * group - 1]
        return 1 - forced_no, forced_yes

    def response_probabilities(self, params: dict[str, float], group: int = 1) -> NDArray[np.float64]:
        forced_yes, forced_no = float(self.p[2 * group - 2]), float(self.p[2 * group - 1])
        pi, gamma = params["pi"], params["gamma"]
        yes = pi * (1 - forced_no) + (1 - pi - gamma) * forced_yes
        return np.array([1 - yes, yes])


MODELS: dict[str, type[Design]] = {
    cls.model: cls
    for cls in (
        Warner,
        UnrelatedQuestion,
        UnrelatedQuestionUnknown,
        Mangat,
        Kuk,
        ForcedResponse,
        Crosswise,
        Triangular,
        CheatingDetection,
        SymmetricCheatingDetection,
        StochasticLieDetector,
    )
}
"""The design classes by RRreg's model name (``"Warner"``, ``"FR"``, ...), as :func:`design` looks them up."""


def design(model: str, p: object, Kukrep: int = 1) -> Design:  # noqa: N803 (RRreg's name)
    """The design RRreg calls ``model`` with its ``p`` (and ``Kukrep`` cards for Kuk).

    >>> design("FR", p=["1/6", "1/6"]).epsilon > 1.609
    True
    """
    if model not in MODELS:
        raise ValueError(f"model must be one of {', '.join(MODELS)}; got {model!r}")
    if model == "Kuk":
        return Kuk(p, cards=Kukrep)
    if Kukrep != 1:
        raise ValueError(f"Kukrep applies to the Kuk model only; got Kukrep={Kukrep} for {model}")
    return MODELS[model](p)  # type: ignore[call-arg]
