"""Additive noise on a lattice: the Laplace and Gaussian mechanisms.

Both randomly round the clamped value to a lattice of ``N`` steps over the
range, add exact integer noise and clamp the result far outside the range
(:mod:`deniable.mechanisms._numeric.lattice` builds the noise and accounts its
privacy loss from its integer probabilities). Reports are
``low + y (high - low) / N`` for the lattice output ``y``: unbiased (Laplace
up to its far clamp, under ``exp(-24)`` noise scales), with per-user
variance the noise variance plus the rounding term ``f (1 - f)`` steps
squared for the fractional lattice position ``f`` of the value.
"""

from __future__ import annotations

import math
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray

from deniable import _privacy as privacy
from deniable import _randomness as randomness
from deniable._estimate import MeanEstimate, Target, check_target
from deniable._randomness import Source
from deniable.mechanisms._numeric.base import (
    NumericMechanism,
    check_delta,
    check_range,
    check_real,
    finite_values,
)
from deniable.mechanisms._numeric.lattice import (
    Lattice,
    gaussian_epsilon,
    gaussian_lattice,
    gaussian_noise,
    laplace_lattice,
    unit_sigma,
)
from deniable.mechanisms.registry import register

__all__ = ["Laplace", "Gaussian", "two_level_gaussian_mean"]

_LatticeT = TypeVar("_LatticeT", bound="_LatticeMechanism")


def _requested(params: dict[str, Any], key: str, owner: str) -> float:
    value = params[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"config params.{key} must be a number for {owner}; got {value!r}")
    return float(value)


def _same_lattice(m: _LatticeT, params: dict[str, Any]) -> _LatticeT:
    """``m`` if its lattice has the configured number of steps (else the config is foreign)."""
    if params.get("lattice_steps") != m._lattice.steps:
        raise ValueError(
            f"config params.lattice_steps is {params.get('lattice_steps')!r} but this "
            f"{m.name} builds {m._lattice.steps} steps from the same parameters"
        )
    return m


