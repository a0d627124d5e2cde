"""PCKV's perturbation parameters, its privacy, and its estimators (Gu et al., USENIX Security 2020).

A PCKV report about key ``k`` is ``+1``, ``-1`` or nothing (``0``). With ``a`` the probability that the
sampled key is reported, ``p`` the probability that its value keeps its sign given that, and ``b`` the
probability that a key that was not sampled is reported (with a fair random sign):

* ``P(y_k = +1) = pi+ a p + pi- a (1 - p) + (1 - pi+ - pi-) b / 2`` (and symmetrically for ``-1``), where
  ``pi+`` (``pi-``) is the share of respondents whose sampled pair is ``<k, +1>`` (``<k, -1>``) after the
  value's discretization; with sets of at most ``ell`` pairs, ``pi+ + pi- = f_k / ell`` and
  ``pi+ - pi- = f_k m_k / ell`` (``f_k``: the share holding ``k``; ``m_k``: their mean value).

**Estimators** (the paper's). With ``n1``, ``n2`` the reports of ``+1``, ``-1`` at key ``k`` among ``n``:
``f^_k = ell ((n1 + n2) / n - b) / (a - b)`` (unbiased); the counts ``N1``, ``N2`` of respondents whose
sampled pair is ``<k, +1>``, ``<k, -1>`` solve the 2x2 system of the expectations, and the mean is
``m^_k = (N1' - N2') / N`` with ``N = n clip(f^_k, 1/n, 1) / ell`` and ``N1'``, ``N2'`` clipped to
``[1, N]`` (so ``m^_k`` lies in ``[-1, 1]``). Its numerator ``s^_k = ell (n1 - n2) / (n a (2p - 1))``
estimates ``f_k m_k`` without bias.

**Standard errors** (respondents drawn from a population; each report is then independent and the
per-report moments are ``lambda = P(y_k != 0)``, ``mu = E[y_k]``, with ``Var |y_k| = lambda (1 - lambda)``,
``Var y_k = lambda - mu^2``, ``Cov(|y_k|, y_k) = mu (1 - lambda)``): ``Var f^ = ell^2 lambda (1 - lambda) /
(n (a - b)^2)``, ``Var s^ = ell^2 (lambda - mu^2) / (n a^2 (2p - 1)^2)`` and, by the delta method for the
ratio ``m = s / f``, ``Var m^ ~ (Var s^ - 2 m Cov(f^, s^) + m^2 Var f^) / f^2``, plugged in at the
observed ``lambda``, ``mu`` and at the estimates.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from deniable import _intervals as intervals
from deniable._privacy import ln_up
from deniable._results import ConfidenceInterval, Result, ResultTable, check_level

__all__ = [
    "KeyValueEstimate",
    "ue_parameters",
    "grr_parameters",
    "ue_epsilon",
    "grr_epsilon",
    "rates",
    "estimate_counts",
    "variances",
    "COLUMNS",
    "columns_on_range",
]

COLUMNS = ("estimate", "std_error", "ci_low", "ci_high", "mean", "mean_std_error", "mean_ci_low", "mean_ci_high")
"""The per-key columns of :func:`columns_on_range`: the share's estimate, standard error and interval, then the
mean's."""

UE_BITS = 32
_ONE = 1 << UE_BITS


def ue_epsilon(keep: int, agree: int, other: int) -> float:
    """PCKV-UE's privacy loss from its integers (probabilities in units of ``2**-32``), rounded up.

    The report's likelihood is ``prod_i q(y_i)`` times ``R(y_k) = r(y_k) / q(y_k)`` averaged over the padded
    pairs, so two inputs' ratio is at most ``max R / min R`` over ``R(v*) = agree / other``,
    ``R(-v*) = (keep - agree) / other`` and ``R(0) = (1 - keep) / (1 - 2 other)``; whatever ``ell``.
    """
    ratios = [Fraction(agree, other), Fraction(keep - agree, other), Fraction(_ONE - keep, _ONE - 2 * other)]
    return ln_up(max(ratios) / min(ratios))


