"""Integer noise on a lattice, with exactly accounted privacy loss.

:class:`~deniable.Laplace` and :class:`~deniable.Gaussian` cut the range
into ``N`` lattice steps, randomly round a clamped input to a lattice point
``i`` in ``[0, N]`` (unbiased) and add integer noise ``Z`` on ``[-K, K]``
with ``P(Z = z) = W[z] / 2**64`` for integers ``W`` summing to ``2**64``
(sampled exactly by an :class:`AliasTable`); the output is
``clamp(i + Z, N - K, K)``, the table's two end entries holding the tail
mass. The privacy loss is computed from these integers:

* Discrete Laplace (:func:`laplace_lattice`): ``32767 / (24 + eps)`` steps
  per noise scale ``(high-low)/eps`` (over 1000 for ``eps <= 8``), ``W`` the
  integers nearest a two-sided geometric with ratio ``r = exp(-eps/N)``,
  clamped ``24`` noise scales beyond the range (which moves the mean by less
  than ``exp(-24)`` noise scales). Epsilon is the exact maximum over outputs
  and lattice inputs of the probability ratio of these integers, rounded up;
  no float is ever inverted (Mironov 2012).
* Discrete Gaussian (:func:`gaussian_lattice`): ``sigma`` from the analytic
  Gaussian calibration (:func:`analytic_gaussian_sigma`, Balle & Wang 2018),
  cut 8 standard deviations beyond the range; ``delta`` is recomputed from
  the integers as the largest hockey-stick divergence
  ``sum_z max(0, P(z) - e^eps P(z - d))`` over lattice shifts ``d``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from deniable import _privacy as privacy
from deniable._randomness import TWO64, Source
from deniable.mechanisms._numeric.alias import AliasTable, integer_weights
from deniable.mechanisms._numeric.base import check_delta

__all__ = [
    "Lattice",
    "laplace_lattice",
    "gaussian_lattice",
    "gaussian_noise",
    "analytic_gaussian_sigma",
    "gaussian_epsilon",
    "unit_sigma",
]

_TABLE_BITS = 16
_LAPLACE_TAIL = 24.0  # noise scales kept beyond the range before clamping
_GAUSS_BITS = 14
_GAUSS_TAIL = 8.0  # standard deviations


@dataclass(frozen=True)
class Lattice:
    """Integer noise ``Z`` on ``[-K, K]`` for a range of ``N`` lattice steps."""

    steps: int  # N
    K: int
    weights: tuple[int, ...]  # 2K + 1 integers summing to 2**64
    table: AliasTable
    epsilon: float
    delta: float | None
    noise_variance: float  # Var Z in steps^2

    @property
    def probabilities(self) -> NDArray[np.float64]:
        return _probabilities(self.weights)

    def sample(self, n: int, source: Source, lazy: bool) -> NDArray[np.int32]:
        return self.table.sample(n, source, lazy)

    def pmf(self, position: int) -> NDArray[np.float64]:
        """``P(y = j)`` for ``j`` in ``[N - K, K]`` (outputs of ``clamp(i + Z)``), input ``i``."""
        lo_y, hi_y = self.steps - self.K, self.K
        y = np.clip(position + np.arange(-self.K, self.K + 1), lo_y, hi_y)
        pmf: NDArray[np.float64] = np.bincount(
            y - lo_y, weights=self.probabilities, minlength=hi_y - lo_y + 1
        ).astype(np.float64)
        return pmf


@lru_cache(maxsize=8)
def _probabilities(weights: tuple[int, ...]) -> NDArray[np.float64]:
    return np.array([w / TWO64 for w in weights])


def _finish(weights: list[int], K: int) -> tuple[AliasTable, float]:
    """Alias table over ``z = -K..K`` and ``Var Z``."""
    z = np.arange(-K, K + 1, dtype=np.float64)
    p = np.array(weights, dtype=np.float64) / 2.0**64
    bits_needed = _TABLE_BITS if 2 * K + 1 > 1 << _GAUSS_BITS else _GAUSS_BITS
    return AliasTable(weights, bits_needed, offset=K), float(np.dot(p, z * z))


def _pure_epsilon(weights: list[int], N: int, K: int) -> float:
    """Exact max over outputs ``y`` and lattice inputs ``i, i'`` of ``P(y|i) / P(y|i')``.

    Interior outputs see ``W[y - i]`` for ``i`` in ``[0, N]``; ``W`` is
    unimodal on ``(-K, K)`` (checked), so the largest is the entry nearest 0
    and the smallest an end of the window. The clamped end outputs see tail
    sums, monotone in ``i``. Candidates are ranked in floats and the top
    ones evaluated exactly as integer fractions.
    """
    w = np.array([float(v) for v in weights])
    inner = w[1:-1]
    half = inner.size // 2
    if not (np.all(np.diff(inner[: half + 1]) >= 0) and np.all(np.diff(inner[half:]) <= 0)):
        raise AssertionError("lattice weights are not unimodal")
    tail_steps = K - N
    y = np.arange(-tail_steps + 1, N + tail_steps)
    peak = np.clip(0, y - N, y) + K
    low_end = np.minimum(w[y - N + K], w[y + K])
    ratio = w[peak] / low_end
    best = Fraction(0)
    for j in np.flatnonzero(ratio >= ratio.max() * (1 - 1e-9)):
        yy = int(y[j])
        lo_idx = yy - N + K if w[yy - N + K] <= w[yy + K] else yy + K
        best = max(best, Fraction(weights[int(peak[j])], weights[lo_idx]))
    edge = Fraction(sum(weights[: K - tail_steps + 1]), weights[0])  # y = -tail: i = 0 vs i = N
    return privacy.ln_up(max(best, edge))


@lru_cache(maxsize=8)
def laplace_lattice(epsilon: float) -> Lattice:
    """Discrete Laplace on ``N`` steps per range, realising at most ``epsilon`` exactly."""
    N = max(1, int(((1 << (_TABLE_BITS - 1)) - 1) / (1 + _LAPLACE_TAIL / epsilon)))
    target = epsilon
    for _ in range(20):
        r = math.exp(-target / N)
        K = N + math.ceil(_LAPLACE_TAIL * N / epsilon)
        z = np.abs(np.arange(-K, K + 1, dtype=np.float64))
        p = (1 - r) / (1 + r) * np.exp(-target / N * z)
        p[0] = p[-1] = math.exp(-target / N * K) / (1 + r)  # tails |z| >= K lumped at the ends
        weights = integer_weights(p, K)
        realised = _pure_epsilon(weights, N, K)
        if realised <= epsilon:
            table, var = _finish(weights, K)
            return Lattice(N, K, tuple(weights), table, realised, None, var)
        target -= (realised - epsilon) + 1e-12 * epsilon
    raise ValueError(f"could not realise epsilon={epsilon} on the Laplace lattice")


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Smallest ``sigma`` with ``Phi(D/2s - eps s/D) - e^eps Phi(-D/2s - eps s/D) <= delta``.

    The analytic Gaussian mechanism of Balle & Wang (ICML 2018), valid for
    every ``epsilon > 0``; ``D`` is the L2 sensitivity.
    """
    eps = privacy.check_epsilon(epsilon, owner="analytic_gaussian_sigma")
    d = check_delta(delta, "analytic_gaussian_sigma")
    return sensitivity * unit_sigma(eps, d)