class _LatticeMechanism(NumericMechanism):
    """Shared sampler of Laplace and Gaussian: random rounding, integer noise, clamp."""

    _lattice: Lattice

    def _sample(self, t: NDArray[np.float64], source: Source, lazy: bool) -> NDArray[np.float64]:
        lat = self._lattice
        N = lat.steps
        t += 1.0
        t *= N / 2
        y = randomness.randomized_round(t, source, lazy, overwrite=True)
        y += lat.sample(t.size, source, lazy)
        np.clip(y, N - lat.K, lat.K, out=y)
        return self._values(y)

    def _values(self, y: NDArray[np.integer]) -> NDArray[np.float64]:
        """Reports for lattice outputs ``y``: ``low + y (high - low) / N``."""
        out = np.multiply(y, 2.0 * self._half / self._lattice.steps, dtype=np.float64)
        out += self.low
        return out

    def _possible(self, y: NDArray[np.float64]) -> NDArray[np.bool_]:
        steps = np.subtract(y, self.low)
        steps *= 1.0 / self.step  # lattice position: an integer up to rounding
        steps -= np.rint(steps)
        on: NDArray[np.bool_] = np.abs(steps, out=steps) <= 1e-3
        return on

    @property
    def report_range(self) -> tuple[float, float]:
        lat = self._lattice
        span = self._values(np.array([lat.steps - lat.K, lat.K]))
        return float(span[0]), float(span[1])

    @property
    def report_bits(self) -> int:
        return int(2 * self._lattice.K - self._lattice.steps).bit_length()

    @property
    def step(self) -> float:
        """Lattice step in original units."""
        return 2.0 * self._half / self._lattice.steps

    def _unit_variance(self, t: NDArray[np.float64]) -> NDArray[np.float64]:
        lat = self._lattice
        pos = (np.asarray(t, dtype=float) + 1.0) * (lat.steps / 2)
        frac = pos - np.floor(pos)
        return (lat.noise_variance + frac * (1 - frac)) * (2.0 / lat.steps) ** 2

    def _worst_unit_variance(self) -> float:
        lat = self._lattice
        return (lat.noise_variance + 0.25) * (2.0 / lat.steps) ** 2

    def report_distribution(self, value: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        lat = self._lattice
        pos = float((self._to_unit([value])[0] + 1.0) * (lat.steps / 2))
        base = math.floor(pos)
        frac = pos - base
        probs = (1 - frac) * lat.pmf(base)
        if frac > 0:
            probs = probs + frac * lat.pmf(base + 1)
        return self._values(np.arange(lat.steps - lat.K, lat.K + 1)), probs


LAPLACE_MAX_EPSILON = 11.2  # 16-bit noise tables: every epsilon up to here is realised to within 1%


@register(kind="numeric", candidate=True, required={"epsilon"})
class Laplace(_LatticeMechanism):
    """Laplace noise for values clamped to ``[low, high]``: ``epsilon``-LDP.

    Reports are ``x + Lap((high - low) / epsilon)`` realised on a lattice of
    over 1000 steps per noise scale for ``epsilon <= 8``: the clamped value
    is randomly rounded to the lattice (unbiased, variance at most a
    quarter step squared), integer noise from an exact table is added, and
    the result is clamped 24 noise scales beyond the range. ``epsilon`` is
    computed from the table's integers and never exceeds the request.
    Unbiased up to the far clamp (under ``exp(-24)`` noise scales); per-user
    variance ``2 ((high - low) / epsilon)^2`` plus the rounding term.

    Parameters
    ----------
    low, high : float
        The declared range; each value is clamped into it before it is
        randomized (``low < high``, both finite), and every estimate is of
        the clamped values.
    epsilon : float
        The privacy loss of one report, ``> 0`` and at most 11.2 (the noise tables' limit); the realised
        ``m.epsilon`` never exceeds it.

    Raises
    ------
    ValueError
        A range that is not finite and increasing, or an epsilon out of range.

    Examples
    --------
    >>> import numpy as np
    >>> from deniable.mechanisms import Laplace
    >>> m = Laplace(0, 10, epsilon=1.0)
    >>> m.epsilon <= 1.0
    True
    >>> rng = np.random.default_rng(0)
    >>> values = rng.uniform(2, 6, size=50_000)
    >>> est = m.estimate(m.privatize_many(values, rng=rng))
    >>> bool(abs(est.mean - values.mean()) < 5 * est.std_error)
    True
    """

    wire_id = "laplace"

    def __init__(self, low: float, high: float, *, epsilon: float) -> None:
        super().__init__(low, high)
        self._requested = privacy.check_realisable(
            privacy.check_epsilon(epsilon, owner="Laplace"), LAPLACE_MAX_EPSILON, "Laplace"
        )
        self._lattice = laplace_lattice(self._requested)

    @property
    def epsilon(self) -> float:
        return self._lattice.epsilon

    @property
    def scale(self) -> float:
        """Noise scale ``(high - low) / epsilon`` in original units."""
        return 2 * self._half / self._requested

    def _params(self) -> dict[str, Any]:
        return {"requested_epsilon": self._requested, "lattice_steps": self._lattice.steps}

    @classmethod
    def _build(cls, low: float, high: float, params: dict[str, Any]) -> Laplace:
        m = cls(low, high, epsilon=_requested(params, "requested_epsilon", cls.__name__))
        return _same_lattice(m, params)


@register(kind="numeric", required={"epsilon", "delta"})
class Gaussian(_LatticeMechanism):
    r"""Gaussian noise for values clamped to ``[low, high]``: ``(epsilon, delta)``-LDP.

    ``sigma`` is the analytic Gaussian calibration (Balle & Wang 2018) for
    sensitivity ``high - low``; the noise is a discrete Gaussian on a
    lattice of 700 or more steps per ``sigma`` with exact integer
    probabilities, and :attr:`delta` is recomputed from those integers (it
    never exceeds the request). Unbiased; per-user variance ``sigma^2`` plus
    the rounding term.

    Parameters
    ----------
    low, high : float
        The declared range; each value is clamped into it before the noise
        is added (``low < high``, both finite).
    epsilon : float
        The privacy loss, ``> 0``.
    delta : float
        The chance, per respondent, that the epsilon bound fails, in
        ``(0, 1)``; required (a Gaussian has no pure-epsilon guarantee).
        Keep it far below ``1 / n``.

    Raises
    ------
    ValueError
        A range that is not finite and increasing, or an epsilon or delta
        out of range.

    Notes
    -----
    For sensitivity :math:`\Delta = \text{high} - \text{low}`, ``sigma`` is the
    smallest :math:`\sigma` with

    .. math::

        \Phi\Big(\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\Big)
        - e^{\varepsilon}\,\Phi\Big(-\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\Big) \le \delta,

    and the mean of :math:`n` reports has variance about :math:`\sigma^2 / n`. For
    one bounded number per respondent it loses to ``Hybrid`` at every epsilon
    (``Hybrid`` needs no delta): see the
    [numeric mechanisms](../math/numeric.md) page.

    Examples
    --------
    >>> import numpy as np
    >>> from deniable.mechanisms import Gaussian
    >>> m = Gaussian(0, 10, epsilon=1.0, delta=1e-6)
    >>> round(m.epsilon, 6), m.delta <= 1e-6, round(m.sigma, 1)
    (1.0, True, 42.3)
    >>> rng = np.random.default_rng(0)
    >>> values = rng.uniform(2, 6, size=50_000)
    >>> est = m.estimate(m.privatize_many(values, rng=rng))
    >>> abs(est.mean - 4.0) < 5 * est.std_error
    True
    """

    wire_id = "gaussian"

    def __init__(self, low: float, high: float, *, epsilon: float, delta: float) -> None:
        super().__init__(low, high)
        self._requested = privacy.check_epsilon(epsilon, owner="Gaussian")
        self._requested_delta = check_delta(delta, "Gaussian")
        unit = unit_sigma(self._requested, self._requested_delta)
        self._lattice = gaussian_lattice(unit, self._requested, self._requested_delta)

    @classmethod
    def from_sigma(cls, low: float, high: float, *, sigma: float, delta: float) -> Gaussian:
        """The Gaussian mechanism whose noise has (about) standard deviation ``sigma``.

        ``epsilon`` is the analytic-Gaussian epsilon of ``sigma`` at ``delta``.
        """
        lo, hi = check_range(low, high, cls.__name__)
        s = check_real(sigma, "sigma", cls.__name__)
        d = check_delta(delta, cls.__name__)
        if s <= 0:
            raise ValueError(f"sigma must be positive for Gaussian; got {sigma!r}")
        eps = gaussian_epsilon(s / (hi - lo), d)
        if not math.isfinite(eps):
            raise ValueError(f"sigma={sigma!r} is too small to give any epsilon at delta={delta!r}")
        return cls(lo, hi, epsilon=eps, delta=d)

    @property
    def epsilon(self) -> float:
        return self._lattice.epsilon

    @property
    def delta(self) -> float:
        assert self._lattice.delta is not None
        return self._lattice.delta

    @property
    def sigma(self) -> float:
        """Standard deviation of the noise in original units."""
        return math.sqrt(self._lattice.noise_variance) * self.step

    def _params(self) -> dict[str, Any]:
        return {
            "requested_epsilon": self._requested,
            "requested_delta": self._requested_delta,
            "lattice_steps": self._lattice.steps,
        }

    @classmethod
    def _build(cls, low: float, high: float, params: dict[str, Any]) -> Gaussian:
        m = cls(
            low, high,
            epsilon=_requested(params, "requested_epsilon", cls.__name__),
            delta=_requested(params, "requested_delta", cls.__name__),
        )
        return _same_lattice(m, params)

    def __repr__(self) -> str:
        return (
            f"Gaussian(low={self.low:.6g}, high={self.high:.6g}, epsilon={self.epsilon:.6g}, "
            f"delta={self.delta:.3g}, sigma={self.sigma:.6g})"
        )


# --------------------------------------------------------- composing noise
_NOISE_STEPS = 256  # lattice steps per standard deviation of the composition example


def two_level_gaussian_mean(
    values: Any, low: float, high: float, *, sigma1: float = 1.0, sigma2: float = 1.0,
    delta: float = 1e-6, rng: randomness.RNGLike = None, target: Target = "population",
) -> MeanEstimate:
    """The seed's two-level construction: Gaussian noise added twice, then the mean.

    Level 1 (the device) clamps ``x`` to ``[low, high]``, randomly rounds it
    to a lattice of step ``c1 = sigma1 / 256`` and adds discrete Gaussian
    noise of standard deviation ``sigma1`` (exact integer sampling):
    ``y1 = c1 (round(x / c1) + Z1)``. Level 2 (e.g. a relay, before anything
    is stored) adds independent noise of standard deviation ``sigma2`` the
    same way: ``y2 = y1 + c2 Z2``. Both noises and the rounding have mean 0,
    so ``mean(y2)`` is unbiased for the mean of the clamped values, with
    fixed-population variance ``(sigma1^2 + sigma2^2 + rounding) / n``: the
    standard error for ``target="respondents"``. The default target,
    ``"population"``, takes the sample standard error of ``y2`` (it adds the
    spread of the values; see :class:`~deniable.MeanEstimate`).

    Composing noise: ``y2`` alone is (for continuous noise) the Gaussian
    mechanism with ``sigma = sqrt(sigma1^2 + sigma2^2)``; the estimate's
    ``epsilon`` is that analytic-Gaussian epsilon at ``delta`` for
    sensitivity ``high - low`` (``inf`` when the noise is too small to give
    any). With small ``sigma`` this is an accuracy demonstration, not a
    privacy guarantee; use :class:`Gaussian` to calibrate noise to epsilon.

    With ``10**6`` values from N(42, 10), ``sigma1 = sigma2 = 1`` and the range
    ``[-60, 140]``, the mean is within 0.05 of 42.
    """
    owner = "two_level_gaussian_mean"
    target = check_target(target)
    lo, hi = check_range(low, high, owner)
    d = check_delta(delta, owner)
    sigmas = [check_real(s, name, owner) for name, s in (("sigma1", sigma1), ("sigma2", sigma2))]
    if min(sigmas) <= 0:
        raise ValueError(f"sigma1 and sigma2 must be positive for {owner}; got {sigmas}")
    x = np.clip(finite_values(values, owner), lo, hi)
    n = x.size
    if n < 2:
        raise ValueError(f"{owner} needs at least 2 values; got {n}")
    source = randomness.resolve(rng)
    table, unit_var = gaussian_noise(_NOISE_STEPS)
    c1, c2 = (s / _NOISE_STEPS for s in sigmas)
    position = x / c1
    frac = position - np.floor(position)
    y1 = c1 * (randomness.randomized_round(position, source) + table.sample(n, source))
    y2 = y1 + c2 * table.sample(n, source)
    per_user = (c1 * c1 + c2 * c2) * unit_var + c1 * c1 * float(np.mean(frac * (1 - frac)))
    total = math.hypot(*sigmas)
    sample_se = float(y2.std(ddof=1)) / math.sqrt(n)
    return MeanEstimate(
        mechanism="two-level Gaussian",
        epsilon=gaussian_epsilon(total / (hi - lo), d),
        delta=d,
        mean=float(y2.mean()),
        std_error=math.sqrt(per_user / n) if target == "respondents" else sample_se,
        sample_std_error=sample_se,
        n=n,
        low=lo,
        high=hi,
        target=target,
    )