def grr_epsilon(agree: int, flip: int, other: int, ell: int) -> float:
    """PCKV-GRR's privacy loss with padding and sampling to ``ell`` pairs, rounded up.

    A report ``<j, s>`` has probability ``P(<j, s> | e)`` (``agree``, ``flip`` or ``other``, over their sum's
    denominator) from each padded pair ``e``; at most one of the ``ell`` pairs has key ``j``, the others give
    ``other`` each, so the ratio of two inputs is at most
    ``(max + (ell - 1) other) / (min + (ell - 1) other)`` (the amplification by sampling).
    """
    top, bottom = max(agree, flip, other), min(agree, flip, other)
    return ln_up(Fraction(top + (ell - 1) * other, bottom + (ell - 1) * other))


def _exp(epsilon: float) -> Decimal:
    with localcontext() as ctx:
        ctx.prec = 60
        return Decimal(epsilon).exp()


def _realised(epsilon: float, realised: float, owner: str) -> None:
    if realised < 0.99 * epsilon:
        raise ValueError(
            f"epsilon={epsilon!r} cannot be realised by {owner} with its integer probabilities "
            f"(it would give {realised:.4g}); pass a smaller epsilon"
        )


def ue_parameters(epsilon: float) -> tuple[int, int, int]:
    """``(keep, agree, other)`` numerators over ``2**32`` of the paper's PCKV-UE allocation.

    ``a = 1/2``, ``b = 2 / (e^eps + 3)`` (``other = b / 2``), ``p = e^eps / (e^eps + 1)`` (``agree = a p``): the
    key's budget ``eps1 = ln((e^eps + 1) / 2)`` and the value's ``eps2 = eps``, which compose to ``eps``.
    ``agree`` is rounded down until the realised epsilon is at most ``epsilon``.
    """
    e = _exp(epsilon)
    keep = _ONE // 2
    other = math.ceil(Decimal(_ONE) / (e + 3))
    agree = int(Decimal(_ONE) * e / (2 * (e + 1)))
    if not 0 < other < keep // 2 or agree <= keep - agree:
        raise ValueError(f"epsilon={epsilon!r} cannot be realised by PCKV-UE with 32-bit probabilities")
    while ue_epsilon(keep, agree, other) > epsilon:
        agree -= 1
    _realised(epsilon, ue_epsilon(keep, agree, other), "PCKV-UE")
    return keep, agree, other


def grr_parameters(epsilon: float, cells: int, ell: int) -> tuple[int, int, int]:
    """``(agree, flip, other)`` numerators of the paper's PCKV-GRR allocation over ``cells = d + ell`` keys.

    ``e^eps2 = ell (e^eps - 1) + 1``, ``p = e^eps2 / (e^eps2 + 1)`` and ``e^eps1 = (e^eps2 + 1) / 2``, so that
    ``a (1 - p) = b / 2`` (``flip = other``) and ``a p / (b / 2) = e^eps2``: the amplification by sampling
    brings the report's ``eps2`` down to ``eps``. The denominator is ``agree + flip + 2 (cells - 1) other``.
    """
    e2 = ell * (_exp(epsilon) - 1) + 1
    for bits in (32, 63):
        other = int(Decimal(1 << bits) / (e2 + 2 * cells - 1))
        if other >= 1 << 16:
            break
    if other < 1:
        raise ValueError(f"epsilon={epsilon!r} is too large for PCKV-GRR's 63-bit probabilities")
    agree = int(e2 * other)
    while agree > other and grr_epsilon(agree, other, other, ell) > epsilon:
        agree -= 1
    _realised(epsilon, grr_epsilon(agree, other, other, ell), "PCKV-GRR")
    return agree, other, other


def rates(variant: str, params: dict[str, int], cells: int) -> tuple[float, float, float]:
    """``(a, b, p)``: the sampled key's report rate, another key's, and the kept sign's, as floats."""
    if variant == "ue":
        keep, agree, other = params["keep_numerator"], params["agree_numerator"], params["other_numerator"]
        return keep / _ONE, 2 * other / _ONE, agree / keep
    agree, flip, other = params["agree_numerator"], params["flip_numerator"], params["other_numerator"]
    total = agree + flip + 2 * (cells - 1) * other
    return (agree + flip) / total, 2 * other / total, agree / (agree + flip)