def _gauss_delta(eps: float, sigma: float) -> float:
    """``Phi(1/2s - eps s) - e^eps Phi(-1/2s - eps s)``: the delta of noise ``sigma`` at ``eps`` (sensitivity 1)."""
    from scipy import special

    a = 1 / (2 * sigma) - eps * sigma
    b = -1 / (2 * sigma) - eps * sigma
    return float(special.ndtr(a) - math.exp(eps + special.log_ndtr(b)))


def unit_sigma(eps: float, delta: float) -> float:
    """The analytic-Gaussian ``sigma`` for sensitivity 1: the root of ``_gauss_delta(eps, sigma) = delta``."""
    from scipy import optimize

    f = lambda log_s: _gauss_delta(eps, math.exp(log_s)) - delta  # noqa: E731
    return math.exp(optimize.brentq(f, math.log(1e-8), math.log(1e8), xtol=1e-14, rtol=1e-14))


def gaussian_epsilon(unit_sigma: float, delta: float) -> float:
    """Analytic-Gaussian epsilon of noise ``unit_sigma`` (in units of the sensitivity) at ``delta``.

    ``math.inf`` when even epsilon = 700 leaves more than ``delta``.
    """
    from scipy import optimize

    if _gauss_delta(700.0, unit_sigma) > delta:
        return math.inf
    return float(optimize.brentq(lambda e: _gauss_delta(e, unit_sigma) - delta, 1e-12, 700.0, xtol=1e-13))


