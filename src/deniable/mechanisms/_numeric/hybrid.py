"""The Hybrid Mechanism (N. Wang et al., ICDE 2019): Piecewise or Duchi by a value-blind coin."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable import _privacy as privacy
from deniable import _randomness as randomness
from deniable._randomness import Source
from deniable.mechanisms._numeric.base import NumericMechanism
from deniable.mechanisms._numeric.duchi import DUCHI_MAX_EPSILON, Duchi
from deniable.mechanisms._numeric.piecewise import PIECEWISE_MAX_EPSILON, Piecewise
from deniable.mechanisms.registry import register

__all__ = ["Hybrid", "EPSILON_STAR"]

#: Hybrid mechanism threshold (Wang et al. 2019): pure Duchi at or below it.
EPSILON_STAR = math.log(
    (-5 + 2 * (6353 - 405 * math.sqrt(241)) ** (1 / 3) + 2 * (6353 + 405 * math.sqrt(241)) ** (1 / 3))
    / 27
)


@register(kind="numeric", candidate=True, required={"epsilon"})
class Hybrid(NumericMechanism):
    """The Hybrid Mechanism (N. Wang et al., ICDE 2019): ``epsilon``-LDP.

    With probability ``alpha = 1 - e^(-eps/2)`` (a 32-bit dyadic rational)
    report through :class:`Piecewise`, otherwise through :class:`Duchi`, both
    at ``epsilon``; for ``epsilon <= EPSILON_STAR = 0.6094`` only Duchi.
    The coin does not depend on the value, so the mixture is
    ``max(eps_PM, eps_Duchi)``-LDP; both parts are unbiased, and the
    per-user variance is ``alpha Var_PM(t) + (1 - alpha) Var_Duchi(t)``,
    constant in ``t`` above ``eps*``: for the continuous PM,
    ``Var_PM = t^2 / (e^(eps/2) - 1) + c`` and ``Var_Duchi = B^2 - t^2``,
    and this ``alpha`` cancels the ``t^2`` terms.

    Parameters
    ----------
    low, high : float
        The declared range; each value is clamped into it before it is
        randomized (``low < high``, both finite), and every estimate is of
        the clamped values.
    epsilon : float
        The privacy loss of one report, ``> 0``; the realised
        ``m.epsilon`` never exceeds it.

    Raises
    ------
    ValueError
        A range that is not finite and increasing, or an epsilon out of range.

    Examples
    --------
    >>> import numpy as np
    >>> from deniable.mechanisms import Hybrid
    >>> m = Hybrid(0, 10, epsilon=1.0)
    >>> m.epsilon <= 1.0
    True
    >>> rng = np.random.default_rng(0)
    >>> values = rng.uniform(2, 6, size=50_000)
    >>> est = m.estimate(m.privatize_many(values, rng=rng))
    >>> bool(abs(est.mean - values.mean()) < 5 * est.std_error)
    True
    """

    wire_id = "hybrid"

    def __init__(self, low: float, high: float, *, epsilon: float) -> None:
        super().__init__(low, high)
        eps = privacy.check_realisable(privacy.check_epsilon(epsilon, owner="Hybrid"), PIECEWISE_MAX_EPSILON, "Hybrid")
        # the Duchi branch has weight e^(-eps/2); above its own limit it runs at that limit (still eps-LDP)
        self._duchi = Duchi(low, high, epsilon=min(eps, DUCHI_MAX_EPSILON))
        if eps > EPSILON_STAR:
            self._pm: Piecewise | None = Piecewise(low, high, epsilon=eps)
            self._alpha_num = min((1 << 32) - 1, round(-math.expm1(-eps / 2) * 2**32))
        else:
            self._pm, self._alpha_num = None, 0

    @property
    def alpha(self) -> Fraction:
        return Fraction(self._alpha_num, 1 << 32)

    @property
    def report_bits(self) -> int:
        return self._pm.report_bits + 1 if self._pm is not None else 1

    @property
    def epsilon(self) -> float:
        return max(self._duchi.epsilon, self._pm.epsilon if self._pm else 0.0)

    def _sample(self, t: NDArray[np.float64], source: Source, lazy: bool) -> NDArray[np.float64]:
        if self._pm is None:
            return self._duchi._sample(t, source, lazy)
        use_pm = randomness.bernoulli_bits(self._alpha_num, 32, t.size, source)
        out = np.empty(t.size)
        out[use_pm] = self._pm._sample(t[use_pm], source, lazy)
        out[~use_pm] = self._duchi._sample(t[~use_pm], source, lazy)
        return out

    def _unit_variance(self, t: NDArray[np.float64]) -> NDArray[np.float64]:
        a = float(self.alpha)
        v = (1 - a) * self._duchi._unit_variance(t)
        return v + a * self._pm._unit_variance(t) if self._pm is not None else v

    def _possible(self, y: NDArray[np.float64]) -> NDArray[np.bool_]:
        on = self._duchi._possible(y)  # two values: cheap
        if self._pm is not None:
            rest = np.flatnonzero(~on)
            on[rest] = self._pm._possible(y[rest])
        return on

    @property
    def report_range(self) -> tuple[float, float]:
        lo, hi = self._duchi.report_range
        if self._pm is not None:
            plo, phi = self._pm.report_range
            lo, hi = min(lo, plo), max(hi, phi)
        return lo, hi

    def report_distribution(self, value: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        ds, dp = self._duchi.report_distribution(value)
        if self._pm is None:
            return ds, dp
        ps, pp = self._pm.report_distribution(value)
        a = float(self.alpha)
        support = np.concatenate([ds, ps])
        probs = np.concatenate([(1 - a) * dp, a * pp])
        order = np.argsort(support, kind="stable")
        return support[order], probs[order]

    def _params(self) -> dict[str, Any]:
        return {
            "duchi": self._duchi._params(),
            "piecewise": self._pm._params() if self._pm is not None else None,
            "piecewise_numerator": self._alpha_num,
        }

    @classmethod
    def _build(cls, low: float, high: float, params: dict[str, Any]) -> Hybrid:
        self = cls.__new__(cls)
        NumericMechanism.__init__(self, low, high)
        self._duchi = Duchi._build(low, high, params["duchi"])
        pm = params["piecewise"]
        self._pm = Piecewise._build(low, high, pm) if pm is not None else None
        self._alpha_num = int(params["piecewise_numerator"])
        if (self._pm is None) != (self._alpha_num == 0) or not 0 <= self._alpha_num < 1 << 32:
            raise ValueError(f"Hybrid params are inconsistent: {params!r}")
        return self