def estimate_counts(
    plus: NDArray[np.int64], minus: NDArray[np.int64], n: int, ell: int, abp: tuple[float, float, float]
) -> dict[str, NDArray[np.float64]]:
    """The paper's estimates from the per-key counts of ``+1`` and ``-1`` reports, with standard errors."""
    a, b, p = abp
    n1, n2 = plus.astype(float), minus.astype(float)
    freq = ell * ((n1 + n2) / n - b) / (a - b)
    sums = ell * (n1 - n2) / (n * a * (2 * p - 1))
    clipped = np.clip(freq, 1 / n, 1.0)
    count = n * clipped / ell
    both = n * freq / ell  # N1 + N2, from the 2x2 system of the expectations
    diff = n * sums / ell  # N1 - N2
    n_plus = np.minimum(np.maximum((both + diff) / 2, 1.0), count)
    n_minus = np.minimum(np.maximum((both - diff) / 2, 1.0), count)
    means = (n_plus - n_minus) / count
    var_f, var_s, cov = _moments((n1 + n2) / n, (n1 - n2) / n, n, ell, abp)
    var_m = (var_s - 2 * means * cov + means**2 * var_f) / clipped**2
    return {
        "frequencies": freq,
        "frequency_se": np.sqrt(var_f),
        "sums": sums,
        "sum_se": np.sqrt(var_s),
        "means": means,
        "mean_se": np.sqrt(np.maximum(var_m, 0.0)),
    }