def _approx_delta(weights: list[int], N: int, eps: float) -> float:
    """Largest hockey-stick divergence ``sum_z max(0, P(z) - e^eps P(z - d))`` over shifts.

    Computed for ``d = N`` (the worst case for Gaussian noise, whose privacy
    loss grows with the shift) and 63 other shifts as a check; the output
    clamp is post-processing and can only lower it. Rounded up by a relative
    1e-9 for float summation.
    """
    p = np.array([float(v) for v in weights]) / 2.0**64
    growth = math.exp(eps)
    shifts = sorted({N, *np.linspace(1, N, 64).astype(int).tolist()})
    worst = 0.0
    for d in shifts:
        excess = p.copy()
        excess[d:] -= growth * p[:-d]
        worst = max(worst, float(np.sum(np.maximum(excess, 0.0))))
    return worst * (1 + 1e-9)


@lru_cache(maxsize=8)
def gaussian_lattice(unit_sigma: float, epsilon: float, delta: float) -> Lattice:
    cap = (1 << (_GAUSS_BITS - 1)) - 1
    sigma = unit_sigma  # in units of the range (sensitivity 1)
    for _ in range(60):
        per_sigma = cap / (1 / sigma + _GAUSS_TAIL)
        N = max(1, round(per_sigma / sigma))
        s_steps = sigma * N
        K = N + math.ceil(_GAUSS_TAIL * s_steps)
        weights = _gaussian_weights(s_steps, K)
        realised = _approx_delta(weights, N, epsilon)
        if realised <= delta:
            table, var = _finish(weights, K)
            return Lattice(N, K, tuple(weights), table, epsilon, realised, var)
        sigma *= 1.002
    raise ValueError(
        f"could not realise (epsilon={epsilon}, delta={delta}) on the Gaussian lattice; its "
        "64-bit weights reach about 9 sigma, which supports epsilon up to about 20"
    )


def _gaussian_weights(s_steps: float, K: int) -> list[int]:
    """Discrete Gaussian (sd ``s_steps``) on ``[-K, K]``, tails lumped at the ends, as integers."""
    extra = math.ceil(10 * s_steps)
    z = np.arange(-K - extra, K + extra + 1, dtype=np.float64)
    dens = np.exp(-0.5 * (z / s_steps) ** 2)
    dens /= dens.sum()
    p = dens[extra:-extra].copy()
    p[0] += dens[:extra].sum()
    p[-1] += dens[-extra:].sum()
    return integer_weights(p, K)


@lru_cache(maxsize=4)
def gaussian_noise(s_steps: int) -> tuple[AliasTable, float]:
    """Discrete Gaussian with sd ``s_steps`` lattice steps, cut 8 sd out: ``(table, Var Z)``."""
    K = math.ceil(_GAUSS_TAIL * s_steps)
    return _finish(_gaussian_weights(s_steps, K), K)