def _moments(
    lam: Any, mu: Any, n: int, ell: int, abp: tuple[float, float, float]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """``Var f^``, ``Var s^`` and their covariance from the per-report moments ``lambda``, ``mu``."""
    a, b, p = abp
    lam, mu = np.asarray(lam, dtype=float), np.asarray(mu, dtype=float)
    cf, cs = ell / (a - b), ell / (a * (2 * p - 1))
    return (cf**2 * lam * (1 - lam) / n, cs**2 * np.maximum(lam - mu**2, 0.0) / n, cf * cs * mu * (1 - lam) / n)


def variances(
    frequencies: Any, means: Any, n: int, ell: int, abp: tuple[float, float, float]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """``(Var f^, Var s^, Var m^)`` at the truth (sets of at most ``ell`` pairs; ``Var m^`` by the delta method)."""
    a, b, p = abp
    f, m = np.asarray(frequencies, dtype=float), np.asarray(means, dtype=float)
    lam = b + (a - b) * f / ell
    mu = a * (2 * p - 1) * f * m / ell
    var_f, var_s, cov = _moments(lam, mu, n, ell, abp)
    with np.errstate(divide="ignore", invalid="ignore"):
        var_m = (var_s - 2 * m * cov + m**2 * var_f) / f**2
    return var_f, var_s, var_m


@dataclass(frozen=True, eq=False)
class KeyValueEstimate(Result):
    """Each key's share of respondents holding it and the mean of its values, with standard errors.

    What :meth:`PCKV.estimate <deniable.PCKV.estimate>` returns; the arrays are aligned with ``keys``.
    Standard errors are for respondents drawn from a population; the mean's by the delta method.

    Parameters
    ----------
    mechanism : str
        ``"PCKV-UE"`` or ``"PCKV-GRR"``.
    epsilon : float
        The privacy loss of one report.
    keys : tuple
        The declared keys.
    frequencies, std_errors : ndarray
        ``f^_k`` (unbiased; may fall outside ``[0, 1]``) and its standard error.
    means, mean_std_errors : ndarray
        The paper's clipped ratio estimate ``m^_k`` (in ``[-1, 1]``) and its delta-method standard error.
    sums, sum_std_errors : ndarray
        ``s^_k``, the unbiased estimate of ``f_k m_k`` (the mean's numerator), and its standard error.
    n, ell : int
        The number of reports and the padding length.

    Examples
    --------
    >>> import numpy as np
    >>> import deniable as dn
    >>> m = dn.PCKV(["mail", "maps"], epsilon=3.0, max_pairs=2, variant="grr")
    >>> est = m.estimate(m.privatize_many([{"mail": 0.4}, {"maps": -0.5, "mail": 1.0}] * 5000, rng=1))
    >>> est.keys
    ('mail', 'maps')
    >>> low, high = est.confidence_interval(0.95, of="mean")
    >>> bool(np.all((-1 <= low) & (low <= est.means) & (est.means <= high) & (high <= 1)))
    True
    """

    mechanism: str
    epsilon: float
    keys: tuple[Any, ...]
    frequencies: NDArray[np.float64]
    std_errors: NDArray[np.float64]
    means: NDArray[np.float64]
    mean_std_errors: NDArray[np.float64]
    sums: NDArray[np.float64]
    sum_std_errors: NDArray[np.float64]
    n: int
    ell: int

    def confidence_interval(
        self, confidence_level: float = 0.95, method: str | None = None, *, of: str = "frequency"
    ) -> ConfidenceInterval:
        """Per-key normal interval at ``confidence_level`` of the ``"frequency"`` (``f +- z SE``) or of the
        ``"mean"`` (``m +- z SE``, clipped to ``[-1, 1]``)."""
        level = check_level(confidence_level)
        self._method(method)
        if of == "frequency":
            low, high = intervals.normal_interval(self.frequencies, self.std_errors, 1 - level)
            return ConfidenceInterval(low, high)
        if of != "mean":
            raise ValueError(f"of must be 'frequency' or 'mean'; got {of!r}")
        low, high = intervals.normal_interval(self.means, self.mean_std_errors, 1 - level)
        return ConfidenceInterval(np.clip(low, -1.0, 1.0), np.clip(high, -1.0, 1.0))

    def _table(self, confidence_level: float, method: str | None) -> ResultTable:
        low, high = self.confidence_interval(confidence_level, method)
        mean_low, mean_high = self.confidence_interval(confidence_level, method, of="mean")
        columns = {
            "estimate": self.frequencies,
            "std_error": self.std_errors,
            "ci_low": low,
            "ci_high": high,
            "mean": self.means,
            "mean_std_error": self.mean_std_errors,
            "mean_ci_low": mean_low,
            "mean_ci_high": mean_high,
        }
        fields = {
            "mechanism": self.mechanism,
            "epsilon": self.epsilon,
            "n": self.n,
            "ell": self.ell,
            "target": "population",
        }
        return ResultTable(fields, columns, "key", self.keys, "keys")

    def _caption(self) -> str:
        return f"{self.mechanism}: {len(self.keys)} keys, ell={self.ell}, n={self.n}"


def columns_on_range(est: KeyValueEstimate, level: float, low: float = -1.0, high: float = 1.0) -> dict[str, Any]:
    """Each key's share and mean with standard errors and normal intervals at ``level`` (:data:`COLUMNS`), the
    means mapped from PCKV's ``[-1, 1]`` onto ``[low, high]`` (``x = low + (m + 1) (high - low) / 2``; the
    standard error times ``(high - low) / 2``).

    Examples
    --------
    >>> import deniable as dn
    >>> m = dn.PCKV(["mail", "maps"], epsilon=3.0, max_pairs=1, variant="grr")
    >>> est = m.estimate(m.privatize_many([{"mail": 1.0}, {"maps": -1.0}] * 4000, rng=2))
    >>> cols = columns_on_range(est, 0.95, low=0, high=10)  # values of 0 to 10 seconds
    >>> [round(float(x)) for x in cols["mean"]]
    [10, 0]
    >>> bool(cols["mean_ci_low"][0] <= cols["mean"][0] <= cols["mean_ci_high"][0] <= 10)
    True
    """
    half = (high - low) / 2
    low_f, high_f = est.confidence_interval(level)
    low_m, high_m = est.confidence_interval(level, of="mean")
    values = (est.frequencies, est.std_errors, low_f, high_f, low + (est.means + 1) * half,
              est.mean_std_errors * half, low + (low_m + 1) * half, low + (high_m + 1) * half)
    return dict(zip(COLUMNS, values, strict=True))
